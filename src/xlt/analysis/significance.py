"""Significance tests for comparing systems: McNemar's exact test and Holm's correction."""

from __future__ import annotations

import numpy as np
from scipy.stats import binom


def discordant_counts(a_correct, b_correct) -> tuple[int, int]:
    """(examples only A gets right, examples only B gets right)."""
    a_correct, b_correct = np.asarray(a_correct, bool), np.asarray(b_correct, bool)
    if a_correct.shape != b_correct.shape:
        raise ValueError(f"McNemar needs both systems on the same examples ({a_correct.shape} vs {b_correct.shape})")
    return int(np.sum(a_correct & ~b_correct)), int(np.sum(~a_correct & b_correct))


def mcnemar_exact(only_a, only_b):
    """Two-sided exact McNemar p-value: binomial(only_a + only_b, 1/2) on the discordant pairs.

    Vectorised over arrays of counts; no discordant pairs gives p = 1.
    """
    only_a, only_b = np.asarray(only_a), np.asarray(only_b)
    total = only_a + only_b
    p = np.minimum(1.0, 2 * binom.cdf(np.minimum(only_a, only_b), total, 0.5))
    p = np.where(total == 0, 1.0, p)
    return float(p) if p.ndim == 0 else p


def holm(p_values) -> np.ndarray:
    """Holm-adjusted p-values (family-wise error control, step-down), in the input order."""
    p = np.asarray(p_values, dtype=float)
    m = p.size
    if m == 0:
        return p
    order = np.argsort(p, kind="stable")
    stepped = np.maximum.accumulate(np.minimum(1.0, (m - np.arange(m)) * p[order]))
    adjusted = np.empty(m)
    adjusted[order] = stepped
    return adjusted
