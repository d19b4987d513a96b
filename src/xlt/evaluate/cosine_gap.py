"""How much closer is a sentence to its translation than to an unrelated sentence? Per-layer cosine gap.

For every hidden state of n parallel pairs (x_i, e_i) (x: the non-English side, e: English):

    cosine_gap = mean_i cos(x_i, e_i) - mean_i cos(x_i, e_pi(i))

where pi is a *derangement* of 0..n-1 (pi(i) != i for every i): each non-English sentence is
paired once with a translation and once with a random English sentence that is not its own
translation. pi is a random cyclic permutation drawn with Sattolo's algorithm from
`numpy.random.default_rng(seed)`: one n-cycle, so never a fixed point, and fully determined by
(n, seed). The same pi serves every layer and both variants (raw and centred) of a language, so
layers differ only in their vectors, never in which pairs were drawn.

Why a gap and not the raw translation cosine: mean-pooled vectors of a multilingual encoder are
all close to each other (anisotropy), so a translation cosine of 0.9 may mean nothing when any two
sentences score 0.88. Subtracting the random pairs' mean removes that floor; 0 means translations
are no closer than strangers. Identical translations (x_i = e_i) give 1 - mean random cosine.

"Centred" subtracts each side's mean vector (per language and layer) first: the same centring as
the per-layer retrieval accuracy (`xlt.evaluate.alignment.center`), which removes the
language-specific offset. Cosines are computed in float64 on unit-length vectors
(`xlt.evaluate.vectors.l2_normalise`, 1e-12 norm floor).

Per pair i the examples file keeps cos(x_i, e_i) and cos(x_i, e_pi(i)), so `xlt aggregate`
bootstraps the gap over pairs (a resampled pair keeps its random partner). The sets are
interval-only: no paired test compares them, so the family's existing test table is unchanged.
"""

from __future__ import annotations

import logging
from typing import Sequence

import numpy as np

from xlt.core.metrics import example_set, record
from xlt.evaluate.alignment import CENTERED_SUFFIX, EncodedBitext, center
from xlt.evaluate.vectors import l2_normalise

GAP_METRIC = "cosine_gap"
GAP_KIND = "cosine_gap"  # the examples kind (xlt.core.metrics.EXAMPLE_KINDS)
MIN_PAIRS = 2  # one pair has no other sentence to be its random partner

log = logging.getLogger(__name__)


def derangement(n: int, seed: int = 0) -> np.ndarray:
    """pi with pi[i] != i for all i: a random n-cycle (Sattolo's algorithm), seeded."""
    if n < MIN_PAIRS:
        raise ValueError(f"a derangement needs at least {MIN_PAIRS} items, got {n}")
    rng = np.random.default_rng(seed)
    pi = np.arange(n)
    for i in range(n - 1, 0, -1):
        j = int(rng.integers(0, i))  # j < i (Sattolo): every element leaves its place, one cycle
        pi[i], pi[j] = pi[j], pi[i]
    return pi


def pair_cosines(src: np.ndarray, eng: np.ndarray, partner: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(cos(src_i, eng_i), cos(src_i, eng_partner[i])) for every i, in float64."""
    src, eng = l2_normalise(src, np.float64), l2_normalise(eng, np.float64)
    if src.shape != eng.shape or src.ndim != 2:
        raise ValueError(f"need two (n, dim) arrays of the same shape, got {src.shape} and {eng.shape}")
    return np.einsum("nd,nd->n", src, eng), np.einsum("nd,nd->n", src, eng[partner])


def cosine_gap(src: np.ndarray, eng: np.ndarray, partner: np.ndarray) -> float:
    """Mean translation cosine minus mean random-partner cosine."""
    translation, random = pair_cosines(src, eng, partner)
    return float(np.mean(translation - random))


def cosine_gap_records(
    encoded: Sequence[EncodedBitext], center_languages: bool = False, seed: int = 0, examples_out: list | None = None
) -> list[dict]:
    """Cosine gap records (metric, value, lang, layer) for every layer of every bitext.

    The metric is "cosine_gap", or "cosine_gap_centered" with centring. A bitext with fewer than
    two pairs has no random partner and gets no record (logged). With `examples_out`, every
    layer's per-pair cosines go there as an interval-only "cosine_gap" set.
    """
    metric = GAP_METRIC + (CENTERED_SUFFIX if center_languages else "")
    records = []
    for bitext in encoded:
        n = len(next(iter(bitext.texts.values())))
        if n < MIN_PAIRS:
            log.warning("%s: %d pair(s), no random partner: no %s", bitext.lang, n, metric)
            continue
        partner = derangement(n, seed)  # one draw per language: every layer and variant share it
        for layer in sorted(bitext.texts):
            src, eng = bitext.texts[layer], bitext.english[layer]
            if center_languages:
                src, eng = center(src), center(eng)
            translation, random = pair_cosines(src, eng, partner)
            records.append(record(metric, float(np.mean(translation - random)), lang=bitext.lang, layer=layer))
            if examples_out is not None:
                examples_out.append(
                    example_set(
                        GAP_KIND,
                        metric,
                        translation_cosine=translation,
                        random_cosine=random,
                        interval_only=True,
                        lang=bitext.lang,
                        layer=layer,
                    )
                )
    return records
