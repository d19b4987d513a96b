"""Bootstrap intervals, paired tests, McNemar and Holm: calibration on simulated data and
agreement with scipy's reference implementations."""

import numpy as np
import pytest
from scipy import stats

from xlt.analysis.bootstrap import (
    bootstrap_interval,
    paired_bootstrap,
    paired_p_values,
    point_metric,
    resample_counts,
    resampled_metric,
)
from xlt.analysis.significance import discordant_counts, holm, mcnemar_exact


def test_counts_are_resamples_of_n():
    counts = resample_counts(50, 30, seed=1)
    assert counts.shape == (30, 50)
    assert np.all(counts.sum(axis=1) == 50)
    assert np.array_equal(counts, resample_counts(50, 30, seed=1))
    assert not np.array_equal(counts, resample_counts(50, 30, seed=2))


def test_interval_coverage_of_known_accuracy():
    """1,000 test sets of n = 1,000 with true accuracy 0.7: the 95 % interval covers 0.7 in 93-97 %."""
    rng = np.random.default_rng(123)
    truth, n = 0.7, 1000
    correct = (rng.random((1000, n)) < truth).astype(int)
    gold = np.ones_like(correct)
    # same seeded resamples for every test set, as bootstrap_interval uses; the test sets
    # themselves are independent, so coverage is still over independent draws
    samples = resampled_metric("accuracy", correct, gold, resample_counts(n))
    low, high = np.percentile(samples, 2.5, axis=1), np.percentile(samples, 97.5, axis=1)
    coverage = np.mean((low <= truth) & (truth <= high))
    assert 0.93 <= coverage <= 0.97, coverage
    # and the batched path agrees with the one-set API
    one = bootstrap_interval("accuracy", correct[0], np.ones(n, int))
    assert one.low == pytest.approx(low[0]) and one.high == pytest.approx(high[0])


def test_error_rate_is_one_minus_accuracy():
    rng = np.random.default_rng(0)
    pred, gold = rng.integers(0, 3, 400), rng.integers(0, 3, 400)
    acc = bootstrap_interval("accuracy", pred, gold)
    err = bootstrap_interval("error_rate", pred, gold)
    assert err.estimate == pytest.approx(1 - acc.estimate)
    assert err.low == pytest.approx(1 - acc.high) and err.high == pytest.approx(1 - acc.low)


@pytest.mark.parametrize("metric, reference", [("pearson", stats.pearsonr), ("spearman", stats.spearmanr)])
def test_correlations_match_scipy_on_each_resample(metric, reference):
    rng = np.random.default_rng(5)
    x = rng.normal(size=60)
    y = np.round(x + rng.normal(size=60), 1)  # rounding makes ties, which Spearman must average
    counts = resample_counts(60, 20, seed=3)
    ours = resampled_metric(metric, x, y, counts)
    for r in range(20):
        idx = np.repeat(np.arange(60), counts[r].astype(int))
        assert ours[r] == pytest.approx(reference(x[idx], y[idx])[0], abs=1e-10)
    assert point_metric(metric, x, y) == pytest.approx(reference(x, y)[0], abs=1e-12)
    interval = bootstrap_interval(metric, x, y)
    assert interval.low < interval.estimate < interval.high


def test_paired_bootstrap_size_for_identical_systems():
    """Two equally good systems over 1,000 simulated test sets: rejects at 0.05 in <= 6 %."""
    rng = np.random.default_rng(7)
    n = 1000
    a = (rng.random((1000, n)) < 0.7).astype(float)
    b = (rng.random((1000, n)) < 0.7).astype(float)
    counts = resample_counts(n)
    samples = (a - b) @ counts.T / n
    p = paired_p_values((a - b).mean(axis=1), samples)
    rejection = np.mean(p < 0.05)
    assert rejection <= 0.06, rejection
    assert rejection >= 0.02, rejection  # not a test that can never reject
    # McNemar on the same sets: exact, so at most alpha
    only_a = np.sum((a == 1) & (b == 0), axis=1)
    only_b = np.sum((a == 0) & (b == 1), axis=1)
    assert np.mean(mcnemar_exact(only_a, only_b) < 0.05) <= 0.06


def test_paired_bootstrap_detects_a_real_difference_and_matches_batched_path():
    rng = np.random.default_rng(11)
    gold = rng.integers(0, 3, 2000)
    better = np.where(rng.random(2000) < 0.8, gold, (gold + 1) % 3)
    worse = np.where(rng.random(2000) < 0.7, gold, (gold + 1) % 3)
    result = paired_bootstrap("accuracy", better, gold, worse, gold)
    assert result.difference == pytest.approx(np.mean(better == gold) - np.mean(worse == gold))
    assert result.low < result.difference < result.high and result.low > 0
    assert result.p_value < 0.01
    same = paired_bootstrap("accuracy", better, gold, better, gold)
    assert same.difference == 0 and same.p_value == 1


@pytest.mark.parametrize("only_a, only_b", [(0, 0), (3, 0), (10, 12), (40, 61), (7, 7), (150, 100)])
def test_mcnemar_equals_binomtest(only_a, only_b):
    expected = 1.0 if only_a + only_b == 0 else stats.binomtest(only_a, only_a + only_b, 0.5).pvalue
    assert mcnemar_exact(only_a, only_b) == pytest.approx(expected, rel=1e-12)


def test_discordant_counts():
    assert discordant_counts([1, 1, 0, 0, 1], [1, 0, 1, 0, 0]) == (2, 1)
    with pytest.raises(ValueError, match="same examples"):
        discordant_counts([1, 0], [1])


def test_holm_matches_hand_computed_step_down():
    p = [0.01, 0.04, 0.03, 0.005]
    # sorted 0.005, 0.01, 0.03, 0.04 -> x4, x3, x2, x1 = 0.02, 0.03, 0.06, 0.04 -> monotone 0.02, 0.03, 0.06, 0.06
    assert np.allclose(holm(p), [0.03, 0.06, 0.06, 0.02])
    assert np.allclose(holm([0.5, 0.9]), [1.0, 1.0])
    assert holm([]).size == 0


def test_bad_inputs_are_named():
    with pytest.raises(ValueError, match="unknown metric 'f1'"):
        bootstrap_interval("f1", [1], [1])
    with pytest.raises(ValueError, match="differ in shape"):
        bootstrap_interval("accuracy", [1, 2], [1])
    with pytest.raises(ValueError, match="at least one example"):
        bootstrap_interval("accuracy", [], [])
    with pytest.raises(ValueError, match="confidence"):
        bootstrap_interval("accuracy", [1], [1], confidence=95)


def _sentences(n: int, seed: int, mean_loss: float = 2.0):
    """Per-sentence (summed masked-token loss, masked tokens), some sentences with none masked."""
    rng = np.random.default_rng(seed)
    tokens = rng.integers(0, 6, n)
    loss = np.array([rng.gamma(4.0, mean_loss / 4.0, t).sum() for t in tokens])
    return loss, tokens


def test_perplexity_of_each_resample_is_exp_of_its_pooled_loss():
    """Each resample's perplexity is computed from the drawn sentences themselves (a loop over
    resamples here as the reference), and the point estimate is exp(sum loss / sum tokens), the
    token-weighted definition `xlt perplexity` records, not a mean of per-sentence perplexities."""
    loss, tokens = _sentences(80, 1)
    counts = resample_counts(80, 25, seed=4)
    ours = resampled_metric("perplexity", loss, tokens, counts)
    for r in range(25):
        idx = np.repeat(np.arange(80), counts[r].astype(int))
        assert ours[r] == pytest.approx(np.exp(loss[idx].sum() / tokens[idx].sum()), rel=1e-12)
    np.testing.assert_allclose(resampled_metric("mlm_loss", loss, tokens, counts), np.log(ours), rtol=1e-12)
    assert point_metric("perplexity", loss, tokens) == pytest.approx(np.exp(loss.sum() / tokens.sum()), rel=1e-12)
    per_sentence = np.exp(loss[tokens > 0] / tokens[tokens > 0]).mean()
    assert point_metric("perplexity", loss, tokens) != pytest.approx(per_sentence, rel=1e-3)


def test_perplexity_interval_narrows_with_more_sentences_and_covers_the_estimate():
    small = bootstrap_interval("perplexity", *_sentences(50, 2))
    large = bootstrap_interval("perplexity", *_sentences(2000, 2))
    for one in (small, large):
        assert one.low < one.estimate < one.high
    assert (large.high - large.low) < (small.high - small.low) / 3


def test_paired_perplexity_difference_of_a_uniformly_better_model():
    """B's loss is A's minus 0.1 nat per masked token on every sentence: the paired interval of
    B - A is tight around the exact difference and excludes zero."""
    loss, tokens = _sentences(300, 3)
    better = loss - 0.1 * tokens
    paired = paired_bootstrap("perplexity", better, tokens, loss, tokens, resamples=500)
    expected = np.exp(better.sum() / tokens.sum()) - np.exp(loss.sum() / tokens.sum())
    assert paired.difference == pytest.approx(expected)
    assert paired.high < 0 and paired.p_value < 0.01
    same = paired_bootstrap("perplexity", loss, tokens, loss, tokens, resamples=200)
    assert (same.difference, same.low, same.high, same.p_value) == (0.0, 0.0, 0.0, 1.0)
