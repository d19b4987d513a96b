"""Tokenizer-independent masked-LM scores: negative log-likelihood per word and per character.

Perplexity per word piece (`mlm.perplexity`) depends on the tokenizer: the same text cut into
more pieces is spread over more, on average easier, predictions, so a native model's (BERTje's)
and mBERT's perplexities do not compare. What compares is how much probability each model gives
the *same text*, divided by units of the text itself (whitespace words, characters).

Definition: word-level pseudo-log-likelihood. A sentence's PLL (Salazar et al. 2020, "Masked
Language Model Scoring", ACL) is the sum over its pieces of log P(piece | the sentence with that
piece masked). Scoring a piece with the other pieces of its own word visible inflates words cut
into many pieces (the tokenizer dependence this measure is for), so, as in PLL-word-l2r (Kauf &
Ivanova 2023, "A Better Way to Do Masked Language Model Scoring", ACL), a piece is scored with
itself and every later piece *of its word* masked: a word's pieces then factor
log P(word | the other words) left to right by the chain rule, however many there are.

    nll_per_word = -sum(PLL) / whitespace words scored
    nll_per_char = -sum(PLL) / characters of those words (spaces not counted)
    unk_share    = scored pieces that are the tokenizer's unknown token / scored pieces, per language

An [UNK] piece is scored like any other, but predicting "unknown" is easy and says nothing of the
word: a language whose text the tokenizer often cannot cut has a flattered NLL. Its share stands
beside the NLL, per language, and a share above `max_unk_share` is flagged (`unk_flagged`).

Why not the fixed 80/10/10 masks: 15 % of the pieces are masked, so a word is often masked only
in part, and the 10 % random / 10 % unchanged positions corrupt or show the answer; their
summed loss is no word-level quantity. PLL costs one forward pass per piece, so it runs on a
subset (`spread_subset`) of each set's sentences, each cut to its first `max_words` words so
that every model scores the same words (a word the tokenizer truncates is dropped).
"""

from __future__ import annotations

import logging
from typing import NamedTuple, Sequence

import torch
import torch.nn.functional as F
from torch import nn

from xlt.core.errors import XltError
from xlt.core.metrics import record
from xlt.families.adapt.masked_head import IGNORE_INDEX, masked_logits

log = logging.getLogger(__name__)


class WordNll(NamedTuple):
    nll: float  # summed over every scored piece (nats): -PLL of the scored words
    words: int  # whitespace words scored
    chars: int  # their characters
    pieces: int  # word pieces scored (one forward pass each)
    sentences: int
    # language -> (scored pieces that are [UNK], scored pieces): the [UNK] share per language
    unk_by_lang: dict = {}

    @property
    def per_word(self) -> float:
        return self.nll / self.words

    @property
    def per_char(self) -> float:
        return self.nll / self.chars

    @property
    def per_piece(self) -> float:
        """The PLL per piece: tokenizer-dependent, like perplexity (for contrast only)."""
        return self.nll / self.pieces


def spread_subset(texts: Sequence[str], n: int) -> list[str]:
    """`n` sentences spread evenly over `texts` (every len/n-th): the multilingual set is stored
    language by language, so its first n sentences would be one language."""
    if n >= len(texts):
        return list(texts)
    return [texts[(i * len(texts)) // n] for i in range(n)]


def scored_words(
    tokenizer, text: str, max_words: int, max_length: int
) -> tuple[list[int], list[int | None], list[str]]:
    """(input_ids, word index of every piece, the words) of a sentence's first `max_words`
    whitespace words; a word whose pieces truncation cut (some or all) gets index None, so it
    is neither scored nor counted. Needs a fast tokenizer (`word_ids`)."""
    words = text.split()[:max_words]
    if not words:
        return [], [], []
    full = tokenizer(words, is_split_into_words=True, truncation=False)
    cut = tokenizer(words, is_split_into_words=True, truncation=True, max_length=max_length)
    full_count: dict[int, int] = {}
    for w in full.word_ids():
        if w is not None:
            full_count[w] = full_count.get(w, 0) + 1
    word_of = cut.word_ids()
    cut_count = {w: word_of.count(w) for w in set(word_of) if w is not None}
    kept = [w if w is not None and cut_count[w] == full_count[w] else None for w in word_of]
    return list(cut["input_ids"]), kept, words


def l2r_copies(input_ids: Sequence[int], word_of: Sequence[int | None], mask_id: int) -> list[tuple[list[int], int]]:
    """(masked input, scored position) per piece of a scored word: the piece and the later
    pieces of its word are masked (PLL-word-l2r), everything else is visible."""
    out = []
    for pos, word in enumerate(word_of):
        if word is None:
            continue
        copy = list(input_ids)
        for later in range(pos, len(word_of)):
            if word_of[later] == word:
                copy[later] = mask_id
        out.append((copy, pos))
    return out


@torch.no_grad()
def word_nll(
    model: nn.Module,
    tokenizer,
    texts: Sequence[str],
    max_words: int = 40,
    max_length: int = 128,
    batch_size: int = 16,
    device=None,
    langs: Sequence[str] | None = None,
) -> WordNll:
    """-PLL (word-l2r) of `texts` summed over every scored piece, with the words and characters
    scored, and the [UNK] pieces among them per language (`langs`, one a text; None: one language,
    named ""). Eval mode (dropout off), the model's previous mode restored afterwards."""
    if tokenizer.mask_token_id is None or not getattr(tokenizer, "is_fast", False):
        raise XltError("word-level NLL needs a fast tokenizer of a masked LM (mask token and word_ids())")
    device = torch.device(device) if device is not None else next(model.parameters()).device
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
    jobs: list[tuple[list[int], int, int]] = []  # (masked input, scored position, label)
    words = chars = sentences = 0
    unk_by_lang: dict[str, tuple[int, int]] = {}
    if langs is not None and len(langs) != len(texts):
        raise ValueError(f"{len(langs)} languages for {len(texts)} texts")
    for text, lang in zip(texts, langs if langs is not None else [""] * len(texts)):
        ids, word_of, text_words = scored_words(tokenizer, text, max_words, max_length)
        kept = sorted({w for w in word_of if w is not None})
        if len(kept) < len(text_words):
            log.debug(
                "%d of %d words not scored (truncated or no piece): %r",
                len(text_words) - len(kept),
                len(text_words),
                text[:60],
            )
        if not kept:
            continue
        sentences += 1
        words += len(kept)
        chars += sum(len(text_words[w]) for w in kept)
        scored = [(copy, pos, ids[pos]) for copy, pos in l2r_copies(ids, word_of, tokenizer.mask_token_id)]
        unk, pieces = unk_by_lang.get(lang, (0, 0))
        unk_by_lang[lang] = (unk + sum(label == tokenizer.unk_token_id for _, _, label in scored), pieces + len(scored))
        jobs += scored
    if not jobs:
        raise XltError(f"none of {len(texts)} sentences has a word to score")
    was_training = model.training
    model.eval()
    total = 0.0
    try:
        for start in range(0, len(jobs), batch_size):
            chunk = jobs[start : start + batch_size]
            width = max(len(copy) for copy, _, _ in chunk)
            input_ids = torch.full((len(chunk), width), pad, dtype=torch.long)
            attention = torch.zeros((len(chunk), width), dtype=torch.long)
            for row, (copy, _, _) in enumerate(chunk):
                input_ids[row, : len(copy)] = torch.tensor(copy)
                attention[row, : len(copy)] = 1
            # one scored position a row: the vocabulary head runs on those rows alone (masked_logits)
            labels = torch.full((len(chunk), width), IGNORE_INDEX, dtype=torch.long)
            for row, (_, pos, label) in enumerate(chunk):
                labels[row, pos] = label
            logits, targets = masked_logits(model, input_ids.to(device), attention.to(device), labels.to(device))
            # float32: half-precision models sum stably
            total += float(F.cross_entropy(logits.float(), targets, reduction="sum"))
    finally:
        model.train(was_training)
    return WordNll(nll=total, words=words, chars=chars, pieces=len(jobs), sentences=sentences, unk_by_lang=unk_by_lang)


def word_nll_records(result: WordNll, max_unk_share: float, **dims) -> list[dict]:
    """The tidy records of one set: NLL per word and per character (nats), and the words scored;
    then per language of its texts (lang = that language, "" = the set's own) the [UNK] share of
    the scored pieces and whether it is above `max_unk_share` (unk_flagged 1, with a warning)."""
    records = [
        record("nll_per_word", result.per_word, **dims),
        record("nll_per_char", result.per_char, **dims),
        record("pll_words", result.words, **dims),
    ]
    for lang, (unk, pieces) in sorted(result.unk_by_lang.items()):
        share = unk / pieces
        where = {**dims, "lang": lang or dims.get("lang")}
        if share > max_unk_share:
            log.warning(
                "%s/%s: %.2f %% of the scored pieces are the unknown token (above %.2f %%): its NLL per "
                "word is flattered",
                where.get("lang"),
                dims.get("split"),
                100 * share,
                100 * max_unk_share,
            )
        records += [record("unk_share", share, **where), record("unk_flagged", float(share > max_unk_share), **where)]
    return records
