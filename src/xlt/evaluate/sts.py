"""STS evaluation of sentence embeddings: correlation of pair similarities with gold scores.

Matches sentence-transformers' `EmbeddingSimilarityEvaluator` (6.x): for each pair (a_i, b_i)
a similarity is computed with one of

- ``cosine``:    cos(a_i, b_i), vectors scaled to unit length with a 1e-12 floor on the norm
                 (what `torch.nn.functional.normalize` does, so a zero vector scores 0);
- ``euclidean``: -||a_i - b_i||_2  (distance negated, so larger = more similar);
- ``manhattan``: -||a_i - b_i||_1  (distance negated);
- ``dot``:       a_i . b_i  (raw, *not* normalised: it changes when the embeddings are);

and Pearson's r and Spearman's rho of those similarities against the gold scores are reported
(`scipy.stats.pearsonr` / `spearmanr`, as fractions, not x100). Gold scores are used as given:
both correlations are invariant to rescaling them (0..5 or 0..1 give the same numbers).

6.x computes these with `sentence_transformers.util.pairwise_{cos_sim,euclidean_sim,
manhattan_sim,dot_score}`; versions <= 2.x used sklearn's `paired_cosine_distances` etc.
(1 - cosine distance, negated distances, dot): the same definitions. Similarities are computed
in float64 here (sentence-transformers uses float32 torch); on all-MiniLM-L6-v2 / STS-b test
the correlations agree to 6e-8.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
from scipy.stats import pearsonr, spearmanr

from xlt.core.metrics import example_set, record
from xlt.evaluate.vectors import l2_normalise

SIMILARITIES = ("cosine", "euclidean", "manhattan", "dot")

# rows scaled to unit L2 length (norms below 1e-12 are clamped); kept under this name for
# the evaluators that import it from here


def paired_similarity(a: np.ndarray, b: np.ndarray, similarity: str) -> np.ndarray:
    """Similarity of each row pair (a[i], b[i]); distances come back negated."""
    a, b = _check_pair_arrays(a, b)
    if similarity == "cosine":
        return np.sum(l2_normalise(a) * l2_normalise(b), axis=1)
    if similarity == "euclidean":
        return -np.linalg.norm(a - b, axis=1)
    if similarity == "manhattan":
        return -np.sum(np.abs(a - b), axis=1)
    if similarity == "dot":
        return np.sum(a * b, axis=1)
    raise ValueError(f"unknown similarity {similarity!r}; choose one of {SIMILARITIES}")


def sts_correlations(
    a: np.ndarray, b: np.ndarray, gold: Sequence[float], similarities: Sequence[str] = SIMILARITIES
) -> dict[tuple[str, str], float]:
    """{(correlation, similarity): value} for every similarity in `similarities`."""
    gold = np.asarray(gold, dtype=np.float64)
    if gold.ndim != 1 or len(gold) != len(a):
        raise ValueError(f"need one gold score per pair: {len(a)} pairs but gold has shape {gold.shape}")
    if len(gold) < 2:
        raise ValueError(f"correlations need at least 2 pairs, got {len(gold)}")
    result = {}
    for similarity in similarities:
        scores = paired_similarity(a, b, similarity)
        result[("pearson", similarity)] = float(pearsonr(gold, scores)[0])
        result[("spearman", similarity)] = float(spearmanr(gold, scores)[0])
    return result


def sts_records(
    a: np.ndarray, b: np.ndarray, gold: Sequence[float], similarities: Sequence[str] = SIMILARITIES, **dims
) -> list[dict]:
    """Metric records ``record("pearson"|"spearman", v, similarity=..., **dims)``.

    `dims` are the remaining record dimensions, e.g. ``lang="en", split="test", dataset="stsb"``.
    """
    correlations = sts_correlations(a, b, gold, similarities)
    return [
        record(correlation, value, similarity=similarity, **dims)
        for (correlation, similarity), value in correlations.items()
    ]


def sts_examples(
    a: np.ndarray, b: np.ndarray, gold: Sequence[float], similarities: Sequence[str] = SIMILARITIES, **dims
) -> list[dict]:
    """Per-pair (predicted similarity, gold score) for each similarity, for a MetricsFile's
    `examples`; Pearson and Spearman are recomputed from the same pairs."""
    return [
        example_set(
            "scores",
            "spearman",
            predicted=paired_similarity(a, b, similarity),
            gold=np.asarray(gold, dtype=np.float64),
            similarity=similarity,
            **dims,
        )
        for similarity in similarities
    ]


def _check_pair_arrays(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    if a.ndim != 2 or a.shape != b.shape:
        raise ValueError(f"need two (n, dim) arrays of the same shape, got {a.shape} and {b.shape}")
    return a, b
