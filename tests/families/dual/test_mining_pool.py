"""Tuning and test split mined as one pool (xlt.evaluate.mining_pool): the tuned threshold
transfers because both splits' margins share the k-NN terms of the whole pool."""

import json

import numpy as np
import pytest

from xlt import cli
from xlt.data.bucc import split_bucc
from xlt.data.bucc_files import BuccSplit, write_bucc_split
from xlt.evaluate.mining import margin_candidates, tune_threshold


def synthetic_pool(n_gold=300, n_only=300, dim=6, seed=0):
    """One BUCC split like the hub's: gold pairs are noisy copies (noise spread so the F1-best cut
    lies among them) and as many one-sided sentences per side. Low-dimensional, so a side's
    neighbourhood density grows clearly with the number of sentences on the other side.
    Sentence text -> vector is the 'encoder'."""
    rng = np.random.default_rng(seed)
    xs, ys = rng.normal(size=(n_gold + n_only, dim)), rng.normal(size=(n_gold + n_only, dim))
    ys[:n_gold] = xs[:n_gold] + rng.uniform(0.2, 1.0, n_gold)[:, None] * rng.normal(size=(n_gold, dim))
    src = [f"source{i}" for i in range(len(xs))]
    tgt = [f"target{i}" for i in range(len(ys))]
    vectors = {**dict(zip(src, xs)), **dict(zip(tgt, ys))}
    data = BuccSplit(
        "de",
        "en",
        "all",
        [f"de-{i}" for i in range(len(xs))],
        src,
        [f"en-{i}" for i in range(len(ys))],
        tgt,
        {(f"de-{i}", f"en-{i}") for i in range(n_gold)},
    )
    return data, vectors


def _embed(vectors, sentences):
    return np.stack([vectors[s] for s in sentences])


def test_tuned_threshold_transfers_to_a_test_split_four_times_the_tuning_split(
    tmp_path, bag_of_words_bert, monkeypatch
):
    # the old code mined the 20 % and the 80 % split each on its own: the small pool's lower
    # densities gave larger margins, the threshold tuned there (1.09) sat far above the big
    # pool's best cut, and test F1 was 0.07 (recall 0.04) where a threshold on the test pool's
    # scale reaches 0.32; pooled, the tuned threshold is 1.04 against the best 1.03, F1 0.27 vs 0.29
    data, vectors = synthetic_pool()
    tune, test = split_bucc(data, 0.2, seed=1)
    assert len(test.src_ids) == 4 * len(tune.src_ids)
    for part in (tune, test):
        write_bucc_split(part, tmp_path / "bucc")
    monkeypatch.setattr(
        "xlt.families.dual.mine.encode", lambda model, tokenizer, sentences, **kw: _embed(vectors, sentences)
    )
    out = tmp_path / "mine.json"
    assert (
        cli.main(
            [
                "mine",
                "--model",
                str(bag_of_words_bert),
                "--bucc-dir",
                str(tmp_path / "bucc"),
                "--pair",
                "de-en",
                "--out-metrics",
                str(out),
            ]
        )
        == 0
    )
    result = json.loads(out.read_text())
    values = {(r["metric"], r["split"]): r["value"] for r in result["metrics"]}
    # the best test F1 of any threshold, on the whole pool's margins (the split files together
    # are the original pool; sentences name their vectors, so ids map back by text)
    test_sources = set(test.src_sentences)
    src_text = dict(zip(data.src_ids, data.src_sentences))
    pool = [
        (data.src_ids[c.src], data.tgt_ids[c.tgt], c.score)
        for c in margin_candidates(_embed(vectors, data.src_sentences), _embed(vectors, data.tgt_sentences))
    ]
    test_candidates = [m for m in pool if src_text[m[0]] in test_sources]
    test_gold = {g for g in data.gold if src_text[g[0]] in test_sources}
    best_threshold, best = tune_threshold(test_candidates, test_gold)
    assert values["f1", "test"] == pytest.approx(best["f1"], abs=0.05)
    assert values["threshold", "tune"] == pytest.approx(best_threshold, abs=0.05)
    assert result["meta"]["pool"] == {"src": len(data.src_ids), "tgt": len(data.tgt_ids)}


def test_margin_of_a_candidate_does_not_depend_on_the_split_of_its_source():
    from xlt.evaluate.mining_pool import pooled_candidates

    data, vectors = synthetic_pool(n_gold=60, n_only=40, seed=3)
    whole = {
        data.src_sentences[c.src]: (data.tgt_sentences[c.tgt], c.score)
        for c in margin_candidates(_embed(vectors, data.src_sentences), _embed(vectors, data.tgt_sentences))
    }
    for seed in (1, 2):  # two different assignments of sentences to tune and test
        tune, test = split_bucc(data, 0.3, seed=seed)
        splits = {"tune": tune, "test": test}
        mined = pooled_candidates(
            {role: (_embed(vectors, d.src_sentences), _embed(vectors, d.tgt_sentences)) for role, d in splits.items()},
            splits,
        )
        seen = {}
        for role, part in splits.items():
            src_text = dict(zip(part.src_ids, part.src_sentences))
            tgt_text = {
                **{f"{d.split}:{t}": s for d in splits.values() for t, s in zip(d.tgt_ids, d.tgt_sentences)},
                **dict(zip(part.tgt_ids, part.tgt_sentences)),
            }
            for s, t, score in mined[role]:
                seen[src_text[s]] = (tgt_text[t], score)
            assert [m[2] for m in mined[role]] == sorted((m[2] for m in mined[role]), reverse=True)
        # every source keeps the candidate and margin it has in the whole pool, in either split
        assert seen.keys() == whole.keys()
        for sentence, (target, score) in seen.items():
            assert target == whole[sentence][0] and score == pytest.approx(whole[sentence][1], rel=1e-6)


def test_cross_split_targets_are_never_gold_and_name_their_split():
    from xlt.evaluate.mining_pool import pooled_candidates

    data, vectors = synthetic_pool(n_gold=40, n_only=40, seed=4)
    tune, test = split_bucc(data, 0.5, seed=1)  # both splits number their sentences from 0: ids collide
    assert set(tune.tgt_ids) & set(test.tgt_ids)
    splits = {"tune": tune, "test": test}
    mined = pooled_candidates(
        {r: (_embed(vectors, d.src_sentences), _embed(vectors, d.tgt_sentences)) for r, d in splits.items()}, splits
    )
    other = {"tune": test, "test": tune}
    crossing = 0
    for role, part in splits.items():
        for s, t, _ in mined[role]:
            assert s in part.src_ids
            if t not in part.tgt_ids:
                crossing += 1
                prefix, _, tid = t.partition(":")
                assert prefix == other[role].split and tid in other[role].tgt_ids and (s, t) not in part.gold
    assert crossing > 0
