"""Masked-language-model evaluation: BERT-style masking, a fixed masked evaluation set, perplexity.

The target-language adaptation study (seed 003) tracks MLM perplexity on a Dutch validation
set and on a multilingual (XNLI) set every 50 steps. Perplexities are only comparable across
steps and runs when the *same* tokens are masked in the *same* way every time, so the
evaluation set is masked once with its own seed (`FixedMasking`) and reused; `perplexity`
then is exp of the token-weighted mean cross-entropy over every masked token of the set.

Everything here is loop-agnostic: the training loop draws fresh masks per batch with
`mask_tokens` and its own generator, and calls `perplexity(model, fixed.batches(16), device)`
every K steps.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Iterable, Iterator, NamedTuple, Sequence

import torch
import torch.nn.functional as F
from torch import nn

from xlt.core.errors import XltError
from xlt.core.io import read_jsonl
from xlt.core.metrics import example_set
from xlt.core.models import from_pretrained
from xlt.core.padding import padded_width
from xlt.families.adapt.masked_head import IGNORE_INDEX, masked_logits  # noqa: F401 (IGNORE_INDEX re-exported)


@dataclass(frozen=True)
class TokenizerInfo:
    """What masking needs to know about a tokenizer, without holding the tokenizer.

    `random_token_ids` are the ids a masked position may be replaced with in the 10% "random
    token" case: the whole vocabulary minus the special tokens, so a [CLS] / [PAD] / <s> is never
    planted inside a sentence (transformers' collator samples the whole vocabulary instead).
    """

    mask_token_id: int
    pad_token_id: int | None
    vocab_size: int
    special_ids: tuple[int, ...]

    @cached_property  # built once: the training loop masks every step, mBERT has ~120k ids
    def random_token_ids(self) -> torch.Tensor:
        special = set(self.special_ids)
        return torch.tensor([i for i in range(self.vocab_size) if i not in special], dtype=torch.long)

    @classmethod
    def from_tokenizer(cls, tokenizer) -> "TokenizerInfo":
        if tokenizer.mask_token_id is None:
            raise XltError(
                f"tokenizer {getattr(tokenizer, 'name_or_path', '')!r} has no mask token; "
                "masked-LM perplexity needs a tokenizer of a masked LM (BERT, RoBERTa/XLM-R, DistilBERT)"
            )
        return cls(
            mask_token_id=int(tokenizer.mask_token_id),
            pad_token_id=None if tokenizer.pad_token_id is None else int(tokenizer.pad_token_id),
            vocab_size=len(tokenizer),
            special_ids=tuple(sorted(int(i) for i in tokenizer.all_special_ids)),
        )


def mask_tokens(
    input_ids: torch.Tensor,
    special_tokens_mask: torch.Tensor,
    tokenizer_info: TokenizerInfo,
    generator: torch.Generator,
    mlm_probability: float = 0.15,
) -> tuple[torch.Tensor, torch.Tensor]:
    """BERT masking: pick each maskable token with `mlm_probability`; of the picked ones,
    80% become the mask token, 10% a random non-special token, 10% stay unchanged.

    Returns (masked_input_ids, labels) where labels hold the original id at picked positions
    and -100 everywhere else. Special tokens (special_tokens_mask == 1) and padding
    (input_ids == pad id) are never picked. Random draws come only from `generator`, and are
    made on the CPU, so the same generator state gives the same masks on any device.
    """
    if not 0.0 < mlm_probability < 1.0:
        raise XltError(f"mlm_probability must be in (0, 1), got {mlm_probability}")
    if input_ids.shape != special_tokens_mask.shape:
        raise ValueError(
            f"input_ids {tuple(input_ids.shape)} and special_tokens_mask "
            f"{tuple(special_tokens_mask.shape)} differ in shape"
        )
    device = input_ids.device
    ids = input_ids.detach().to("cpu", torch.long)
    maskable = special_tokens_mask.detach().to("cpu") == 0
    if tokenizer_info.pad_token_id is not None:
        maskable &= ids != tokenizer_info.pad_token_id

    # Same draw order as transformers' DataCollatorForLanguageModeling: pick, then 80%, then
    # half of the rest; each draw covers the full tensor so the stream is shape-determined.
    picked = (torch.rand(ids.shape, generator=generator) < mlm_probability) & maskable
    to_mask = (torch.rand(ids.shape, generator=generator) < 0.8) & picked
    to_random = (torch.rand(ids.shape, generator=generator) < 0.5) & picked & ~to_mask
    candidates = tokenizer_info.random_token_ids
    random_ids = candidates[torch.randint(len(candidates), ids.shape, generator=generator)]

    labels = torch.where(picked, ids, torch.full_like(ids, IGNORE_INDEX))
    masked = ids.clone()
    masked[to_mask] = tokenizer_info.mask_token_id
    masked[to_random] = random_ids[to_random]
    return masked.to(device), labels.to(device)


class FixedMasking:
    """An evaluation set masked exactly once, so every evaluation sees identical masks.

    Sentences are tokenised one by one (truncated to `max_length`, no padding) and masked as
    one concatenated stream with a generator seeded by `seed`; the masks therefore depend only
    on (seed, texts in order, tokenizer, max_length, mlm_probability), never on batch size,
    device or how often `batches` is called. `fingerprint` is a hash of the masked set to
    record in metrics metadata: equal fingerprints mean identical masks.
    """

    def __init__(
        self, tokenizer, texts: Sequence[str], seed: int, mlm_probability: float = 0.15, max_length: int = 128
    ):
        if len(texts) == 0:
            raise XltError("cannot build a masked evaluation set from zero sentences; check the data file")
        self.info = TokenizerInfo.from_tokenizer(tokenizer)
        self.seed = int(seed)
        self.mlm_probability = mlm_probability
        enc = tokenizer(
            list(texts),
            truncation=True,
            max_length=max_length,
            padding=False,
            return_special_tokens_mask=True,
            return_attention_mask=False,
            return_token_type_ids=False,
        )
        lengths = [len(ids) for ids in enc["input_ids"]]
        flat_ids = torch.tensor([t for ids in enc["input_ids"] for t in ids], dtype=torch.long)
        flat_special = torch.tensor([t for m in enc["special_tokens_mask"] for t in m], dtype=torch.long)
        generator = torch.Generator().manual_seed(self.seed)
        masked, labels = mask_tokens(flat_ids, flat_special, self.info, generator, mlm_probability)
        self.input_ids: list[torch.Tensor] = list(masked.split(lengths))
        self.labels: list[torch.Tensor] = list(labels.split(lengths))
        self.num_masked = int((labels != IGNORE_INDEX).sum())
        if self.num_masked == 0:
            raise XltError(
                f"masking {len(texts)} sentences with probability {mlm_probability} (seed {seed}) "
                "masked no token; use more or longer sentences"
            )

    def __len__(self) -> int:
        return len(self.input_ids)

    @property
    def fingerprint(self) -> str:
        digest = hashlib.sha256()
        for ids, labels in zip(self.input_ids, self.labels):
            digest.update(ids.numpy().tobytes())
            digest.update(labels.numpy().tobytes())
            digest.update(b"|")
        return digest.hexdigest()[:16]

    def sentence_fingerprints(self) -> list[str]:
        """One short hash per sentence of its masked input and labels: two evaluations scored
        the same sentences with the same masks exactly when these lists are equal (what a
        paired comparison of two models' perplexities needs; another tokenizer masks others)."""
        out = []
        for ids, labels in zip(self.input_ids, self.labels):
            digest = hashlib.sha256(ids.numpy().tobytes())
            digest.update(b"|")
            digest.update(labels.numpy().tobytes())
            out.append(digest.hexdigest()[:12])
        return out

    def batches(self, batch_size: int = 16, pad_to_multiple_of: int | None = None) -> list[dict[str, torch.Tensor]]:
        """Padded CPU batches {input_ids, attention_mask, labels}, in input order, each as wide as
        its longest sentence (rounded up to `pad_to_multiple_of`: xlt.core.padding).

        No token_type_ids: BERT defaults them to zeros and DistilBERT does not accept them.
        """
        pad = self.info.pad_token_id if self.info.pad_token_id is not None else 0
        out = []
        for start in range(0, len(self), batch_size):
            ids = self.input_ids[start : start + batch_size]
            labels = self.labels[start : start + batch_size]
            width = padded_width(max(len(x) for x in ids), pad_to_multiple_of)
            input_ids = torch.full((len(ids), width), pad, dtype=torch.long)
            label_t = torch.full((len(ids), width), IGNORE_INDEX, dtype=torch.long)
            attention = torch.zeros((len(ids), width), dtype=torch.long)
            for row, (x, y) in enumerate(zip(ids, labels)):
                input_ids[row, : len(x)] = x
                label_t[row, : len(y)] = y
                attention[row, : len(x)] = 1
            out.append({"input_ids": input_ids, "attention_mask": attention, "labels": label_t})
        return out


class PerplexityResult(NamedTuple):
    perplexity: float  # exp(loss); inf when the loss overflows
    tokens: int  # masked tokens scored
    loss: float  # mean cross-entropy per masked token (nats)
    # with per_sentence=True, per sentence of the batches in order: its summed masked-token
    # cross-entropy (nats) and its number of masked tokens (0 and 0 where none is masked)
    sentence_loss: tuple[float, ...] = ()
    sentence_tokens: tuple[int, ...] = ()


@torch.no_grad()
def perplexity(
    model: nn.Module,
    masked_batches: Iterable[dict[str, torch.Tensor]],
    device: torch.device | str | None = None,
    per_sentence: bool = False,
) -> PerplexityResult:
    """exp(mean cross-entropy over all masked tokens of the set), token-weighted.

    Summing the per-token losses and dividing once by the total count gives every masked
    token equal weight (a mean of per-batch means would overweight batches with few masks).
    The model runs in eval mode (dropout off; the seed study left it on, see its A.4) and is
    put back in its previous mode. Works for any AutoModelForMaskedLM: only input_ids and
    attention_mask are passed; the vocabulary head runs on the masked positions only where the
    model's layout allows (`masked_logits`), else the full logits are read.

    `per_sentence` also returns every sentence's summed loss and masked-token count (the
    per-example outputs the bootstrap resamples); the set's perplexity is computed exactly as
    without it, so recorded values do not change.
    """
    device = torch.device(device) if device is not None else next(model.parameters()).device
    was_training = model.training
    model.eval()
    total_loss = 0.0
    total_tokens = 0
    sentence_loss: list[float] = []
    sentence_tokens: list[int] = []
    try:
        for batch in masked_batches:
            labels = batch["labels"].to(device)
            if not (labels != IGNORE_INDEX).any():
                if per_sentence:
                    sentence_loss += [0.0] * labels.shape[0]
                    sentence_tokens += [0] * labels.shape[0]
                continue
            # only masked positions are scored (and projected); float32 so half-precision models sum stably
            logits, targets = masked_logits(
                model, batch["input_ids"].to(device), batch["attention_mask"].to(device), labels
            )
            selected = labels != IGNORE_INDEX
            loss_sum = F.cross_entropy(logits.float(), targets, reduction="sum")
            total_loss += float(loss_sum)
            total_tokens += int(selected.sum())
            if per_sentence:
                token_loss = F.cross_entropy(logits.float(), targets, reduction="none")
                rows = selected.nonzero()[:, 0]  # row-major: the order of masked_logits' rows
                by_row = torch.zeros(labels.shape[0], dtype=torch.float64, device=device)
                by_row.index_add_(0, rows, token_loss.double())
                sentence_loss += by_row.tolist()
                sentence_tokens += selected.sum(dim=1).tolist()
    finally:
        model.train(was_training)
    if total_tokens == 0:
        raise XltError("the evaluation batches contain no masked token; nothing to compute perplexity on")
    mean_loss = total_loss / total_tokens
    try:
        ppl = math.exp(mean_loss)
    except OverflowError:
        ppl = math.inf
    return PerplexityResult(
        perplexity=ppl,
        tokens=total_tokens,
        loss=mean_loss,
        sentence_loss=tuple(sentence_loss),
        sentence_tokens=tuple(sentence_tokens),
    )


def perplexity_examples(result: PerplexityResult, masking: FixedMasking, **dims) -> dict:
    """The per-example outputs of one perplexity evaluation (`perplexity(..., per_sentence=True)`
    on `masking`'s batches): per sentence its summed loss, masked tokens and mask hash, with
    the mask seed, in the `<metrics>.examples.jsonl.gz` convention (xlt.core.metrics)."""
    if len(result.sentence_loss) != len(masking):
        raise ValueError(
            f"{len(result.sentence_loss)} per-sentence losses for {len(masking)} sentences: "
            "evaluate with per_sentence=True on this masking's batches"
        )
    return example_set(
        "perplexity",
        "perplexity",
        loss=list(result.sentence_loss),
        tokens=list(result.sentence_tokens),
        masks=masking.sentence_fingerprints(),
        mask_seed=masking.seed,
        **dims,
    )


def load_masked_lm(name_or_path: str) -> nn.Module:
    """AutoModelForMaskedLM by hub id or local directory (remote code off, as in xlt.core.models)."""
    from transformers import AutoModelForMaskedLM  # deferred: imports torch

    return from_pretrained(AutoModelForMaskedLM, name_or_path)


def iter_texts(records: Iterable[dict], source: str) -> Iterator[str]:
    """The `text` of normalised data records; a record without it is a user error."""
    for line_no, rec in enumerate(records, start=1):
        text = rec.get("text") if isinstance(rec, dict) else None
        if not isinstance(text, str):
            raise XltError(
                f"{source}: record {line_no} has no string 'text' key; expected normalised "
                'records like {"text": "..."} (see xlt prepare-data)'
            )
        if text.strip():
            yield text


def read_text_langs(path: str | Path, default: str) -> list[str]:
    """The language of each text `read_texts` reads from `path`: a record's `lang` (a pooled set's,
    xlt.data.sample), else `default`."""
    return [
        rec.get("lang", default)
        for rec in read_jsonl(path)
        if isinstance(rec, dict) and isinstance(rec.get("text"), str) and rec["text"].strip()
    ]


def read_texts(path: str | Path, max_sentences: int | None = None) -> list[str]:
    """The non-empty `text` values of a normalised JSONL file, in file order."""
    path = Path(path)
    if not path.is_file():
        raise XltError(f"data file not found: {path}")
    texts = []
    for text in iter_texts(read_jsonl(path), str(path)):
        texts.append(text)
        if max_sentences is not None and len(texts) >= max_sentences:
            break
    if not texts:
        raise XltError(f"{path}: no non-empty 'text' records")
    return texts
