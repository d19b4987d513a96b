"""Loaders for LASER-layout Tatoeba files and STS-b / stsb_multi_mt / JSONL pair files."""

from __future__ import annotations

import json

import pytest

from xlt.core.errors import XltError
from xlt.data.bitext_files import available_tatoeba_langs, describe_bitext_jsonl, load_bitext_jsonl, load_tatoeba
from xlt.data.sts_files import describe_sts_file, detect_sts_format, load_sts


def write_pair(directory, lang, xx_lines, en_lines):
    (directory / f"tatoeba.{lang}-eng.{lang}").write_text("".join(f"{s}\n" for s in xx_lines), encoding="utf-8")
    (directory / f"tatoeba.{lang}-eng.eng").write_text("".join(f"{s}\n" for s in en_lines), encoding="utf-8")


def test_tatoeba_loads_aligned_lines(tmp_path):
    write_pair(tmp_path, "deu", ["Hallo.", "Wie geht's?"], ["Hello.", "How are you?"])
    write_pair(tmp_path, "fra", ["Salut."], ["Hi."])
    (tmp_path / "README.md").write_text("not data")
    assert available_tatoeba_langs(tmp_path) == ["deu", "fra"]
    assert load_tatoeba(tmp_path, "deu") == (["Hallo.", "Wie geht's?"], ["Hello.", "How are you?"])


def test_tatoeba_keeps_unicode_line_separators_inside_a_sentence(tmp_path):
    (tmp_path / "tatoeba.deu-eng.deu").write_text("a\u2028b\r\nc\n", encoding="utf-8")
    (tmp_path / "tatoeba.deu-eng.eng").write_text("A B\nC", encoding="utf-8")  # no final newline
    assert load_tatoeba(tmp_path, "deu") == (["a\u2028b", "c"], ["A B", "C"])


def test_tatoeba_differing_line_counts_name_both_files(tmp_path):
    write_pair(tmp_path, "deu", ["Eins.", "Zwei.", "Drei."], ["One.", "Two."])
    with pytest.raises(XltError) as err:
        load_tatoeba(tmp_path, "deu")
    message = str(err.value)
    assert "tatoeba.deu-eng.deu has 3 lines" in message and "tatoeba.deu-eng.eng has 2" in message


def test_tatoeba_empty_file_is_named(tmp_path):
    write_pair(tmp_path, "deu", ["Eins."], ["One."])
    (tmp_path / "tatoeba.deu-eng.eng").write_text("", encoding="utf-8")
    with pytest.raises(XltError, match=r"tatoeba\.deu-eng\.eng is empty"):
        load_tatoeba(tmp_path, "deu")


def test_tatoeba_empty_line_is_named(tmp_path):
    write_pair(tmp_path, "deu", ["Eins.", "", "Drei."], ["One.", "Two.", "Three."])
    with pytest.raises(XltError, match=r"tatoeba\.deu-eng\.deu line 2 is empty"):
        load_tatoeba(tmp_path, "deu")


def test_tatoeba_unknown_code_lists_available_codes(tmp_path):
    write_pair(tmp_path, "deu", ["Eins."], ["One."])
    write_pair(tmp_path, "fra", ["Un."], ["One."])
    with pytest.raises(XltError) as err:
        load_tatoeba(tmp_path, "ita")
    message = str(err.value)
    assert "tatoeba.ita-eng.ita" in message and "deu, fra" in message


def test_tatoeba_missing_english_side_and_directory(tmp_path):
    (tmp_path / "tatoeba.deu-eng.deu").write_text("Eins.\n", encoding="utf-8")
    with pytest.raises(XltError, match=r"tatoeba\.deu-eng\.eng"):
        load_tatoeba(tmp_path, "deu")
    with pytest.raises(XltError, match="does not exist"):
        load_tatoeba(tmp_path / "nowhere", "deu")


def test_bitext_jsonl(tmp_path):
    path = tmp_path / "demo_bitext" / "nl" / "test.jsonl"
    path.parent.mkdir(parents=True)
    rows = [{"text": "Hallo.", "text_pair": "Hello."}, {"text": "Dag.", "text_pair": "Bye."}]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    assert load_bitext_jsonl(path) == (["Hallo.", "Dag."], ["Hello.", "Bye."])
    assert tuple(describe_bitext_jsonl(path)) == ("demo_bitext", "nl", "test")
    path.write_text('{"text": "Hallo.", "text_pair": ""}\n', encoding="utf-8")
    with pytest.raises(XltError, match=r"test\.jsonl line 1 needs non-empty 'text'"):
        load_bitext_jsonl(path)
    path.write_text('{"text": "Hallo.", "text_pair": "Hello."}\n{oops\n', encoding="utf-8")
    with pytest.raises(XltError, match=r"test\.jsonl line 2 is not JSON"):
        load_bitext_jsonl(path)
    path.write_text("", encoding="utf-8")
    with pytest.raises(XltError, match=r"test\.jsonl is empty"):
        load_bitext_jsonl(path)


STSB_LINES = [
    # quotes are plain characters in the original STS-b: QUOTE_NONE must keep them
    'main-news\theadlines\t2016\t0001\t4.200\t"Let\'s go," he said.\tHe said: "let\'s go".',
    "main-forums\tanswer-answer\t2016\t0008\t3\tA b c. \tA b d. \tsource one\tsource two",
    "main-captions\tMSRvid\t2012test\t0024\t0.000\tA cat.\tA car.",
]


def test_stsbenchmark_original_layout(tmp_path):
    path = tmp_path / "sts-test.csv"
    path.write_text("\n".join(STSB_LINES) + "\n", encoding="utf-8")
    assert detect_sts_format(path) == "stsbenchmark"
    pairs = load_sts(path)
    assert pairs.sentences1 == ['"Let\'s go," he said.', "A b c. ", "A cat."]
    assert pairs.sentences2 == ['He said: "let\'s go".', "A b d. ", "A car."]
    assert pairs.scores == [4.2, 3.0, 0.0]
    assert tuple(describe_sts_file(path)) == ("stsbenchmark", "en", "test")


def test_stsb_multi_mt_csv_with_quoted_commas_and_optional_header(tmp_path):
    body = '"Ein Mann, der lacht.",Ein Mann lacht.,4.5\nEine Katze.,Ein Hund.,0.5\n'
    plain = tmp_path / "stsb-de-test.csv"
    plain.write_text(body, encoding="utf-8")
    headed = tmp_path / "stsb-de-dev.csv"
    headed.write_text("sentence1,sentence2,similarity_score\n" + body, encoding="utf-8")
    for path in (plain, headed):
        assert detect_sts_format(path) == "stsb_multi_mt"
        pairs = load_sts(path)
        assert pairs.sentences1 == ["Ein Mann, der lacht.", "Eine Katze."]
        assert pairs.scores == [4.5, 0.5]
    assert tuple(describe_sts_file(plain)) == ("stsb_multi_mt", "de", "test")


def test_sts_jsonl(tmp_path):
    path = tmp_path / "stsb" / "de" / "test.jsonl"
    path.parent.mkdir(parents=True)
    rows = [{"text": "a", "text_pair": "b", "score": 1.5}, {"text": "c", "text_pair": "d", "score": 4}]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    assert tuple(load_sts(path)) == (["a", "c"], ["b", "d"], [1.5, 4.0])
    assert tuple(describe_sts_file(path)) == ("stsb", "de", "test")


@pytest.mark.parametrize(
    "name, content, problem",
    [
        ("sts-test.csv", "", "is empty"),
        ("sts-test.csv", "g\tf\t2012\t1\tfive\tA.\tB.\tx\n" * 2, "score 'five' is not a number"),
        ("stsb-de-test.csv", "a,b,1\nc,d\n", "row 2: 2 comma-separated fields"),
        ("stsb-de-test.csv", "a,b,1\n", "only one sentence pair"),
        ("test.jsonl", '{"text": "a", "score": 1}\n', "lacks ['text_pair']"),
        ("test.jsonl", '{"text": "a", "text_pair": "b", "score": 1}\n\n{oops\n', "line 3 is not JSON"),
    ],
)
def test_sts_bad_input_names_file_and_problem(tmp_path, name, content, problem):
    path = tmp_path / name
    path.write_text(content, encoding="utf-8")
    with pytest.raises(XltError) as err:
        load_sts(path)
    assert str(path) in str(err.value) and problem in str(err.value)
