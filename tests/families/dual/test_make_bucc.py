"""BUCC-layout files from bitext (gold + one-sided distractors) and splitting one BUCC split."""

import json

import numpy as np
import pytest

from xlt import cli
from xlt.core.errors import XltError
from xlt.data.bucc import bucc_from_bitext, split_bucc
from xlt.data.bucc_files import load_bucc_split
from xlt.evaluate.mining import mine_split, tune_threshold


def bitext(n, prefix="s"):
    return [f"{prefix}{i} xx" for i in range(n)], [f"{prefix}{i} en" for i in range(n)]


def test_gold_pairs_are_translations_and_distractors_have_no_partner():
    texts, english = bitext(40)
    data = bucc_from_bitext(texts, english, "qaa-en", "test", gold_fraction=0.25, seed=5)
    translation = dict(zip(texts, english))
    src = dict(zip(data.src_ids, data.src_sentences))
    tgt = dict(zip(data.tgt_ids, data.tgt_sentences))
    assert len(data.gold) == 10
    assert len(src) == 10 + 15 and len(tgt) == 10 + 15  # the 30 other pairs: 15 give their source, 15 their English
    assert all(translation[src[s]] == tgt[t] for s, t in data.gold)
    unpaired = set(src) - {s for s, _ in data.gold}
    assert all(translation[src[s]] not in tgt.values() for s in unpaired)
    # a target-only distractor never translates any source sentence
    src_numbers = {sentence.split()[0] for sentence in src.values()}
    tgt_only = {tgt[t].split()[0] for t in set(tgt) - {t for _, t in data.gold}}
    assert len(tgt_only) == 15 and not src_numbers & tgt_only
    assert data.src_ids == [f"qaa-{i:06d}" for i in range(25)]
    # deterministic for a seed, different for another
    again = bucc_from_bitext(texts, english, "qaa-en", "test", gold_fraction=0.25, seed=5)
    assert again.src_sentences == data.src_sentences and again.gold == data.gold
    assert (
        bucc_from_bitext(texts, english, "qaa-en", "test", gold_fraction=0.25, seed=6).src_sentences
        != data.src_sentences
    )


def test_repeated_sentences_are_skipped():
    texts = ["a", "b", "a", "c"]
    english = ["A", "B", "C", "B"]
    data = bucc_from_bitext(texts, english, "qaa-en", "dev", gold_fraction=1.0)
    assert sorted(data.src_sentences) == ["a", "b"] and sorted(data.tgt_sentences) == ["A", "B"]


def test_too_small_bitext_is_an_error():
    with pytest.raises(XltError, match="give no gold pair"):
        bucc_from_bitext(["a"], ["A"], "qaa-en", "dev", gold_fraction=0.2)


def test_split_bucc_partitions_gold_and_sentences():
    texts, english = bitext(50)
    whole = bucc_from_bitext(texts, english, "de-en", "test", gold_fraction=0.4, seed=2)
    tune, test = split_bucc(whole, 0.25, seed=1)
    assert (tune.split, test.split) == ("dev", "test")
    assert len(tune.gold) == 5 and len(test.gold) == 15
    for side in ("src_sentences", "tgt_sentences"):
        a, b = getattr(tune, side), getattr(test, side)
        assert not set(a) & set(b) and sorted(a + b) == sorted(getattr(whole, side))

    def pairs(d):
        return {(dict(zip(d.src_ids, d.src_sentences))[s], dict(zip(d.tgt_ids, d.tgt_sentences))[t]) for s, t in d.gold}

    assert pairs(tune) | pairs(test) == pairs(whole) and not pairs(tune) & pairs(test)


def test_split_bucc_refuses_many_to_one_gold():
    texts, english = bitext(6)
    data = bucc_from_bitext(texts, english, "de-en", "test", gold_fraction=1.0)
    s, t = sorted(data.gold)[0]
    data.gold.add((sorted(data.gold)[1][0], t))
    with pytest.raises(XltError, match="more than one gold pair"):
        split_bucc(data, 0.5)


def test_make_bucc_verb_writes_files_that_mine_reads(tmp_path):
    paths = []
    for split, n in (("dev", 20), ("test", 30)):
        texts, english = bitext(n, prefix=split)
        path = tmp_path / f"{split}.jsonl"
        path.write_text("".join(json.dumps({"text": x, "text_pair": e}) + "\n" for x, e in zip(texts, english)))
        paths.append(f"{split}={path}")
    out = tmp_path / "bucc"
    assert (
        cli.main(
            [
                "make-bucc",
                "--pair",
                "qaa-en",
                "--out",
                str(out),
                "--bitext",
                paths[0],
                "--bitext",
                paths[1],
                "--gold-fraction",
                "0.5",
            ]
        )
        == 0
    )
    assert sorted(p.name for p in out.iterdir()) == sorted(
        f"qaa-en.{s}.{x}" for s in ("dev", "test") for x in ("qaa", "en", "gold")
    )
    test = load_bucc_split(out, "qaa-en", "test")
    assert len(test.gold) == 15 and len(test.src_ids) == 15 + 7 and len(test.tgt_ids) == 15 + 8

    def number(s):
        return int(s.split()[0][len("test") :])

    # embeddings that know the translations (one-hot on the sentence number) mine every gold pair
    x = np.eye(30)[[number(s) for s in test.src_sentences]]
    y = np.eye(30)[[number(s) for s in test.tgt_sentences]]
    threshold, scores = tune_threshold(mine_split(x + 0.01, y + 0.01, test), test.gold)
    assert scores["f1"] == 1.0


def test_make_bucc_rejects_bad_bitext_argument(tmp_path, capsys):
    with pytest.raises(SystemExit) as usage_error:  # a usage error, before the verb runs
        cli.main(["make-bucc", "--pair", "qaa-en", "--out", str(tmp_path), "--bitext", "dev"])
    assert usage_error.value.code == 2
    assert "argument --bitext: 'dev': give SPLIT=FILE.jsonl" in capsys.readouterr().err
    assert (
        cli.main(["make-bucc", "--pair", "qaa-en", "--out", str(tmp_path), "--bitext", f"dev={tmp_path}/no.jsonl"]) == 2
    )
    assert "does not exist" in capsys.readouterr().err
