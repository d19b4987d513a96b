"""ci_low / ci_high in the aggregated table, from each metrics file's examples file."""
import numpy as np
import pytest

from xlt.analysis.bootstrap import bootstrap_interval
from xlt.analysis.intervals import record_interval
from xlt.core.metrics import MetricsFile, example_set, record
from xlt.evaluate.retrieval import bitext_retrieval, retrieval_examples, retrieval_records
from xlt.report.aggregate import aggregate


def _classification_run(tmp_path, name="test.json"):
    rng = np.random.default_rng(3)
    metrics = MetricsFile("freeze_depth", "d6", axes={"freeze_depth": 6})
    for lang, n, p in [("de", 300, 0.7), ("fr", 200, 0.6)]:
        gold = rng.integers(0, 3, n)
        pred = np.where(rng.random(n) < p, gold, (gold + 1) % 3)
        metrics.add("accuracy", float(np.mean(pred == gold)), lang=lang)
        metrics.examples.append(example_set("classification", "accuracy", prediction=pred, gold=gold, lang=lang))
    metrics.add("accuracy", float(np.mean([r["value"] for r in metrics.records])), lang="avg")
    metrics.add("wall_s", 3.0)
    metrics.write(tmp_path / name)
    return metrics


def test_aggregated_rows_carry_intervals_around_their_values(tmp_path):
    metrics = _classification_run(tmp_path)
    table = aggregate([tmp_path / "test.json"]).set_index("lang", drop=False)
    assert list(table.columns[-3:]) == ["value", "ci_low", "ci_high"]
    accuracy_rows = table[table.metric == "accuracy"]
    assert (accuracy_rows.ci_low < accuracy_rows.value).all() and (accuracy_rows.value < accuracy_rows.ci_high).all()
    de = metrics.examples[0]
    alone = bootstrap_interval("accuracy", de["prediction"], de["gold"])
    assert table.loc["de", "ci_low"] == pytest.approx(alone.low) and table.loc["de", "ci_high"] == pytest.approx(alone.high)
    # the average pools 500 examples: narrower than either language's interval
    width = accuracy_rows.ci_high - accuracy_rows.ci_low
    assert width["avg"] < width["de"] and width["avg"] < width["fr"]
    assert table[table.metric == "wall_s"].ci_low.isna().all()


def test_runs_without_examples_files_aggregate_as_before(tmp_path):
    MetricsFile("x", "r", records=[record("accuracy", 0.5, lang="de")]).write(tmp_path / "old.json")
    table = aggregate([tmp_path / "old.json"])
    assert "ci_low" not in table.columns and table.value.tolist() == [0.5]


def test_retrieval_records_each_find_their_direction():
    rng = np.random.default_rng(0)
    xx = rng.normal(size=(80, 8))
    result = bitext_retrieval(xx, xx + rng.normal(scale=1.5, size=(80, 8)), match="index")
    sets = retrieval_examples(result, lang="de")
    for rec in retrieval_records(result, lang="de"):
        low, high = record_interval(rec, sets)
        assert low <= rec["value"] <= high, rec
    assert record_interval(record("f1", 0.5, lang="de"), sets) is None


def test_xlt_aggregate_puts_intervals_in_the_table_and_the_summary(tmp_path):
    import pandas as pd

    from xlt.analysis.bootstrap import bootstrap_interval, resample_counts, resampled_metric
    from xlt.cli import main

    metrics = _classification_run(tmp_path)
    out = tmp_path / "freeze_depth.csv"
    main(["aggregate", str(tmp_path / "test.json"), "--out", str(out), "--resamples", "500", "--seed", "1",
          "--confidence", "0.9"])
    table, summary = pd.read_csv(out), pd.read_csv(tmp_path / "freeze_depth_summary.csv")
    assert "avg" not in set(table.lang) and summary.lang.tolist() == ["avg"]
    for frame in (table, summary):
        assert list(frame.columns[-3:]) == ["value", "ci_low", "ci_high"]
    de, fr = metrics.examples[0], metrics.examples[1]
    alone = bootstrap_interval("accuracy", de["prediction"], de["gold"], resamples=500, seed=1, confidence=0.9)
    row = table[(table.lang == "de") & (table.metric == "accuracy")].iloc[0]
    assert (row.ci_low, row.ci_high) == pytest.approx((alone.low, alone.high))
    # the macro average: each language resampled within itself, averaged per resample
    draws = (resampled_metric("accuracy", np.asarray(de["prediction"]), np.asarray(de["gold"]),
                              resample_counts(len(de["gold"]), 500, 1))
             + resampled_metric("accuracy", np.asarray(fr["prediction"]), np.asarray(fr["gold"]),
                                resample_counts(len(fr["gold"]), 500, 2))) / 2
    assert (summary.iloc[0].ci_low, summary.iloc[0].ci_high) == pytest.approx(tuple(np.percentile(draws, [5, 95])))


def test_mean_retrieval_resamples_both_directions_with_the_same_draws():
    from xlt.analysis.bootstrap import resample_counts, resampled_metric

    rng = np.random.default_rng(5)
    xx = rng.normal(size=(60, 8))
    result = bitext_retrieval(xx, xx + rng.normal(scale=1.4, size=(60, 8)), match="index")
    sets = retrieval_examples(result, lang="de")
    (mean_error,) = [r for r in retrieval_records(result, lang="de") if r["metric"] == "mean_error"]
    counts = resample_counts(60, 400, 7)
    draws = np.mean([resampled_metric("error_rate", np.asarray(one["correct"], dtype=np.int64), np.ones(60, dtype=np.int64),
                                      counts) for one in sets], axis=0)
    assert record_interval(mean_error, sets, resamples=400, seed=7) == pytest.approx(tuple(np.percentile(draws, [2.5, 97.5])))


def _perplexity_set(lang, n, seed):
    """A perplexity example set: per sentence a summed masked-token loss and its masked tokens
    (some sentences without a mask, as short ones have)."""
    rng = np.random.default_rng(seed)
    tokens = rng.integers(0, 6, n)
    loss = tokens * rng.gamma(2.0, 1.5, n)
    return example_set("perplexity", "perplexity", loss=loss, tokens=tokens, masks=["h"] * n, mask_seed=11,
                       lang=lang, split="dev")


@pytest.mark.parametrize("statistics", [{}, {"resamples": 300, "seed": 4, "confidence": 0.9}])
def test_repeated_set_intervals_are_the_intervals_aggregate_gives_each_set(statistics):
    """Scored once, a set's interval is exactly record_interval's for a record over it (the
    reference job's, from its kept examples), for every metric of the set and every set."""
    from xlt.analysis.intervals import RepeatedSetIntervals

    intervals = RepeatedSetIntervals(**statistics)
    sets = [_perplexity_set("nl", 90, 1), _perplexity_set("multilingual", 90, 2)]
    for one in sets:
        for metric in ("perplexity", "mlm_loss"):
            mine = intervals.interval((one["lang"], one["split"]), metric, one["loss"], one["tokens"])
            theirs = record_interval(record(metric, 1.0, lang=one["lang"], split=one["split"]), sets, **statistics)
            assert mine == theirs, (one["lang"], metric)


def test_repeated_set_intervals_draw_once_per_set_and_reuse_the_draws(monkeypatch):
    """Later evaluations of a set (other losses, the same sentences) resample the same sentences:
    one draw per set, and every step's interval is record_interval's with the same settings."""
    import xlt.analysis.intervals as module

    first, other = _perplexity_set("nl", 50, 1), _perplexity_set("multilingual", 70, 2)
    steps = [{**first, "loss": list(np.asarray(first["loss"]) * (1 - 0.1 * step))} for step in range(3)]  # improving
    expected = [record_interval(record("perplexity", 1.0, lang="nl", split="dev"), [one], resamples=200, seed=3)
                for one in steps]
    draws = []
    real = module.resample_counts
    monkeypatch.setattr(module, "resample_counts", lambda *args: draws.append(args) or real(*args))
    intervals = module.RepeatedSetIntervals(resamples=200, seed=3)
    for one, interval in zip(steps, expected):
        assert intervals.interval(("nl", "dev"), "perplexity", one["loss"], one["tokens"]) == interval
        intervals.interval(("multilingual", "dev"), "perplexity", other["loss"], other["tokens"])
    assert draws == [(50, 200, 3), (70, 200, 3)]
    assert len(set(expected)) == 3  # the steps' intervals differ: the same draws, other losses
    with pytest.raises(ValueError, match="70 examples but the resample matrix has 50"):
        intervals.interval(("nl", "dev"), "perplexity", other["loss"], other["tokens"])  # not the set it drew for


def test_aggregate_keeps_the_bounds_a_record_brings(tmp_path):
    """A record computed with its bounds (adapt's per-step perplexity) keeps them; the records
    beside it still get theirs from the examples file."""
    one = _perplexity_set("nl", 80, 1)
    value = float(np.exp(np.sum(one["loss"]) / np.sum(one["tokens"])))
    brought = {**record("perplexity", value, lang="nl", split="dev", step=0), "ci_low": 1.5, "ci_high": 2.5}
    MetricsFile("adapt", "r", records=[brought, record("perplexity", value, lang="nl", split="dev")],
                examples=[one]).write(tmp_path / "metrics.json")
    table = aggregate([tmp_path / "metrics.json"], resamples=200)
    step, final = table[table.step.notna()].iloc[0], table[table.step.isna()].iloc[0]
    assert (step.value, step.ci_low, step.ci_high) == (value, 1.5, 2.5)
    assert (final.ci_low, final.ci_high) == record_interval(record("perplexity", value, lang="nl", split="dev"), [one],
                                                            resamples=200)
