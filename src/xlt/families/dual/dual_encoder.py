"""LaBSE-style dual-encoder training on translation pairs (Feng et al. 2020).

One shared encoder (a `SentenceEncoder`: transformers encoder + pooling) embeds both
sides of a batch of B pairs; the embeddings are L2-normalised and scored with the
bidirectional additive-margin softmax (`xlt.losses.additive_margin`):

    S[i, j] = scale * (cos(x_i, y_j) - margin * [i == j])
    loss    = CE(S, rows) + CE(S.T, columns)        symmetric = "sum"   (LaBSE)
            = (CE(S, rows) + CE(S.T, columns)) / 2  symmetric = "mean"  (sentence-transformers)

In-batch negatives: the other B - 1 pairs of the batch. The training examples of every
language are pooled and shuffled together (xlt.core.training's seeded epoch order), so a batch
mixes languages as LaBSE's batches do and a sentence's negatives come from any language.
Multi-way parallel data (Tatoeba, the demo bitext) repeats the same English sentence
across languages; a batch keeps only the first pair with a given sentence on either side,
so a translation is never scored as a negative of itself.

The best checkpoint is the one with the highest dev retrieval accuracy: cosine nearest
neighbour over each dev language's pairs, averaged over languages and both directions,
correct by `DualSettings.match` (xlt.evaluate.retrieval: index by default), the rule the
family's Tatoeba test uses, so selection and test count the same retrievals as right.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Sequence

import numpy as np
import torch

from xlt.core.checkpoint import with_settings
from xlt.core.embeddings import encode
from xlt.core.metrics import example_set, record
from xlt.core.padding import pad_multiple
from xlt.core.sentence_encoder import SentenceEncoder, project, tokenize
from xlt.core.train_args import TrainArgs
from xlt.core.train_inputs import DevSelection, Objective, Resumable
from xlt.core.training import TrainResult, train
from xlt.data.bitext_files import Bitext
from xlt.evaluate.alignment import DIRECTIONS
from xlt.evaluate.retrieval import DEFAULT_MATCH, check_match, index_retrieval
from xlt.families.dual.choices import DUAL_SYMMETRIC
from xlt.families.dual.plan import check_grad_accum
from xlt.losses.additive_margin import AdditiveMarginSoftmaxLoss

DEV_METRIC = "dev_retrieval_acc"


@dataclass(frozen=True)
class DualSettings:
    margin: float = 0.3
    scale: float = 10.0
    symmetric: str = "sum"
    match: str = DEFAULT_MATCH  # dev retrieval's rule (the family's dual.tatoeba.match)


def with_prompt(bitexts: Sequence[Bitext], prompt: str) -> list[Bitext]:
    """Both sides of every pair with `prompt` before them: what xlt.core.embeddings.encode(prompt=)
    feeds the encoder, so training, dev selection and evaluation see the same text."""
    if not prompt:
        return list(bitexts)
    return [Bitext(b.lang, [prompt + t for t in b.texts], [prompt + e for e in b.english]) for b in bitexts]


def pairs_from_bitexts(bitexts: Sequence[Bitext]) -> list[tuple[str, str]]:
    """All (non-English, English) pairs of every language, in file order (train() shuffles)."""
    return [(text, english) for bitext in bitexts for text, english in zip(bitext.texts, bitext.english)]


def distinct_pairs(chunk: Sequence[tuple[str, str]]) -> list[tuple[str, str]]:
    """Keep the first pair with a given sentence on either side; drop later repeats."""
    seen_text, seen_english, kept = set(), set(), []
    for text, english in chunk:
        if text in seen_text or english in seen_english:
            continue
        seen_text.add(text)
        seen_english.add(english)
        kept.append((text, english))
    return kept


def make_collate(tokenizer, max_length: int, pad_to_multiple_of: int | None = None):
    """Both sides of the batch in one padded tensor: rows [0, B) non-English, [B, 2B) English."""

    def collate(chunk: list[tuple[str, str]]) -> dict:
        pairs = distinct_pairs(chunk)
        texts = [text for text, _ in pairs] + [english for _, english in pairs]
        return {**tokenize(tokenizer, texts, max_length, pad_to_multiple_of), "pairs": len(pairs)}

    return collate


def make_loss(settings: DualSettings, losses: list[float] | None = None):
    """loss_fn(model, batch) for xlt.core.training.train; appends every loss value to `losses`."""
    criterion = AdditiveMarginSoftmaxLoss(
        scale=settings.scale, margin=settings.margin, symmetric=settings.symmetric, normalize=True
    )

    def loss_fn(model: SentenceEncoder, batch: dict) -> torch.Tensor:
        n = batch["pairs"]
        # token ids (a SentenceEncoder) or cached prefix states (a CachedSentenceTop, xlt.families.dual.prefix)
        embeddings = model(**{key: value for key, value in batch.items() if key != "pairs"})
        loss = criterion(embeddings[:n].float(), embeddings[n:].float())
        if losses is not None:
            losses.append(loss.item())
        return loss

    return loss_fn


def sentence_vectors(
    model: SentenceEncoder, tokenizer, sentences: Sequence[str], max_length: int, batch_size: int = 64
) -> np.ndarray:
    """The model's own pooling over its own layer, through its projection if it has one, as float
    arrays (what retrieval scores: the vectors a distilled student was trained to emit)."""
    device = next(model.parameters()).device
    return project(
        encode(
            model.encoder,
            tokenizer,
            list(sentences),
            pooling=model.pooling.mode,
            layer=model.pooling.layer,
            batch_size=batch_size,
            max_length=max_length,
            device=device,
        ),
        model.projection,
    )


def dev_records(
    model: SentenceEncoder,
    tokenizer,
    bitexts: Sequence[Bitext],
    max_length: int,
    examples_out: list | None = None,
    match: str = DEFAULT_MATCH,
) -> list[dict]:
    """Retrieval accuracy per dev language and direction (xx->en, en->xx), correct by `match`.
    With `examples_out` (a MetricsFile's `examples`), the retrieved indices go there too, as
    interval-only sets."""
    records = []
    for bitext in bitexts:
        xx = sentence_vectors(model, tokenizer, bitext.texts, max_length)
        en = sentence_vectors(model, tokenizer, bitext.english, max_length)
        for direction, (queries, candidates, texts) in zip(
            DIRECTIONS, ((xx, en, bitext.english), (en, xx, bitext.texts))
        ):
            found, correct = index_retrieval(queries, candidates, match=match, candidate_texts=texts)
            dims = dict(lang=bitext.lang, direction=direction, split="dev")
            records.append(record(DEV_METRIC, float(np.mean(correct)), **dims))
            if examples_out is not None:
                examples_out.append(
                    example_set(
                        "retrieval",
                        DEV_METRIC,
                        retrieved=found,
                        gold=np.arange(len(found)),
                        correct=correct,
                        interval_only=True,
                        **dims,
                    )
                )
    return records


def make_evaluate(tokenizer, bitexts: Sequence[Bitext], max_length: int, match: str = DEFAULT_MATCH):
    def evaluate(model: SentenceEncoder) -> dict:
        records = dev_records(model, tokenizer, bitexts, max_length, match=match)
        return {
            "score": float(np.mean([r["value"] for r in records])),
            **{f"{r['lang']} {r['direction']}": r["value"] for r in records},
        }

    return evaluate


def train_dual(
    model: SentenceEncoder,
    tokenizer,
    train_bitexts: Sequence[Bitext],
    dev_bitexts: Sequence[Bitext],
    settings: DualSettings,
    args: TrainArgs,
    losses: list[float] | None = None,
    checkpoint_dir: str | Path | None = None,
    cached=None,
    identity: dict | None = None,
) -> TrainResult:
    """Train `model` in place with xlt.core.training.train; the best dev checkpoint is restored.

    `losses` collects the loss of every batch this process trains on (a resumed run's list
    starts at the checkpoint); `checkpoint_dir` makes the run resumable (xlt.core.training), keyed
    on `identity` (xlt.core.checkpoint.run_identity) plus the loss `settings`.
    `cached` (xlt.families.dual.prefix.CachedDual, built from `model` and the same bitexts)
    trains only the layers above the frozen prefix, on its stored states; evaluation runs
    the full model on raw text either way."""
    if settings.symmetric not in DUAL_SYMMETRIC:
        raise ValueError(f"symmetric must be one of {DUAL_SYMMETRIC} for a dual encoder, got {settings.symmetric!r}")
    check_match(settings.match)
    check_grad_accum(args.grad_accum, "grad_accum")  # before any training: in-batch negatives do not split
    loss, evaluate = make_loss(settings, losses), make_evaluate(tokenizer, dev_bitexts, args.max_length, settings.match)
    identity = with_settings(identity, dual_loss=asdict(settings))  # the loss settings key the checkpoint here
    if cached is not None:
        # the same seeded order over the same number of pairs, so the same batches as uncached
        return train(
            cached.top,
            Objective(cached.pairs, cached.collate, loss),
            args,
            dev=DevSelection(lambda top: evaluate(top.full_model)),
            checkpoint=Resumable(checkpoint_dir, identity),
        )
    collate = make_collate(tokenizer, args.max_length, pad_multiple(args.device))
    return train(
        model,
        Objective(pairs_from_bitexts(train_bitexts), collate, loss),
        args,
        dev=DevSelection(evaluate),
        checkpoint=Resumable(checkpoint_dir, identity),
    )
