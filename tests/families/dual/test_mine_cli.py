"""End-to-end runs of `xlt mine` on a tiny random BERT saved in tmp_path (`xlt align`: tests/families/alignment)."""

import json

import pytest
from helpers.bag_of_words import sentence

from xlt import cli


def run_cli(monkeypatch, verb, argv):
    assert verb in cli.verbs()
    return cli.main([verb, *argv])


def write_jsonl(path, rows):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


def write_bucc(directory, split, src, tgt, gold):
    directory.mkdir(parents=True, exist_ok=True)
    (directory / f"de-en.{split}.de").write_text("".join(f"de-{split}-{i}\t{s}\n" for i, s in enumerate(src)))
    (directory / f"de-en.{split}.en").write_text("".join(f"en-{split}-{j}\t{s}\n" for j, s in enumerate(tgt)))
    (directory / f"de-en.{split}.gold").write_text("".join(f"de-{split}-{i}\ten-{split}-{j}\n" for i, j in gold))


def test_mine_end_to_end(tmp_path, bag_of_words_bert, monkeypatch):
    bucc = tmp_path / "bucc"
    # dev: 4 copied sentences are the gold pairs; the other sentences never repeat
    write_bucc(
        bucc,
        "dev",
        [sentence(i) for i in (0, 1, 2, 3, 30, 31)],
        [sentence(i) for i in (40, 3, 2, 41, 1, 0, 42)],
        [(0, 5), (1, 4), (2, 2), (3, 1)],
    )
    # test: 3 copied gold pairs, 1 gold pair whose texts differ (missed), 1 copied non-gold
    # pair (false positive) -> 4 predicted, 3 correct, 4 gold: P = R = F1 = 3/4
    write_bucc(
        bucc,
        "test",
        [sentence(i) for i in (10, 11, 12, 13, 14, 50)],
        [sentence(i) for i in (12, 51, 10, 15, 11, 14, 52)],
        [(0, 2), (1, 4), (2, 0), (3, 3)],
    )
    out = tmp_path / "mine.json"
    pairs = tmp_path / "pairs.tsv"
    rc = run_cli(
        monkeypatch,
        "mine",
        [
            "--model",
            str(bag_of_words_bert),
            "--bucc-dir",
            str(bucc),
            "--pair",
            "de-en",
            "--layer",
            "0",
            "--out-metrics",
            str(out),
            "--out-pairs",
            str(pairs),
        ],
    )
    assert rc == 0
    data = json.loads(out.read_text())
    values = {(r["metric"], r.get("split")): r["value"] for r in data["metrics"]}
    assert values["f1", "tune"] == 1.0
    assert values["precision", "test"] == pytest.approx(0.75)
    assert values["recall", "test"] == pytest.approx(0.75)
    assert values["f1", "test"] == pytest.approx(0.75)
    assert data["meta"]["counts"]["test"] == {"predicted": 4, "correct": 3, "gold": 4}
    assert (
        data["meta"]["family"] == "dual"
    )  # rows of dual.csv say dual (they said "mine": a family filter dropped them)
    mined = {tuple(line.split("\t")[:2]) for line in pairs.read_text().splitlines()}
    assert mined == {
        ("de-test-0", "en-test-2"),
        ("de-test-1", "en-test-4"),
        ("de-test-2", "en-test-0"),
        ("de-test-4", "en-test-5"),
    }
    # per test source sentence: pairs kept, correct and gold (3 copied gold, 1 missed gold, 1 false positive)
    from xlt.core.metrics import read_examples
    from xlt.report.aggregate import aggregate

    counts, candidates = read_examples(tmp_path / "mine.examples.jsonl.gz")
    assert (counts["kind"], counts["split"], counts["interval_only"]) == ("mining", "test", True)
    assert (counts["kept"], counts["correct"], counts["gold"]) == (
        [1, 1, 1, 0, 1, 0],
        [1, 1, 1, 0, 0, 0],
        [1, 1, 1, 1, 0, 0],
    )
    # the tuning split keeps every source's candidates, to tune the threshold again per resample
    assert (candidates["kind"], candidates["split"], candidates["interval_only"]) == ("mining_tuning", "tune", True)
    assert candidates["gold"] == [1, 1, 1, 1, 0, 0] and [sum(h) for h in candidates["candidate_gold"]] == [
        1,
        1,
        1,
        1,
        0,
        0,
    ]
    table = aggregate([out], resamples=200).set_index(["metric", "split"])
    test = table.xs("test", level="split").loc[["precision", "recall", "f1"]]
    assert ((test.ci_low <= test.value) & (test.value <= test.ci_high) & (test.ci_low < test.ci_high)).all()
    from xlt.analysis.intervals import record_interval

    for metric, row in test.iterrows():  # the tuning split's set leaves the test split's intervals as they were
        alone = record_interval(
            {"metric": metric, "value": row.value, "lang": "de", "split": "test"}, [counts], resamples=200
        )
        assert (row.ci_low, row.ci_high) == alone, metric
    tune = table.xs("tune", level="split")
    scores = tune.loc[["precision", "recall", "f1"]]
    assert ((scores.ci_low <= scores.value) & (scores.value <= scores.ci_high)).all()
    assert tune.loc["threshold"].isna()[["ci_low", "ci_high"]].all()  # a margin value: no interval


def test_mine_reports_missing_split(tmp_path, bag_of_words_bert, monkeypatch, capsys):
    write_bucc(tmp_path, "sample", [sentence(0), sentence(1)], [sentence(1), sentence(0)], [(0, 1)])
    rc = run_cli(
        monkeypatch,
        "mine",
        [
            "--model",
            str(bag_of_words_bert),
            "--bucc-dir",
            str(tmp_path),
            "--pair",
            "de-en",
            "--out-metrics",
            str(tmp_path / "m.json"),
        ],
    )
    assert rc == 2
    assert "splits present for de-en: sample" in capsys.readouterr().err
