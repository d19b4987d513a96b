import pytest
from test_mlm_commands import run_verb

from xlt.core.errors import XltError
from xlt.core.io import read_jsonl, write_jsonl
from xlt.data.sample import balanced_quotas, distinct_texts, sample_texts


def _files(tmp_path):
    paths = []
    for lang, n in (("en", 30), ("fr", 12), ("de", 5)):
        path = tmp_path / lang / "dev.jsonl"
        # every premise three times (XNLI), each with its own hypothesis
        write_jsonl(
            path,
            [{"text": f"{lang} premise {i // 3}", "text_pair": f"{lang} hypothesis {i}", "label": 0} for i in range(n)],
        )
        paths.append(path)
    return paths


def test_quotas_split_evenly_with_the_remainder_first():
    assert balanced_quotas(10, 3) == [4, 3, 3]
    assert balanced_quotas(2, 3) == [1, 1, 0]
    assert sum(balanced_quotas(10000, 15)) == 10000


def test_distinct_texts_deduplicate_in_file_order(tmp_path):
    en = _files(tmp_path)[0]
    assert distinct_texts(en) == [f"en premise {i}" for i in range(10)]
    both = distinct_texts(en, ["text", "text_pair"])
    assert len(both) == 10 + 30 and both[:3] == ["en premise 0", "en hypothesis 0", "en hypothesis 1"]
    with pytest.raises(XltError, match="not allowed"):
        distinct_texts(en, ["label"])


def test_sample_is_balanced_seeded_and_in_file_order(tmp_path):
    files = _files(tmp_path)
    first = sample_texts(files[:2], 9, seed=3, fields=["text", "text_pair"], exact=True)
    assert [r["lang"] for r in first] == ["en"] * 5 + ["fr"] * 4
    assert first == sample_texts(files[:2], 9, seed=3, fields=["text", "text_pair"], exact=True)
    assert first != sample_texts(files[:2], 9, seed=4, fields=["text", "text_pair"], exact=True)
    pool = distinct_texts(files[0], ["text", "text_pair"])
    positions = [pool.index(r["text"]) for r in first if r["lang"] == "en"]
    assert positions == sorted(positions) and len(set(positions)) == 5
    # de has 2 distinct premises: capped it gives all of them, size-matched it is an error
    capped = sample_texts(files, 9, seed=1)
    assert [r["lang"] for r in capped].count("de") == 2
    with pytest.raises(XltError, match="has 2 distinct sentences but the size-matched set needs 3"):
        sample_texts(files, 9, seed=1, exact=True)


def test_sample_texts_verb_matches_the_size_of_another_file(tmp_path):
    files = _files(tmp_path)
    target = tmp_path / "target.jsonl"
    write_jsonl(target, [{"text": f"doel {i}"} for i in range(7)])
    out = tmp_path / "eval" / "multilingual" / "dev.jsonl"
    run_verb(
        "sample-texts",
        [
            "--data",
            str(files[0]),
            str(files[1]),
            "--fields",
            "text",
            "text_pair",
            "--size-of",
            str(target),
            "--out",
            str(out),
        ],
    )
    rows = read_jsonl(out)
    assert len(rows) == 7 and [r["lang"] for r in rows].count("en") == 4
    run_verb("sample-texts", ["--data", str(files[1]), "--max-size", "100", "--out", str(out)])
    assert [r["text"] for r in read_jsonl(out)] == [f"fr premise {i}" for i in range(4)]
