"""STS similarities and correlations against scipy computed independently."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.spatial import distance
from scipy.stats import pearsonr, spearmanr

from xlt.evaluate.sts import SIMILARITIES, paired_similarity, sts_correlations, sts_records


def scipy_similarity(a: np.ndarray, b: np.ndarray, similarity: str) -> np.ndarray:
    """Row-by-row similarity from scipy.spatial.distance (distances negated, as STS scoring wants)."""
    fn = {
        "cosine": lambda x, y: 1.0 - distance.cosine(x, y),
        "euclidean": lambda x, y: -distance.euclidean(x, y),
        "manhattan": lambda x, y: -distance.cityblock(x, y),
        "dot": lambda x, y: float(sum(float(p) * float(q) for p, q in zip(x, y))),
    }[similarity]
    return np.array([fn(x, y) for x, y in zip(a, b)])


@pytest.fixture
def pairs():
    rng = np.random.default_rng(0)
    a = rng.normal(size=(40, 7)).astype(np.float32)
    b = (0.6 * a + rng.normal(size=(40, 7))).astype(np.float32)
    gold = rng.uniform(0, 5, size=40).round(1)
    return a, b, gold


@pytest.mark.parametrize("similarity", SIMILARITIES)
def test_paired_similarity_matches_scipy_distance(pairs, similarity):
    a, b, _ = pairs
    np.testing.assert_allclose(
        paired_similarity(a, b, similarity), scipy_similarity(a, b, similarity), rtol=1e-6, atol=1e-6
    )


def test_hand_computed_pair():
    a = np.array([[3.0, 4.0]])
    b = np.array([[4.0, 0.0]])
    assert paired_similarity(a, b, "cosine")[0] == pytest.approx(12 / 20)
    assert paired_similarity(a, b, "euclidean")[0] == pytest.approx(-np.sqrt(1 + 16))
    assert paired_similarity(a, b, "manhattan")[0] == pytest.approx(-5.0)
    assert paired_similarity(a, b, "dot")[0] == pytest.approx(12.0)


def test_zero_vector_has_cosine_zero_not_nan():
    # torch.nn.functional.normalize (used by sentence-transformers) floors the norm instead of dividing by 0
    a = np.array([[0.0, 0.0], [1.0, 0.0]])
    b = np.array([[1.0, 1.0], [2.0, 0.0]])
    np.testing.assert_allclose(paired_similarity(a, b, "cosine"), [0.0, 1.0])


@pytest.mark.parametrize("similarity", SIMILARITIES)
def test_correlations_match_scipy_stats(pairs, similarity):
    a, b, gold = pairs
    scores = scipy_similarity(a, b, similarity)
    got = sts_correlations(a, b, gold, [similarity])
    assert got[("pearson", similarity)] == pytest.approx(pearsonr(gold, scores)[0], abs=1e-7)
    assert got[("spearman", similarity)] == pytest.approx(spearmanr(gold, scores)[0], abs=1e-7)


def test_distance_is_negated_so_closer_pairs_correlate_positively():
    a = np.zeros((4, 2))
    b = np.array([[4.0, 0.0], [3.0, 0.0], [2.0, 0.0], [1.0, 0.0]])  # distance falls as gold rises
    gold = [1.0, 2.0, 3.0, 4.0]
    got = sts_correlations(a, b, gold, ["euclidean", "manhattan"])
    assert got[("spearman", "euclidean")] == pytest.approx(1.0)
    assert got[("pearson", "manhattan")] == pytest.approx(1.0)


def test_matches_sentence_transformers_pairwise_functions(pairs):
    util = pytest.importorskip("sentence_transformers.util")
    a, b, gold = pairs
    reference = {
        "cosine": util.pairwise_cos_sim,
        "euclidean": util.pairwise_euclidean_sim,
        "manhattan": util.pairwise_manhattan_sim,
        "dot": util.pairwise_dot_score,
    }
    for similarity, fn in reference.items():
        np.testing.assert_allclose(paired_similarity(a, b, similarity), fn(a, b).numpy(), rtol=1e-5, atol=1e-5)


def test_records_carry_metric_similarity_and_dims(pairs):
    a, b, gold = pairs
    records = sts_records(a, b, gold, lang="de", split="test", dataset="stsb_multi_mt")
    assert len(records) == 2 * len(SIMILARITIES)
    keys = {(r["metric"], r["similarity"]) for r in records}
    assert keys == {(c, s) for c in ("pearson", "spearman") for s in SIMILARITIES}
    assert all(r["lang"] == "de" and r["split"] == "test" and r["dataset"] == "stsb_multi_mt" for r in records)


def test_bad_shapes_are_rejected(pairs):
    a, b, gold = pairs
    with pytest.raises(ValueError, match="same shape"):
        paired_similarity(a, b[:-1], "cosine")
    with pytest.raises(ValueError, match="one gold score per pair"):
        sts_correlations(a, b, gold[:-1])
    with pytest.raises(ValueError, match="unknown similarity"):
        paired_similarity(a, b, "jaccard")
