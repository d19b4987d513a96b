"""A dataset's declared item alignment (datasets.<name>.item_aligned, xlt.data.item_alignment):
prepare-data checks it on the data and records it, and the evaluating verbs pass it on with
their example sets, where the bootstrap reads it (xlt.analysis.intervals)."""

import pytest

from xlt.cli import main
from xlt.core.errors import XltError
from xlt.core.io import read_json
from xlt.core.metrics import examples_path, read_examples
from xlt.data.item_alignment import check_aligned, declared_alignment
from xlt.data.prepare import prepare

LANGS = ["en", "qaa", "qab"]


def _demo(task: str, **declared) -> dict:
    return {"source": "demo", "task": task, "languages": LANGS, "splits": ["test"], "sizes": {"test": 12}, **declared}


@pytest.mark.parametrize("task", ["nli", "sentiment", "sts"])
def test_the_demo_sets_are_aligned_as_config_yaml_declares(tmp_path, task):
    info = prepare("d", _demo(task, item_aligned=True), tmp_path)
    assert info["item_aligned"] is True
    assert declared_alignment([tmp_path / lang / "test.jsonl" for lang in LANGS]) is True


def test_a_declaration_reaches_info_json_and_nothing_is_read_where_none_was_made(tmp_path):
    prepare("off", _demo("nli", item_aligned=False), tmp_path / "off")
    prepare("plain", _demo("nli"), tmp_path / "plain")
    assert declared_alignment([tmp_path / "off" / "en" / "test.jsonl"]) is False
    assert "item_aligned" not in read_json(tmp_path / "plain" / "info.json")
    assert declared_alignment([tmp_path / "plain" / "en" / "test.jsonl"]) is None
    assert declared_alignment([tmp_path / "elsewhere.jsonl"]) is None  # a file given by hand
    assert (
        declared_alignment([tmp_path / "off" / "en" / "test.jsonl", tmp_path / "plain" / "en" / "test.jsonl"]) is None
    )


def test_disagreeing_languages_are_named():
    rows = [{"text": str(i), "label": i % 3} for i in range(5)]
    check_aligned("x", {("en", "test"): rows, ("de", "test"): [dict(r) for r in rows], ("de", "dev"): rows[:2]})
    with pytest.raises(
        XltError,
        match=r"dataset x declares item_aligned, but split test has 4 items in de and 5 in en; "
        r"fix the files, or set datasets\.x\.item_aligned: false",
    ):
        check_aligned("x", {("en", "test"): rows, ("de", "test"): rows[1:]})
    swapped = [rows[1], rows[0], *rows[2:]]
    with pytest.raises(XltError, match=r"in split test item 0 has label 1 in de and 0 in en"):
        check_aligned("x", {("en", "test"): rows, ("de", "test"): swapped})
    scores = [{"text": "a", "text_pair": "b", "score": s} for s in (0.5, 4.0)]
    with pytest.raises(XltError, match=r"item 1 has score 3\.0 in de and 4\.0 in en"):
        check_aligned("x", {("en", "test"): scores, ("de", "test"): [scores[0], dict(scores[1], score=3.0)]})


@pytest.mark.usefixtures("one_thread")
def test_evaluate_passes_the_declaration_on_with_its_example_sets(demo_model_dir, tmp_path):
    prepare("d", _demo("nli", item_aligned=True), tmp_path / "d")
    files = [str(tmp_path / "d" / lang / "test.jsonl") for lang in LANGS]
    assert (
        main(
            [
                "evaluate",
                "--model",
                str(demo_model_dir),
                "--data",
                *files,
                "--langs",
                ",".join(LANGS),
                "--out",
                str(tmp_path / "eval.json"),
                "--max-length",
                "32",
                "--device",
                "cpu",
            ]
        )
        == 0
    )
    sets = read_examples(examples_path(tmp_path / "eval.json"))
    assert [(s["lang"], s["item_aligned"]) for s in sets] == [(lang, True) for lang in LANGS]
    assert all(
        "item_aligned" not in r for r in read_json(tmp_path / "eval.json")["metrics"]
    )  # a setting, not a dimension
