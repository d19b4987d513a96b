"""Frozen-prefix caching for the dual encoder (`xlt train-dual --cache-frozen-prefix` and
`--prefix-states DIR`).

With the embeddings and the first N layers frozen, every step recomputes the same layer-N
states for both sides of every pair. In cached mode the frozen prefix runs once per distinct
training sentence (either side of any pair, in order of first appearance), in eval mode, and
training runs layers N+1..L and the pooling (xlt.frozen_prefix.cached_top.CachedSentenceTop) on the
stored states. Semantics, as for the freeze_depth family's cache (xlt.frozen_prefix.prefix_cache):
- the prefix runs under the training's autocast (its --precision on its device), as uncached
  training runs it; a store computed under another precision is refused;
- the frozen layers run in eval mode: no dropout below the boundary (the embeddings' dropout
  included), where uncached training runs them in train mode, with dropout: the remaining
  difference. With dropout 0 this is uncached training (same batches, same padding, same
  precision) up to summation order: the pass batches and pads the distinct sentences otherwise
  than training does, so below a boundary > 0 its sums run in another order (bounds in
  tests/families/dual/test_dual_prefix.py);
- depth -1 freezes nothing (the embeddings train), so it cannot be cached: refused;
- evaluation (dev retrieval, Tatoeba, mining) runs the full model on raw text as before.

A sweep over freeze depths can share one pass: `xlt dual-prefix-states` writes the states of
every depth of the sweep into one store (xlt.frozen_prefix.prefix_store, without labels) and each depth's
run reads its boundary. The store records the model, max_length, the precision and a digest of
the distinct sentences (their order is the store's), so a store written for other data or
another autocast is refused.
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
from dataclasses import dataclass
from typing import Sequence

from xlt.core.errors import XltError
from xlt.core.sentence_encoder import tokenize
from xlt.core.training import autocast_dtype
from xlt.families.dual.dual_encoder import distinct_pairs
from xlt.frozen_prefix.cached_top import CachedSentenceTop
from xlt.frozen_prefix.prefix_cache import PrefixStateDataset, cache_examples, collate_prefix_states
from xlt.frozen_prefix.prefix_store import check_store_matches, read_prefix_store, read_store_meta

log = logging.getLogger(__name__)

STORE_SETTINGS = "dual.prefix_states"
RERUN = "`xlt dual-prefix-states` (snakemake --forcerun prefix_states_dual)"


def distinct_sentences(pairs: Sequence[tuple[str, str]]) -> tuple[list[str], list[tuple[int, int]]]:
    """Every sentence once (in order of first appearance, a pair's text before its English) and
    the pairs as indices into that list: the cache holds each sentence once, however many pairs
    (languages) repeat it."""
    index: dict[str, int] = {}
    for pair in pairs:
        for sentence in pair:
            index.setdefault(sentence, len(index))
    return list(index), [(index[text], index[english]) for text, english in pairs]


def sentences_digest(sentences: Sequence[str]) -> str:
    """What a store was written for: the distinct sentences in the store's order."""
    return hashlib.sha256(json.dumps(list(sentences), ensure_ascii=False).encode()).hexdigest()


def sentence_collate(tokenizer, max_length: int):
    """Tokenise a list of sentences as train-dual's collate tokenises a batch's sides."""
    return lambda sentences: tokenize(tokenizer, list(sentences), max_length)


def check_cacheable(depth: int) -> None:
    if depth < 0:
        raise XltError(
            f"--freeze-depth {depth} freezes nothing (the embeddings train), so there is no frozen prefix "
            "to cache; drop --cache-frozen-prefix / --prefix-states or use a depth >= 0"
        )


def store_expected(model: str, max_length: int, sentences: Sequence[str], precision: str) -> dict:
    """The meta values a store must have been written with to serve this run (`precision`: what
    the run's autocast computes in, xlt.core.train_args.precision_label)."""
    return {
        "model": model,
        "max_length": max_length,
        "sentences_sha256": sentences_digest(sentences),
        "precision": precision,
    }


@dataclass
class CachedDual:
    """What train-dual's loop needs in cached mode: the top, the stored states of the distinct
    sentences, the training pairs as indices into them, the cost of the pass (or the read)."""

    top: CachedSentenceTop
    dataset: PrefixStateDataset
    cache_s: float
    pairs: list[tuple[int, int]]

    def collate(self, chunk: list[tuple[int, int]]) -> dict:
        """train-dual's collate on index pairs: the same repeat filter (an index stands for one
        sentence), then rows [0, B) non-English, [B, 2B) English, padded to the longest row as
        the tokenizer pads the uncached batch."""
        pairs = distinct_pairs(chunk)
        rows = [text for text, _ in pairs] + [english for _, english in pairs]
        return {**collate_prefix_states([self.dataset[row] for row in rows]), "pairs": len(pairs)}


def prepare_cached_dual(
    model,
    depth: int,
    pairs: Sequence[tuple[str, str]],
    tokenizer,
    max_length: int,
    batch_size: int,
    device,
    precision: str = "fp32",
) -> CachedDual:
    """Run the frozen prefix of `model` (a SentenceEncoder) once per distinct sentence, under the
    autocast the run's `precision` (TrainArgs.precision) trains with on `device`."""
    import torch  # deferred: imports torch

    check_cacheable(depth)
    device = torch.device(device)
    amp_dtype, _ = autocast_dtype(precision, device)
    model.to(device)
    sentences, indexed = distinct_sentences(pairs)
    started = time.time()
    states = cache_examples(
        model.encoder,
        depth,
        sentences,
        sentence_collate(tokenizer, max_length),
        batch_size,
        device,
        amp_dtype=amp_dtype,
    )
    cache_s = time.time() - started
    log.info(
        "cached the frozen prefix (embeddings + %d layers, %s) of %d distinct sentences (%d pairs) in %.2f s (%.1f MB)",
        depth,
        states.states.precision,
        len(sentences),
        len(indexed),
        cache_s,
        states.states.nbytes / 2**20,
    )
    return CachedDual(CachedSentenceTop(model, depth), states, cache_s, indexed)


def load_cached_dual(model, depth: int, path, pairs: Sequence[tuple[str, str]], expected: dict) -> CachedDual:
    """CachedDual from a store written by `xlt dual-prefix-states` for this model, data and
    precision (`expected`: model, max_length, precision)."""
    check_cacheable(depth)
    started = time.time()
    sentences, indexed = distinct_sentences(pairs)
    meta = read_store_meta(path)
    check_store_matches(
        path, meta, store_expected(expected["model"], expected["max_length"], sentences, expected["precision"]), RERUN
    )
    states = read_prefix_store(path, depth, model.encoder)
    load_s = time.time() - started
    log.info(
        "read the stored frozen prefix (embeddings + %d layers, %s) of %d sentences from %s in %.2f s",
        depth,
        meta["storage_dtype"],
        len(states),
        path,
        load_s,
    )
    return CachedDual(CachedSentenceTop(model, depth), PrefixStateDataset(states), load_s, indexed)
