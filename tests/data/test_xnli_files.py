import os
from collections import Counter
from pathlib import Path

import pytest

from xlt.core.errors import XltError
from xlt.data.xnli_files import LABEL_IDS, label_id, load_xnli_headerless, load_xnli_mt_train, load_xnli_tsv

HEADER = (
    "language gold_label sentence1_binary_parse sentence2_binary_parse sentence1_parse "
    "sentence2_parse sentence1 sentence2 promptID pairID genre label1 label2 label3 label4 "
    "label5 sentence1_tokenized sentence2_tokenized match"
).split()


def xnli_row(lang, gold, s1, s2, pair_id):
    values = {
        "language": lang,
        "gold_label": gold,
        "sentence1": s1,
        "sentence2": s2,
        "pairID": str(pair_id),
        "genre": "fiction",
        "match": "True",
    }
    return "\t".join(values.get(c, "( x )" if "parse" in c else "") for c in HEADER)


def shared_data() -> Path:
    env = os.environ.get("XLT_SHARED_DATA")
    return Path(env) if env else Path(__file__).resolve().parents[2] / ".." / "shared" / "data"


def test_hf_label_order():
    assert LABEL_IDS == {"entailment": 0, "neutral": 1, "contradiction": 2}
    assert label_id("contradictory") == 2 and label_id(" Neutral ") == 1
    with pytest.raises(XltError, match="unknown NLI label '-'"):
        label_id("-")


def test_xnli_tsv_per_language(tmp_path):
    path = tmp_path / "xnli.test.tsv"
    rows = [
        xnli_row("de", "neutral", 'Er sagte "ja', "Sie ging.", 1),
        xnli_row("en", "entailment", "He said yes.", "He agreed.", 1),
        xnli_row("de", "contradiction", "Es regnet.", "Es ist trocken.", 2),
        xnli_row("fr", "entailment", "Il pleut.", "Il fait mauvais.", 1),
    ]
    path.write_text("\t".join(HEADER) + "\n" + "\n".join(rows) + "\n", encoding="utf-8")
    data = load_xnli_tsv(path)
    assert sorted(data) == ["de", "en", "fr"]
    assert data["de"] == [
        {"text": 'Er sagte "ja', "text_pair": "Sie ging.", "label": 1},
        {"text": "Es regnet.", "text_pair": "Es ist trocken.", "label": 2},
    ]
    assert data["en"] == [{"text": "He said yes.", "text_pair": "He agreed.", "label": 0}]
    assert list(load_xnli_tsv(path, ["fr"])) == ["fr"]
    with pytest.raises(XltError, match=r"no examples for language\(s\) \['sw'\]"):
        load_xnli_tsv(path, ["fr", "sw"])


def test_xnli_tsv_errors(tmp_path):
    path = tmp_path / "xnli.dev.tsv"
    path.write_text("language\tsentence1\tsentence2\nde\ta\tb\n", encoding="utf-8")
    with pytest.raises(XltError, match=r"no column\(s\) \['gold_label'\]"):
        load_xnli_tsv(path)
    path.write_text("\t".join(HEADER) + "\n" + xnli_row("de", "maybe", "a", "b", 1) + "\n", encoding="utf-8")
    with pytest.raises(XltError, match="line 2: unknown NLI label 'maybe'"):
        load_xnli_tsv(path)
    with pytest.raises(XltError, match="not found"):
        load_xnli_tsv(tmp_path / "missing.tsv")


def test_mt_train_and_headerless(tmp_path):
    mt = tmp_path / "multinli.train.de.tsv"
    mt.write_text("premise\thypo\tlabel\nA .\tB .\tcontradictory\nC\tD\tneutral\n", encoding="utf-8")
    assert load_xnli_mt_train(mt) == [
        {"text": "A .", "text_pair": "B .", "label": 2},
        {"text": "C", "text_pair": "D", "label": 1},
    ]
    txt = tmp_path / "test.txt"
    txt.write_text("P1\tH1\tentailment\nP2\tH2\tcontradiction\n", encoding="utf-8")
    assert [r["label"] for r in load_xnli_headerless(txt)] == [0, 2]
    txt.write_text("P1\tH1\n", encoding="utf-8")
    with pytest.raises(XltError, match="line 1: 2 tab-separated column"):
        load_xnli_headerless(txt)


@pytest.mark.realdata
def test_xglue_german_test_set():
    path = shared_data() / "xnli_de_xglue" / "test.txt"
    if not path.is_file():
        pytest.skip(f"{path} not available")
    records = load_xnli_headerless(path)
    # XNLI test has 5010 pairs per language, balanced over the three labels.
    assert len(records) == 5010
    assert Counter(r["label"] for r in records) == {0: 1670, 1: 1670, 2: 1670}
    assert all(r["text"] and r["text_pair"] for r in records)
    with open(path, encoding="utf-8") as f:
        vocabulary = Counter(line.rstrip("\n").split("\t")[2] for line in f)
    assert set(vocabulary) == set(LABEL_IDS)
