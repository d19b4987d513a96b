"""Tatoeba-style bitext retrieval: cosine nearest neighbour over the whole test set.

Given n aligned pairs (xx_i, en_i), every non-English sentence queries all n English ones and
vice versa; the nearest neighbour by cosine similarity is the retrieved sentence. This follows
sentence-transformers' `TranslationEvaluator` (6.x) with source = the non-English side and
target = English, so

- direction ``"xx->en"`` is its ``src2trg`` accuracy (non-English queries, English candidates),
- direction ``"en->xx"`` is its ``trg2src`` accuracy (English queries, non-English candidates).

Error = 1 - accuracy@1, as a fraction (LASER and the SBERT blog print it x100, in percent).
``mean_error`` / ``mean_accuracy@1`` average the two directions (TranslationEvaluator's
``mean_accuracy``).

Duplicates. With ``match="index"`` (the default everywhere, LASER's original Tatoeba
evaluation) a retrieval is correct only when the retrieved index is the gold index. With
``match="text"`` (sentence-transformers' TranslationEvaluator) it is correct when the retrieved
sentence's *string* equals the gold sentence's string, so retrieving an identical duplicate of
the gold sentence at another index counts as correct. Index is the default so that the dual
encoder's dev selection and every test score use one rule; text stays available as an explicit
choice. The two agree whenever the candidate side has no repeated strings, which holds for the
eight LASER Tatoeba languages shipped in shared/data (deu fra spa nld cmn jpn rus ara:
`benchmarks/tatoeba_duplicates.py`, docs/tatoeba-matching.md).

Ties: the first index with the highest similarity wins (`numpy.argmax`), as in
TranslationEvaluator. Cosine similarities are computed on unit-length vectors (1e-12 norm
floor, `xlt.evaluate.vectors.l2_normalise`), by default in float32, which is what
`sentence_transformers.util.cos_sim` does; the per-layer alignment analysis asks for float64.

This is the one retrieval implementation: Tatoeba evaluation (`bitext_retrieval`), the
alignment family's per-layer accuracy and the dual encoder's dev score (`retrieval_accuracy`)
all find neighbours with `nearest_neighbours`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from xlt.core.choices import DEFAULT_MATCH, MATCH_RULES
from xlt.core.metrics import example_set, record
from xlt.evaluate.vectors import l2_normalise

XX_TO_EN = "xx->en"
EN_TO_XX = "en->xx"

# rows of queries scored at once: bounds the similarity block to chunk x n floats
_CHUNK = 2048


@dataclass(frozen=True)
class RetrievalResult:
    n: int
    correct_xx_to_en: int
    correct_en_to_xx: int
    # per query: index of the retrieved sentence and whether it counts as correct (the gold
    # index is the query's own); kept for per-example files, not compared
    found_en: np.ndarray | None = field(default=None, compare=False, repr=False)
    found_xx: np.ndarray | None = field(default=None, compare=False, repr=False)
    hit_xx_to_en: np.ndarray | None = field(default=None, compare=False, repr=False)
    hit_en_to_xx: np.ndarray | None = field(default=None, compare=False, repr=False)

    @property
    def accuracy_xx_to_en(self) -> float:
        return self.correct_xx_to_en / self.n

    @property
    def accuracy_en_to_xx(self) -> float:
        return self.correct_en_to_xx / self.n

    @property
    def error_xx_to_en(self) -> float:
        return 1.0 - self.accuracy_xx_to_en

    @property
    def error_en_to_xx(self) -> float:
        return 1.0 - self.accuracy_en_to_xx

    @property
    def mean_accuracy(self) -> float:
        return (self.accuracy_xx_to_en + self.accuracy_en_to_xx) / 2

    @property
    def mean_error(self) -> float:
        return (self.error_xx_to_en + self.error_en_to_xx) / 2


def nearest_neighbours(queries: np.ndarray, candidates: np.ndarray, dtype=np.float32) -> np.ndarray:
    """Index of the cosine-nearest candidate for every query (first index on ties), with
    similarities computed in `dtype`."""
    q = l2_normalise(queries, dtype)
    c = l2_normalise(candidates, dtype)
    best = np.empty(len(q), dtype=np.int64)
    for start in range(0, len(q), _CHUNK):
        best[start : start + _CHUNK] = np.argmax(q[start : start + _CHUNK] @ c.T, axis=1)
    return best


def bitext_retrieval(
    xx_embeddings: np.ndarray,
    en_embeddings: np.ndarray,
    xx_texts: Sequence[str] | None = None,
    en_texts: Sequence[str] | None = None,
    match: str = DEFAULT_MATCH,
    dtype=np.float32,
) -> RetrievalResult:
    """Nearest-neighbour retrieval in both directions over n aligned pairs (row i <-> row i).

    `match="index"` (default) ignores the texts; `match="text"` needs them (a retrieved
    duplicate string counts as correct). Similarities are computed in `dtype`.
    """
    check_match(match)
    xx_embeddings = np.asarray(xx_embeddings)
    en_embeddings = np.asarray(en_embeddings)
    n = len(xx_embeddings)
    if xx_embeddings.ndim != 2 or xx_embeddings.shape != en_embeddings.shape or n == 0:
        raise ValueError(
            f"need two non-empty (n, dim) arrays of the same shape, got {xx_embeddings.shape} and {en_embeddings.shape}"
        )
    if match == "text":
        if xx_texts is None or en_texts is None:
            raise ValueError('match="text" needs xx_texts and en_texts')
        if len(xx_texts) != n or len(en_texts) != n:
            raise ValueError(f"{n} embedding pairs but {len(xx_texts)} / {len(en_texts)} texts")
    found_en = nearest_neighbours(xx_embeddings, en_embeddings, dtype)
    found_xx = nearest_neighbours(en_embeddings, xx_embeddings, dtype)
    hit_xx_to_en, hit_en_to_xx = hits(found_en, en_texts, match), hits(found_xx, xx_texts, match)
    return RetrievalResult(
        n=n,
        correct_xx_to_en=int(hit_xx_to_en.sum()),
        correct_en_to_xx=int(hit_en_to_xx.sum()),
        found_en=found_en,
        found_xx=found_xx,
        hit_xx_to_en=hit_xx_to_en,
        hit_en_to_xx=hit_en_to_xx,
    )


def check_match(match: str) -> None:
    if match not in MATCH_RULES:
        raise ValueError(f"unknown match rule {match!r}; choose one of {MATCH_RULES}")


def hits(found: np.ndarray, candidate_texts: Sequence[str] | None = None, match: str = DEFAULT_MATCH) -> np.ndarray:
    """Whether query i's retrieved candidate `found[i]` counts as correct, candidate i being its
    gold: the same index (`index`), or the same string (`text`, needs `candidate_texts`)."""
    check_match(match)
    found = np.asarray(found)
    if match == "index":
        return found == np.arange(len(found))
    if candidate_texts is None:
        raise ValueError('match="text" needs the candidate texts')
    return np.array([candidate_texts[int(j)] == candidate_texts[i] for i, j in enumerate(found)], dtype=bool)


def index_retrieval(
    queries: np.ndarray,
    candidates: np.ndarray,
    dtype=np.float64,
    match: str = DEFAULT_MATCH,
    candidate_texts: Sequence[str] | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """(retrieved index, correct) per query i of parallel sets, candidate i being its gold
    (float64 by default, as `retrieval_accuracy`); correct by `match` (`hits`)."""
    if len(queries) != len(candidates):
        raise ValueError(f"queries ({len(queries)}) and candidates ({len(candidates)}) must be parallel")
    found = nearest_neighbours(queries, candidates, dtype)
    return found, hits(found, candidate_texts, match)


def retrieval_accuracy(queries: np.ndarray, candidates: np.ndarray, dtype=np.float64) -> float:
    """Share of queries i whose cosine-nearest candidate is candidate i (by index; float64
    by default, the precision of the per-layer alignment analysis and the dual dev score)."""
    return float(np.mean(index_retrieval(queries, candidates, dtype)[1]))


def retrieval_records(result: RetrievalResult, **dims) -> list[dict]:
    """Records: ``error`` and ``accuracy@1`` per direction, ``mean_error``, ``mean_accuracy@1``.

    `dims` are the remaining record dimensions, e.g. ``lang="deu", dataset="tatoeba"``.
    """
    return [
        record("error", result.error_xx_to_en, direction=XX_TO_EN, **dims),
        record("error", result.error_en_to_xx, direction=EN_TO_XX, **dims),
        record("mean_error", result.mean_error, **dims),
        record("accuracy@1", result.accuracy_xx_to_en, direction=XX_TO_EN, **dims),
        record("accuracy@1", result.accuracy_en_to_xx, direction=EN_TO_XX, **dims),
        record("mean_accuracy@1", result.mean_accuracy, **dims),
    ]


def retrieval_examples(result: RetrievalResult, **dims) -> list[dict]:
    """Per-example outputs of both directions (retrieved index, gold index, correct), for a
    MetricsFile's `examples`; `dims` as for retrieval_records."""
    if result.found_en is None:
        raise ValueError("this RetrievalResult carries no per-query outputs (made by bitext_retrieval?)")
    gold = np.arange(result.n)
    directions = (  # (direction, retrieved index, correct) per query
        (XX_TO_EN, result.found_en, result.hit_xx_to_en),
        (EN_TO_XX, result.found_xx, result.hit_en_to_xx),
    )
    return [
        example_set("retrieval", "accuracy@1", retrieved=found, gold=gold, correct=hit, direction=direction, **dims)
        for direction, found, hit in directions
    ]
