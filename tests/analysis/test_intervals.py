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
