import json

import pytest

from xlt.core.errors import XltError
from xlt.core.settings import split_languages
from xlt.data.prepare import prepare
from xlt.data.sources import load_records


def write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def test_local_tsv_with_columns_and_string_labels(tmp_path):
    write(
        tmp_path / "nli" / "test.de.tsv",
        'sentence1\tsentence2\tgold_label\nEin Hund\tEin Tier\tentailment\nA "quoted" one\tB\tcontradiction\n',
    )
    spec = {
        "source": "local",
        "task": "nli",
        "files": "nli/{split}.{lang}.tsv",
        "columns": {"text": "sentence1", "text_pair": "sentence2", "label": "gold_label"},
        "label_names": ["entailment", "neutral", "contradiction"],
    }
    records = load_records("my-nli", spec, "de", "test", root=tmp_path)
    assert records == [
        {"text": "Ein Hund", "text_pair": "Ein Tier", "label": 0},
        {"text": 'A "quoted" one', "text_pair": "B", "label": 2},
    ]


def test_local_headerless_csv_and_jsonl(tmp_path):
    write(tmp_path / "sts.csv", "a,b,4.5\nc,d,0.0\n")
    spec = {
        "source": "local",
        "task": "sts",
        "files": str(tmp_path / "sts.csv"),
        "header": False,
        "columns": {"text": 0, "text_pair": 1, "score": 2},
    }
    assert load_records("s", spec, "en", "test")[0] == {"text": "a", "text_pair": "b", "score": 4.5}
    write(tmp_path / "c.jsonl", json.dumps({"sentence": "hallo"}) + "\n")
    spec = {"source": "local", "task": "corpus", "files": {"train": "c.jsonl"}, "columns": {"text": "sentence"}}
    assert load_records("c", spec, "nl", "train", root=tmp_path) == [{"text": "hallo"}]


def test_missing_file_and_column_errors_name_the_problem(tmp_path):
    spec = {"source": "local", "task": "nli", "files": "x/{split}.{lang}.tsv"}
    with pytest.raises(XltError, match=r"file not found for lang=fr split=dev: .*x/dev.fr.tsv"):
        load_records("xn", spec, "fr", "dev", root=tmp_path)
    write(tmp_path / "x" / "dev.fr.tsv", "premise\thypothesis\tlabel\na\tb\t0\n")
    with pytest.raises(XltError, match=r"no column\(s\) \['text'"):
        load_records("xn", spec, "fr", "dev", root=tmp_path)
    write(tmp_path / "x" / "dev.fr.tsv", "text\ttext_pair\tlabel\na\tb\tmaybe\n")
    with pytest.raises(XltError, match="label_names"):
        load_records("xn", spec, "fr", "dev", root=tmp_path)


def test_a_row_with_a_missing_or_extra_field_names_its_line(tmp_path):
    # csv.DictReader filled a short row with None ("None" as text) and dropped extra fields
    spec = {"source": "local", "task": "nli", "files": "x.tsv"}
    write(tmp_path / "x.tsv", "text\ttext_pair\tlabel\na\tb\t0\n\nc\t1\n")
    with pytest.raises(
        XltError,
        match=r"x.tsv line 4 has 2 fields, the header has 3; a field is missing or holds a "
        r"stray tab: fix that line",
    ):
        load_records("xn", spec, "en", "train", root=tmp_path)
    write(tmp_path / "x.tsv", "text\ttext_pair\tlabel\na\tb\tc\t0\n")
    with pytest.raises(XltError, match=r"x.tsv line 2 has 4 fields"):
        load_records("xn", spec, "en", "train", root=tmp_path)


def test_unlabelled_rows_dropped_and_out_of_range_label_rejected(tmp_path):
    write(
        tmp_path / "t.jsonl",
        '{"text": "a", "text_pair": "b", "label": -1}\n{"text": "c", "text_pair": "d", "label": 1}\n',
    )
    spec = {"source": "local", "task": "nli", "files": str(tmp_path / "t.jsonl")}
    assert load_records("m", spec, "en", "train") == [{"text": "c", "text_pair": "d", "label": 1}]
    write(tmp_path / "t.jsonl", '{"text": "a", "text_pair": "b", "label": 3}\n')
    with pytest.raises(XltError, match="label 3"):
        load_records("m", spec, "en", "train")


def test_hf_failure_points_to_prefetch(monkeypatch):
    import datasets

    def offline(*args, **kwargs):
        raise ConnectionError("no network")

    monkeypatch.setattr(datasets, "load_dataset", offline)
    spec = {
        "source": "hf",
        "task": "nli",
        "path": "facebook/xnli",
        "name": "{lang}",
        "split_names": {"dev": "validation"},
    }
    with pytest.raises(XltError, match=r"'facebook/xnli' \(config 'de', split 'validation'\).*xlt prefetch"):
        load_records("xnli", spec, "de", "dev")


def test_prepare_writes_every_split_language_only_after_all_loaded(tmp_path):
    spec = {
        "source": "demo",
        "task": "nli",
        "languages": ["en", "qaa"],
        "splits": {"train": ["en"], "test": "all"},
        "sizes": {"train": 9, "test": 6},
    }
    assert split_languages(spec) == {"train": ["en"], "test": ["en", "qaa"]}
    info = prepare("d", spec, tmp_path / "d")
    assert info["counts"] == {"en/train": 9, "en/test": 6, "qaa/test": 6}
    assert (tmp_path / "d" / "qaa" / "test.jsonl").read_text().count("\n") == 6
    bad = dict(spec, sizes={"train": 9})  # no size for test: nothing may be written
    with pytest.raises(XltError, match="no size for split 'test'"):
        prepare("e", bad, tmp_path / "e")
    assert not (tmp_path / "e").exists()
