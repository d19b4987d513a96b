"""The data registry's `format: cls` hook (published CLS layout) and label-free unlabelled splits."""

import pytest

from xlt.core.errors import XltError
from xlt.core.io import read_jsonl
from xlt.data.prepare import prepare


def review_file(path, items):
    path.parent.mkdir(parents=True, exist_ok=True)
    body = "".join(f"<item><rating>{r}</rating><text>{t}</text></item>\n" for r, t in items)
    path.write_text(f"<?xml version='1.0'?>\n{body}", encoding="utf-8")


def test_cls_layout_through_prepare(tmp_path):
    root = tmp_path / "cls-acl10-unprocessed"
    review_file(root / "en" / "music" / "train.review", [("5.0", "great &amp; loud"), ("1.0", "awful")])
    review_file(root / "en" / "music" / "unlabeled.review", [("3.0", "so so"), ("4.0", "nice")])
    review_file(root / "jp" / "music" / "test.review", [("2.0", "dame"), ("4.0", "yoi")])
    spec = {
        "source": "local",
        "task": "sentiment",
        "format": "cls",
        "files": "cls-acl10-unprocessed",
        "domain": "music",
        "languages": ["en", "ja"],
        "splits": {"train": ["en"], "unlabeled": ["en"], "test": "all"},
    }
    with pytest.raises(XltError, match=r"CLS file .*en/music/test.review not found"):
        prepare("cls-music", spec, tmp_path / "out", root=tmp_path)
    assert not (tmp_path / "out").exists()  # nothing written before every file loaded
    review_file(root / "en" / "music" / "test.review", [("4.0", "fine")])
    info = prepare("cls-music", spec, tmp_path / "out", root=tmp_path)
    assert info["counts"] == {"en/train": 2, "en/unlabeled": 2, "en/test": 1, "ja/test": 2}
    assert read_jsonl(tmp_path / "out" / "en" / "train.jsonl") == [
        {"text": "great & loud", "label": 1},
        {"text": "awful", "label": 0},
    ]
    assert read_jsonl(tmp_path / "out" / "en" / "unlabeled.jsonl") == [{"text": "so so"}, {"text": "nice"}]
    assert read_jsonl(tmp_path / "out" / "ja" / "test.jsonl") == [
        {"text": "dame", "label": 0},
        {"text": "yoi", "label": 1},
    ]


def test_cls_format_needs_a_domain(tmp_path):
    spec = {"source": "local", "task": "sentiment", "format": "cls", "files": "x", "splits": {"train": ["en"]}}
    with pytest.raises(XltError, match="format cls needs"):
        prepare("cls", spec, tmp_path / "out", root=tmp_path)


def test_unlabelled_split_loses_labels_for_any_source(tmp_path):
    spec = {
        "source": "demo",
        "task": "nli",
        "splits": {"train": ["en"], "unlabeled": ["en"]},
        "sizes": {"train": 6, "unlabeled": 6},
    }
    prepare("demo", spec, tmp_path)
    assert all("label" in r for r in read_jsonl(tmp_path / "en" / "train.jsonl"))
    pool = read_jsonl(tmp_path / "en" / "unlabeled.jsonl")
    assert pool and all(set(r) == {"text", "text_pair"} for r in pool)
