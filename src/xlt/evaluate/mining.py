"""BUCC-style parallel sentence mining with ratio-margin scoring.

Scoring (Artetxe & Schwenk 2019, "Margin-based parallel corpus mining with multilingual
sentence embeddings", ratio margin with k = 4). For unit vectors x (source) and y (target)

    margin(x, y) = cos(x, y) / ( sum_{z in NN_k(x)} cos(x, z) / (2k)
                                 + sum_{z in NN_k(y)} cos(y, z) / (2k) )

where NN_k(x) are the k targets with the highest cosine to x and NN_k(y) the k sources
with the highest cosine to y (k is clamped to the size of the other side). Dividing by the
neighbourhood density penalises "hub" sentences that are close to everything.

Candidate extraction (``strategy``); "best target of x" means the target with the highest
margin among x's k cosine nearest neighbours (as in LASER's mine_bitexts.py):
  "forward"    every source with its best target                     (one pair per source)
  "backward"   every target with its best source                     (one pair per target)
  "intersect"  pairs that are both forward- and backward-best         (mutual best)
  "max"        the forward and backward pairs pooled and sorted by margin, highest first;
               a pair is kept when neither its source nor its target was kept before, so
               the result is one-to-one (LASER's "max" retrieval; the BUCC default)
Each candidate carries its margin; a threshold then decides which are predicted parallel
(``score >= threshold``).

Threshold: `tune_threshold` walks the candidates from the highest score down and takes the
cut with the best F1 against a gold split (a cut never splits tied scores); the threshold
is the midpoint between the last kept and the first dropped score (as XTREME's
bucc_optimize). `xlt mine` mines its tuning and test split as one pool, so both splits' margins
share the k-NN terms (xlt.evaluate.mining_pool: a threshold tuned in a small pool does not
transfer to a big one). `precision_recall_f1` applies it to another split; `mining_examples` gives
that split's per-source pair counts, from which the bootstrap resamples source sentences at
the same fixed threshold (xlt.analysis.bootstrap.resampled_mining). The tuning split's own
scores sit at the optimum of that threshold: `tuning_examples` keeps its candidates per source,
and its bootstrap tunes the threshold again in every resample (resampled_tuned_mining).

The splits it mines (BuccSplit) and their files (BUCC layout) are xlt.data.bucc_files'.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from xlt.core.choices import MINING_DEFAULT_K, MINING_STRATEGIES
from xlt.core.errors import XltError
from xlt.core.metrics import example_set
from xlt.data.bucc_files import BuccSplit
from xlt.evaluate.vectors import l2_normalise

STRATEGIES = MINING_STRATEGIES
DEFAULT_K = MINING_DEFAULT_K


# ---------------------------------------------------------------------------------------
# scoring and extraction


@dataclass(frozen=True)
class Candidate:
    src: int  # row index into the source side
    tgt: int  # row index into the target side
    score: float


def knn_cosine(queries: np.ndarray, keys: np.ndarray, k: int, batch_size: int = 2048) -> tuple[np.ndarray, np.ndarray]:
    """Cosines and indices of the k nearest keys of every query, highest first (unit inputs).

    Works in row blocks so the full (n, m) similarity matrix never has to fit in memory.
    """
    k = min(k, len(keys))
    sims = np.empty((len(queries), k), dtype=np.float32)
    idx = np.empty((len(queries), k), dtype=np.int64)
    for start in range(0, len(queries), batch_size):
        block = queries[start : start + batch_size] @ keys.T
        top = (
            np.argpartition(-block, k - 1, axis=1)[:, :k]
            if k < block.shape[1]
            else np.tile(np.arange(k), (len(block), 1))
        )
        top_sims = np.take_along_axis(block, top, axis=1)
        # highest cosine first; equal cosines by lower index, so results are reproducible
        order = np.lexsort((top, -top_sims), axis=1)
        idx[start : start + len(block)] = np.take_along_axis(top, order, axis=1)
        sims[start : start + len(block)] = np.take_along_axis(top_sims, order, axis=1)
    return sims, idx


def margin_candidates(x: np.ndarray, y: np.ndarray, k: int = DEFAULT_K, strategy: str = "max") -> list[Candidate]:
    """Mine candidate pairs between source vectors x (n, d) and target vectors y (m, d).

    Returns candidates sorted by ratio margin, highest first (see the module docstring for
    the score and the strategies). Vectors are L2-normalised here.
    """
    if strategy not in STRATEGIES:
        raise ValueError(f"unknown mining strategy {strategy!r}; choose one of {STRATEGIES}")
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    if len(x) == 0 or len(y) == 0:
        return []
    x, y = l2_normalise(x, np.float32), l2_normalise(y, np.float32)
    x2y_sims, x2y_idx = knn_cosine(x, y, k)
    y2x_sims, y2x_idx = knn_cosine(y, x, k)
    x_density = x2y_sims.mean(axis=1)  # sum over NN_k(x) / k
    y_density = y2x_sims.mean(axis=1)

    def margin(src: np.ndarray, tgt: np.ndarray, cos: np.ndarray) -> np.ndarray:
        return cos / ((x_density[src] + y_density[tgt]) / 2)

    rows = np.arange(len(x))[:, None]
    fwd_scores = margin(np.broadcast_to(rows, x2y_idx.shape), x2y_idx, x2y_sims)
    fwd_pick = fwd_scores.argmax(axis=1)
    fwd = [Candidate(i, int(x2y_idx[i, j]), float(fwd_scores[i, j])) for i, j in enumerate(fwd_pick)]

    cols = np.arange(len(y))[:, None]
    bwd_scores = margin(y2x_idx, np.broadcast_to(cols, y2x_idx.shape), y2x_sims)
    bwd_pick = bwd_scores.argmax(axis=1)
    bwd = [Candidate(int(y2x_idx[t, j]), t, float(bwd_scores[t, j])) for t, j in enumerate(bwd_pick)]

    if strategy == "forward":
        chosen = fwd
    elif strategy == "backward":
        chosen = bwd
    elif strategy == "intersect":
        bwd_pairs = {(c.src, c.tgt) for c in bwd}
        chosen = [c for c in fwd if (c.src, c.tgt) in bwd_pairs]
    else:
        chosen, used_src, used_tgt = [], set(), set()
        # stable sort: on equal scores forward candidates come first, then by position
        for cand in sorted(fwd + bwd, key=lambda c: -c.score):
            if cand.src not in used_src and cand.tgt not in used_tgt:
                chosen.append(cand)
                used_src.add(cand.src)
                used_tgt.add(cand.tgt)
    return sorted(chosen, key=lambda c: -c.score)


def candidates_to_ids(
    candidates: Sequence[Candidate], src_ids: Sequence[str], tgt_ids: Sequence[str]
) -> list[tuple[str, str, float]]:
    return [(src_ids[c.src], tgt_ids[c.tgt], c.score) for c in candidates]


# ---------------------------------------------------------------------------------------
# threshold and scores


def _prf(n_correct: int, n_predicted: int, n_gold: int) -> dict[str, float]:
    precision = n_correct / n_predicted if n_predicted else 0.0
    recall = n_correct / n_gold if n_gold else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {
        "precision": precision,
        "recall": recall,
        "f1": f1,
        "predicted": n_predicted,
        "correct": n_correct,
        "gold": n_gold,
    }


def precision_recall_f1(
    mined: Sequence[tuple[str, str, float]], gold: set[tuple[str, str]], threshold: float
) -> dict[str, float]:
    """P/R/F1 of the mined (src_id, tgt_id, score) pairs with score >= threshold against gold."""
    predicted = {(s, t) for s, t, score in mined if score >= threshold}
    return _prf(len(predicted & gold), len(predicted), len(gold))


def source_counts(
    mined: Sequence[tuple[str, str, float]], gold: set[tuple[str, str]], threshold: float, src_ids: Sequence[str]
) -> dict[str, np.ndarray]:
    """Per source sentence (in `src_ids` order, every sentence of the split): how many pairs it
    has predicted parallel (kept), how many of those are gold (correct), and its gold pairs.
    Summed over the sentences they are `precision_recall_f1`'s counts."""
    predicted = {(s, t) for s, t, score in mined if score >= threshold}
    position = {sid: i for i, sid in enumerate(src_ids)}

    def per_source(pairs) -> np.ndarray:
        return np.bincount([position[s] for s, _ in pairs], minlength=len(src_ids)).astype(np.int64)

    return {"kept": per_source(predicted), "correct": per_source(predicted & gold), "gold": per_source(gold)}


def mining_examples(
    mined: Sequence[tuple[str, str, float]],
    gold: set[tuple[str, str]],
    threshold: float,
    src_ids: Sequence[str],
    **dims,
) -> dict:
    """The per-source counts of one scored split as an interval-only example set (a MetricsFile's
    `examples`): its precision, recall and F1 records get intervals, no paired test."""
    return example_set("mining", "mining", **source_counts(mined, gold, threshold, src_ids), interval_only=True, **dims)


def source_candidates(
    mined: Sequence[tuple[str, str, float]], gold: set[tuple[str, str]], src_ids: Sequence[str]
) -> dict[str, list]:
    """Per source sentence (in `src_ids` order, every sentence of the split): its mined candidates'
    scores, whether each is a gold pair (1/0), and its number of gold pairs. Enough to tune the
    threshold again on any resample of the sentences (xlt.analysis.bootstrap.resampled_tuned_mining)."""
    position = {sid: i for i, sid in enumerate(src_ids)}
    scores: list[list[float]] = [[] for _ in src_ids]
    hits: list[list[int]] = [[] for _ in src_ids]
    for s, t, score in mined:
        scores[position[s]].append(float(score))
        hits[position[s]].append(int((s, t) in gold))
    n_gold = np.bincount([position[s] for s, _ in gold], minlength=len(src_ids))
    return {"candidate_scores": scores, "candidate_gold": hits, "gold": n_gold.tolist()}


def tuning_examples(
    mined: Sequence[tuple[str, str, float]], gold: set[tuple[str, str]], src_ids: Sequence[str], **dims
) -> dict:
    """The tuning split's candidates per source as an interval-only example set: its precision,
    recall and F1 are the optimum of a threshold tuned on the split itself, so their bootstrap
    tunes it again in every resample (resampling at the fixed threshold would understate them)."""
    return example_set("mining_tuning", "mining", **source_candidates(mined, gold, src_ids), interval_only=True, **dims)


def tune_threshold(
    mined: Sequence[tuple[str, str, float]], gold: set[tuple[str, str]]
) -> tuple[float, dict[str, float]]:
    """Threshold with the best F1 on this split, and the scores it reaches there.

    Cuts are only placed between different scores. Equal best F1: the higher threshold
    wins. No correct candidate at all: the threshold lies just above the highest score,
    so nothing is predicted.
    """
    if not gold:
        raise XltError("threshold tuning needs gold pairs; the tuning split has none")
    ranked = sorted(mined, key=lambda m: -m[2])
    if not ranked:
        return math.inf, _prf(0, 0, len(gold))
    best_f1, best_threshold = 0.0, float(np.nextafter(ranked[0][2], math.inf))
    n_correct = 0
    for i, (s, t, score) in enumerate(ranked):
        n_correct += (s, t) in gold
        next_score = ranked[i + 1][2] if i + 1 < len(ranked) else None
        if next_score is not None and next_score == score:
            continue  # a threshold cannot separate tied scores
        f1 = _prf(n_correct, i + 1, len(gold))["f1"]
        if f1 > best_f1:
            best_f1 = f1
            threshold = score if next_score is None else (score + next_score) / 2
            # guard against the midpoint rounding onto the next score
            best_threshold = threshold if next_score is None or threshold > next_score else score
    return best_threshold, precision_recall_f1(ranked, gold, best_threshold)


def mine_split(
    x: np.ndarray, y: np.ndarray, data: BuccSplit, k: int = DEFAULT_K, strategy: str = "max"
) -> list[tuple[str, str, float]]:
    """Mined (src_id, tgt_id, margin) for the embedded sides of one split, highest first."""
    if len(x) != len(data.src_ids) or len(y) != len(data.tgt_ids):
        raise ValueError("embeddings do not match the number of sentences of the split")
    return candidates_to_ids(margin_candidates(x, y, k=k, strategy=strategy), data.src_ids, data.tgt_ids)
