"""Percentile bootstrap over test examples, vectorised.

Every resample is represented by how often it draws each example (a count matrix of shape
resamples x n), so a mean-type metric over all resamples is one matrix product and a
correlation a handful of them: no Python loop per resample. Because the count matrix depends
only on (n, resamples, seed), two systems scored on the same examples share it, which is what
makes the paired bootstrap paired.

Masked-LM perplexity is not a mean over examples but a ratio of two sums over sentences
(summed masked-token loss / masked tokens); a resample's perplexity is exp of the ratio of
its weighted sums, two matrix products as well. Mining precision, recall and F1 are ratios of
sums too: source sentences are resampled with their kept, correct and gold pair counts, at the
fixed tuned threshold (`resampled_mining`); on the tuning split itself the threshold is tuned
again in every resample (`resampled_tuned_mining`: cumulative sums over the score-sorted
candidates give every resample's counts at every possible cut).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from xlt.analysis.defaults import DEFAULT_CONFIDENCE, DEFAULT_RESAMPLES, DEFAULT_SEED

METRICS = ("accuracy", "error_rate", "pearson", "spearman", "perplexity", "mlm_loss", "mean_difference")
MINING_METRICS = ("precision", "recall", "f1")


def resample_counts(n: int, resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED) -> np.ndarray:
    """(resamples, n) float matrix: how many times resample r draws example i (rows sum to n)."""
    if n < 1:
        raise ValueError("bootstrap needs at least one example (got n=0): is the examples file empty?")
    if resamples < 1:
        raise ValueError(f"statistics.resamples must be >= 1 (got {resamples})")
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, n, size=(resamples, n))
    flat = (draws + (np.arange(resamples) * n)[:, None]).ravel()
    return np.bincount(flat, minlength=resamples * n).reshape(resamples, n).astype(np.float64)


def _weighted_mean(values: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """values (..., n) -> (..., resamples)."""
    return values @ counts.T / counts.shape[1]


def _resampled_loss(loss: np.ndarray, tokens: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Token-weighted mean loss of every resample of sentences: sum of the drawn sentences'
    summed losses over the sum of their masked tokens (nan where a resample drew none)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        return (loss @ counts.T) / (tokens @ counts.T)


def _weighted_pearson(x: np.ndarray, y: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Pearson r of every resample; x, y are (n,) (shared) or (resamples, n) (per resample)."""
    n = counts.shape[1]

    def wsum(v):
        return v @ counts.T / n if v.ndim == 1 else np.einsum("rn,rn->r", counts, v) / n

    return _pearson_from_means(wsum, x, y)


def _pearson_from_means(wsum, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Pearson r per resample from the weighted means `wsum(v)` (one per resample); nan where a side is constant."""
    mx, my = wsum(x), wsum(y)
    sxx = wsum(x * x) - mx**2
    syy = wsum(y * y) - my**2
    sxy = wsum(x * y) - mx * my
    with np.errstate(invalid="ignore", divide="ignore"):
        return sxy / np.sqrt(sxx * syy)


def _sorted_ranks(values: np.ndarray, by_example: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each example's average (tie-aware) rank within each resample, rows in sorted-value order.

    by_example is the count matrix transposed, (n, resamples), so that gathering examples moves
    whole contiguous rows. An example drawn w times with the values below it drawn W times in
    total holds ranks W+1..W+w; ties share the mean over their group, as
    scipy.stats.rankdata(method="average"). Returns (order, ranks of shape (n, resamples)).
    """
    order = np.argsort(values, kind="stable")
    sorted_vals = values[order]
    new_group = np.r_[True, sorted_vals[1:] != sorted_vals[:-1]]
    weight = by_example[order]
    if new_group.all():  # no ties: each example is its own group
        below = np.cumsum(weight, axis=0) - weight
        return order, below + (weight + 1) / 2
    group_weight = np.add.reduceat(weight, np.flatnonzero(new_group), axis=0)
    below = np.cumsum(group_weight, axis=0) - group_weight
    return order, (below + (group_weight + 1) / 2)[np.cumsum(new_group) - 1]


def _resampled_spearman(x: np.ndarray, y: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Spearman rho of every resample: the weighted Pearson of within-resample ranks, summed
    in x's sorted order (sums do not care about order, so only y's ranks are permuted)."""
    n = counts.shape[1]
    by_example = np.ascontiguousarray(counts.T)
    order_x, rank_x = _sorted_ranks(x, by_example)
    order_y, rank_y = _sorted_ranks(y, by_example)
    position_in_y = np.empty(n, dtype=np.intp)
    position_in_y[order_y] = np.arange(n)
    rank_y = rank_y[position_in_y[order_x]]
    weight = by_example[order_x]

    def wsum(v):
        return np.einsum("nr,nr->r", weight, v) / n

    return _pearson_from_means(wsum, rank_x, rank_y)


def resampled_metric(metric: str, a: np.ndarray, b: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """The metric on every resample.

    accuracy / error_rate: a = predictions, b = gold (any leading batch axes allowed, e.g.
    many simulated test sets at once: (..., n) -> (..., resamples)).
    pearson / spearman: a, b = the two score vectors (n,) -> (resamples,).
    perplexity / mlm_loss: a = each sentence's summed masked-token loss (nats), b = its number
    of masked tokens; exp(sum a / sum b) and sum a / sum b over the drawn sentences.
    mean_difference: mean of a - b over the drawn examples (the alignment cosine gap: a = each
    pair's translation cosine, b = its random partner's cosine).
    """
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape:
        raise ValueError(f"{metric}: the two arrays differ in shape ({a.shape} vs {b.shape})")
    if a.shape[-1] != counts.shape[1]:
        raise ValueError(f"{metric}: {a.shape[-1]} examples but the resample matrix has {counts.shape[1]}")
    if metric == "accuracy":
        return _weighted_mean((a == b).astype(np.float64), counts)
    if metric == "error_rate":
        return _weighted_mean((a != b).astype(np.float64), counts)
    if metric == "pearson":
        return _weighted_pearson(a.astype(np.float64), b.astype(np.float64), counts)
    if metric == "spearman":
        return _resampled_spearman(a.astype(np.float64), b.astype(np.float64), counts)
    if metric == "mean_difference":
        return _weighted_mean(a.astype(np.float64) - b.astype(np.float64), counts)
    if metric in ("perplexity", "mlm_loss"):
        loss = _resampled_loss(a.astype(np.float64), b.astype(np.float64), counts)
        if metric == "mlm_loss":
            return loss
        with np.errstate(over="ignore"):
            return np.exp(loss)
    raise ValueError(f"unknown metric {metric!r}; known: {', '.join(METRICS)}")


def _ratio(numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    """numerator / denominator, 0 where the denominator is 0 (as xlt.evaluate.mining scores it)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(denominator > 0, numerator / denominator, 0.0)


def resampled_mining(metric: str, kept, correct, gold, counts: np.ndarray) -> np.ndarray:
    """Mining precision, recall or F1 of every resample of source sentences: each sentence
    brings its kept (predicted parallel at the tuned threshold), correct and gold pair counts,
    so P = sum correct / sum kept, R = sum correct / sum gold over the drawn sentences (three
    matrix products); 0 where a sum is 0, as the point estimate. (n,) -> (resamples,)."""
    kept, correct, gold = (np.asarray(v, dtype=np.float64) for v in (kept, correct, gold))
    if not kept.shape == correct.shape == gold.shape == (counts.shape[1],):
        raise ValueError(
            f"{metric}: kept, correct and gold need one count per source sentence of the resample "
            f"matrix ({counts.shape[1]}); got {kept.shape}, {correct.shape}, {gold.shape}"
        )
    n_kept, n_correct, n_gold = (v @ counts.T for v in (kept, correct, gold))
    precision, recall = _ratio(n_correct, n_kept), _ratio(n_correct, n_gold)
    if metric == "precision":
        return precision
    if metric == "recall":
        return recall
    if metric == "f1":
        return _ratio(2 * precision * recall, precision + recall)
    raise ValueError(f"unknown mining metric {metric!r}; known: {', '.join(MINING_METRICS)}")


# resamples x candidates per block of `resampled_tuned_mining`: a few arrays of this many float64
# (32 MiB each), whatever the size of the tuning split
_TUNING_BLOCK = 1 << 22


def _candidates_by_score(candidate_scores, candidate_gold) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """All candidates, highest score first: their source sentence, whether gold (1.0/0.0), and
    the position of the last candidate of every distinct score (the cuts a threshold can make)."""
    lengths = [len(scores) for scores in candidate_scores]
    if lengths != [len(flags) for flags in candidate_gold]:
        raise ValueError("every source sentence needs one gold flag per candidate score")
    source = np.repeat(np.arange(len(lengths)), lengths)
    scores = np.fromiter((x for row in candidate_scores for x in row), dtype=np.float64, count=len(source))
    hits = np.fromiter((x for row in candidate_gold for x in row), dtype=np.float64, count=len(source))
    order = np.argsort(-scores, kind="stable")
    ranked = scores[order]
    last_of_score = np.flatnonzero(np.r_[ranked[1:] != ranked[:-1], True])
    return source[order], hits[order], last_of_score


def resampled_tuned_mining(metric: str, candidate_scores, candidate_gold, gold, counts: np.ndarray) -> np.ndarray:
    """Mining precision, recall or F1 of every resample of source sentences with the threshold
    tuned again on the resample, as xlt.evaluate.mining.tune_threshold tunes it on the split.

    Each sentence brings its candidates' scores, their gold flags and its gold pair count. The
    possible cuts are the split's distinct scores; cut j keeps every candidate scoring at least
    the j-th highest, so a resample's kept and correct counts at all cuts are cumulative sums of
    how often it draws each candidate (C @ K for the sentences' cumulative count matrix K, without
    building K). The F1-best cut wins, the first (highest threshold) on ties, as in
    tune_threshold; a cut whose score the resample did not draw keeps what the cut above it
    keeps, so it never wins over it. Resamples go in blocks to bound memory. (n,) -> (resamples,)."""
    if metric not in MINING_METRICS:
        raise ValueError(f"unknown mining metric {metric!r}; known: {', '.join(MINING_METRICS)}")
    gold = np.asarray(gold, dtype=np.float64)
    if not len(candidate_scores) == len(candidate_gold) == len(gold) == counts.shape[1]:
        raise ValueError(
            f"{metric}: candidate scores, gold flags and gold counts need one entry per source sentence "
            f"of the resample matrix ({counts.shape[1]})"
        )
    source, hits, cuts = _candidates_by_score(candidate_scores, candidate_gold)
    if not len(source):
        return np.zeros(counts.shape[0])  # nothing mined: nothing predicted, every score 0
    block = max(1, _TUNING_BLOCK // len(source))
    return np.concatenate(
        [
            _tuned_block(metric, counts[start : start + block], source, hits, cuts, gold)
            for start in range(0, counts.shape[0], block)
        ]
    )


def _tuned_block(
    metric: str, counts: np.ndarray, source: np.ndarray, hits: np.ndarray, cuts: np.ndarray, gold: np.ndarray
) -> np.ndarray:
    drawn = counts[:, source]  # how often each resample draws each candidate (with its sentence)
    n_kept = np.cumsum(drawn, axis=1)[:, cuts]
    n_correct = np.cumsum(drawn * hits, axis=1)[:, cuts]
    n_gold = (counts @ gold)[:, None]
    # the same operations as the point estimate's _prf, so equal counts give bit-equal F1 and ties
    precision, recall = _ratio(n_correct, n_kept), _ratio(n_correct, n_gold)
    f1 = _ratio(2 * precision * recall, precision + recall)
    best = np.argmax(f1, axis=1)[:, None]  # first maximum = highest threshold
    # all F1 0: tune_threshold predicts nothing, and P = R = 0 here as well (no correct pair)
    chosen = {"precision": precision, "recall": recall, "f1": f1}[metric]
    return np.take_along_axis(chosen, best, axis=1)[:, 0]


def point_metric(metric: str, a, b) -> float:
    """The metric on the examples themselves (the estimate the interval goes around)."""
    a, b = np.asarray(a), np.asarray(b)
    return float(resampled_metric(metric, a, b, np.ones((1, a.shape[-1])))[..., 0])


@dataclass(frozen=True)
class Interval:
    estimate: float
    low: float
    high: float


def percentiles(samples: np.ndarray, confidence: float) -> tuple[np.ndarray, np.ndarray]:
    if not 0 < confidence < 1:
        raise ValueError(f"statistics.confidence must be between 0 and 1 (got {confidence})")
    tail = (1 - confidence) / 2 * 100
    return np.nanpercentile(samples, tail, axis=-1), np.nanpercentile(samples, 100 - tail, axis=-1)


def bootstrap_interval(
    metric: str,
    a,
    b,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    confidence: float = DEFAULT_CONFIDENCE,
) -> Interval:
    """Percentile bootstrap interval of one metric over examples."""
    a = np.asarray(a)
    samples = resampled_metric(metric, a, b, resample_counts(a.shape[-1], resamples, seed))
    low, high = percentiles(samples, confidence)
    return Interval(point_metric(metric, a, b), float(low), float(high))


@dataclass(frozen=True)
class PairedResult:
    difference: float  # system A minus system B
    low: float
    high: float
    p_value: float


def paired_p_values(observed: np.ndarray, samples: np.ndarray) -> np.ndarray:
    """Two-sided paired-bootstrap p-value: how often the resampled difference, centred on the
    observed one (the null's shape), lands at least as far from zero as the observed one."""
    observed = np.asarray(observed)[..., None]
    extreme = np.sum(np.abs(samples - observed) >= np.abs(observed), axis=-1)
    return (1 + extreme) / (1 + samples.shape[-1])


def paired_bootstrap(
    metric: str,
    a_first,
    a_second,
    b_first,
    b_second,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    confidence: float = DEFAULT_CONFIDENCE,
) -> PairedResult:
    """Difference metric(A) - metric(B) for two systems on the same examples.

    For accuracy / error_rate: (a_first, a_second) = A's predictions and gold, likewise B.
    For correlations: A's (predicted, gold) scores and B's.
    """
    n = np.asarray(a_first).shape[-1]
    if np.asarray(b_first).shape[-1] != n:
        raise ValueError(
            f"paired bootstrap needs both systems on the same examples ({n} vs {np.asarray(b_first).shape[-1]})"
        )
    counts = resample_counts(n, resamples, seed)
    samples = resampled_metric(metric, a_first, a_second, counts) - resampled_metric(metric, b_first, b_second, counts)
    observed = point_metric(metric, a_first, a_second) - point_metric(metric, b_first, b_second)
    low, high = percentiles(samples, confidence)
    return PairedResult(observed, float(low), float(high), float(paired_p_values(observed, samples)))
