"""Per-example outputs beside every metrics file: written, read back, and enough to recompute
the metric without the model."""

import numpy as np
import pytest
from scipy import stats

from xlt.analysis.bootstrap import point_metric
from xlt.core.metrics import MetricsFile, example_set, examples_path, read_examples
from xlt.evaluate.retrieval import bitext_retrieval, retrieval_examples, retrieval_records
from xlt.evaluate.sts import sts_examples, sts_records


def test_examples_file_sits_beside_the_metrics_and_round_trips(tmp_path):
    metrics = MetricsFile("freeze_depth", "run")
    metrics.add("accuracy", 0.5, lang="de")
    metrics.examples.append(
        example_set("classification", "accuracy", prediction=np.array([0, 1]), gold=[1, 1], lang="de")
    )
    metrics.write(tmp_path / "test.json")
    assert examples_path(tmp_path / "test.json") == str(tmp_path / "test.examples.jsonl.gz")
    (one,) = read_examples(tmp_path / "test.examples.jsonl.gz")
    assert one == {"kind": "classification", "metric": "accuracy", "lang": "de", "prediction": [0, 1], "gold": [1, 1]}
    assert point_metric("accuracy", one["prediction"], one["gold"]) == 0.5


def test_no_examples_no_file(tmp_path):
    MetricsFile("x", "run").write(tmp_path / "train.json")
    assert not (tmp_path / "train.examples.jsonl.gz").exists()


def test_example_sets_reject_ragged_lists_and_unknown_kinds():
    with pytest.raises(ValueError, match="parallel lists"):
        example_set("classification", "accuracy", prediction=[0, 1], gold=[1])
    with pytest.raises(ValueError, match="unknown examples kind"):
        example_set("f1", "f1", prediction=[0], gold=[1])


def test_retrieval_examples_recompute_the_accuracy():
    rng = np.random.default_rng(0)
    xx = rng.normal(size=(40, 8))
    en = xx + rng.normal(scale=1.2, size=(40, 8))
    result = bitext_retrieval(xx, en, match="index")
    by_direction = {
        r["direction"]: r["value"] for r in retrieval_records(result, lang="de") if r["metric"] == "accuracy@1"
    }
    for one in retrieval_examples(result, lang="de"):
        assert np.mean(one["correct"]) == pytest.approx(by_direction[one["direction"]])
        assert point_metric("accuracy", one["retrieved"], one["gold"]) == pytest.approx(by_direction[one["direction"]])


def test_text_matched_retrieval_counts_duplicates_as_correct():
    xx = np.eye(3)
    en = np.array([[1.0, 0, 0], [1.0, 0, 0], [0, 0, 1.0]])  # rows 0 and 1 are the same sentence
    result = bitext_retrieval(xx, en, ["a", "b", "c"], ["x", "x", "z"], match="text")
    (xx_to_en, _) = retrieval_examples(result)
    assert xx_to_en["correct"] == [True, True, True] and result.correct_xx_to_en == 3


def test_sts_examples_recompute_both_correlations():
    rng = np.random.default_rng(1)
    a, b = rng.normal(size=(30, 6)), rng.normal(size=(30, 6))
    gold = rng.uniform(0, 5, 30)
    records = {(r["metric"], r["similarity"]): r["value"] for r in sts_records(a, b, gold, lang="en")}
    for one in sts_examples(a, b, gold, lang="en"):
        sim = one["similarity"]
        assert stats.spearmanr(one["gold"], one["predicted"])[0] == pytest.approx(records[("spearman", sim)])
        assert point_metric("pearson", one["predicted"], one["gold"]) == pytest.approx(records[("pearson", sim)])
