import numpy as np
import pytest

from xlt.core.errors import XltError
from xlt.data.bucc_files import BuccSplit, load_bucc_split, write_bucc_split
from xlt.evaluate.mining import knn_cosine, margin_candidates, mine_split, precision_recall_f1, tune_threshold

DIM = 40


def meaning_vectors(meanings: list[int]) -> np.ndarray:
    """Unit vectors: same meaning -> cosine 1, different meanings -> cosine exactly 0.5.

    Each vector is (e_meaning + e_shared) / sqrt(2); the shared axis keeps the
    neighbourhood density positive so the ratio margin is defined.
    """
    v = np.zeros((len(meanings), DIM + 1))
    v[np.arange(len(meanings)), meanings] = 1.0
    v[:, DIM] = 1.0
    return v / np.sqrt(2)


def test_knn_cosine_matches_sorting():
    rng = np.random.default_rng(0)
    q = rng.normal(size=(7, 5)).astype(np.float32)
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    keys = rng.normal(size=(9, 5)).astype(np.float32)
    keys /= np.linalg.norm(keys, axis=1, keepdims=True)
    sims, idx = knn_cosine(q, keys, k=3, batch_size=2)
    full = q @ keys.T
    for i in range(7):
        expected = sorted(range(9), key=lambda j: -full[i, j])[:3]
        assert list(idx[i]) == expected
        assert np.allclose(sims[i], full[i, expected])


def test_margin_scores_follow_the_formula():
    # independent loop computation of the ratio margin for every forward candidate
    rng = np.random.default_rng(1)
    x = rng.normal(size=(6, 4)) + 2.0  # positive offset keeps densities positive
    y = rng.normal(size=(8, 4)) + 2.0
    xn = x / np.linalg.norm(x, axis=1, keepdims=True)
    yn = y / np.linalg.norm(y, axis=1, keepdims=True)
    k = 4
    cos = xn @ yn.T

    def margin(i, j):
        nn_x = sorted(cos[i, :], reverse=True)[:k]
        nn_y = sorted(cos[:, j], reverse=True)[:k]
        return cos[i, j] / (sum(nn_x) / (2 * k) + sum(nn_y) / (2 * k))

    for cand in margin_candidates(x, y, k=k, strategy="forward"):
        assert cand.score == pytest.approx(margin(cand.src, cand.tgt), rel=1e-5)
        nearest = sorted(range(8), key=lambda j: -cos[cand.src, j])[:k]
        assert cand.tgt == max(nearest, key=lambda j: margin(cand.src, j))
    assert len(margin_candidates(x, y, k=k, strategy="forward")) == 6
    assert len(margin_candidates(x, y, k=k, strategy="backward")) == 8


def test_max_strategy_is_one_to_one_and_intersect_is_mutual():
    rng = np.random.default_rng(2)
    x = rng.normal(size=(10, 6)) + 1.0
    y = rng.normal(size=(12, 6)) + 1.0
    best = margin_candidates(x, y, strategy="max")
    assert len({c.src for c in best}) == len(best) == len({c.tgt for c in best})
    fwd = {(c.src, c.tgt) for c in margin_candidates(x, y, strategy="forward")}
    bwd = {(c.src, c.tgt) for c in margin_candidates(x, y, strategy="backward")}
    assert {(c.src, c.tgt) for c in margin_candidates(x, y, strategy="intersect")} == fwd & bwd
    assert {(c.src, c.tgt) for c in best} <= fwd | bwd
    assert fwd & bwd <= {(c.src, c.tgt) for c in best}  # mutual best pairs always survive


def _split(name, src_meanings, tgt_meanings, gold_positions):
    src_ids = [f"de-{name}-{i}" for i in range(len(src_meanings))]
    tgt_ids = [f"en-{name}-{j}" for j in range(len(tgt_meanings))]
    gold = {(src_ids[i], tgt_ids[j]) for i, j in gold_positions}
    data = BuccSplit(
        "de", "en", name, src_ids, [f"s{m}" for m in src_meanings], tgt_ids, [f"t{m}" for m in tgt_meanings], gold
    )
    return data, meaning_vectors(src_meanings), meaning_vectors(tgt_meanings)


def test_planted_pairs_exact_precision_recall_f1():
    # Tuning split: 4 planted pairs (meanings 0-3) + source distractors 10, 11 + target
    # distractors 12, 13, 14. With k=4: planted margin = 1 / 0.625 = 1.6; distractor pairs
    # get 0.5 / 0.5 = 1.0 -> the best cut keeps the 4 planted pairs, threshold (1.6 + 1.0) / 2.
    tune, tx, ty = _split("tune", [0, 1, 2, 3, 10, 11], [12, 3, 2, 13, 1, 0, 14], [(0, 5), (1, 4), (2, 2), (3, 1)])
    threshold, tuned = tune_threshold(mine_split(tx, ty, tune), tune.gold)
    assert threshold == pytest.approx(1.3, abs=1e-5)
    assert (tuned["precision"], tuned["recall"], tuned["f1"]) == (1.0, 1.0, 1.0)

    # Test split: 5 planted gold pairs (20-24), a gold pair whose embeddings disagree
    # (source 25 vs target 26: missed), a non-gold look-alike pair (27 on both sides:
    # a false positive) and distractors -> 6 predicted, 5 correct, 6 gold.
    test, sx, sy = _split(
        "test",
        [20, 21, 22, 23, 24, 25, 27, 30],
        [24, 31, 23, 22, 26, 21, 20, 27, 32],
        [(0, 6), (1, 5), (2, 3), (3, 2), (4, 0), (5, 4)],
    )
    mined = mine_split(sx, sy, test)
    scores = precision_recall_f1(mined, test.gold, threshold)
    assert (scores["predicted"], scores["correct"], scores["gold"]) == (6, 5, 6)
    assert scores["precision"] == pytest.approx(5 / 6)
    assert scores["recall"] == pytest.approx(5 / 6)
    assert scores["f1"] == pytest.approx(5 / 6)


def test_tuning_never_cuts_inside_tied_scores():
    gold = {("a", "x"), ("c", "z")}
    mined = [("a", "x", 2.0), ("b", "y", 1.5), ("c", "z", 1.5), ("d", "w", 1.0)]
    threshold, scores = tune_threshold(mined, gold)
    # cut after rank 1: P=1 R=.5 F1=.667; after the tie: P=2/3 R=1 F1=.8 -> keep the tie
    assert threshold == pytest.approx(1.25)
    assert scores["f1"] == pytest.approx(0.8)
    # no correct candidate -> nothing predicted
    threshold, scores = tune_threshold([("b", "y", 1.0)], gold)
    assert threshold > 1.0 and scores["predicted"] == 0


def test_bucc_files_round_trip_and_errors(tmp_path):
    data, _, _ = _split("dev", [0, 1, 2], [2, 1, 5], [(0, 0), (1, 1)])
    write_bucc_split(data, tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["de-en.dev.de", "de-en.dev.en", "de-en.dev.gold"]
    loaded = load_bucc_split(tmp_path, "de-en", "dev")
    assert loaded.src_ids == data.src_ids and loaded.tgt_sentences == data.tgt_sentences and loaded.gold == data.gold

    with pytest.raises(XltError, match="splits present for de-en: dev"):
        load_bucc_split(tmp_path, "de-en", "test")
    with pytest.raises(XltError, match="SRC-TGT"):
        load_bucc_split(tmp_path, "deen", "dev")
    (tmp_path / "de-en.dev.gold").write_text("de-dev-0\ten-nowhere\n")
    with pytest.raises(XltError, match="en-nowhere"):
        load_bucc_split(tmp_path, "de-en", "dev")
    (tmp_path / "de-en.dev.de").write_text("de-dev-0 no tab here\n")
    with pytest.raises(XltError, match=r"de-en.dev.de:1"):
        load_bucc_split(tmp_path, "de-en", "dev")
    (tmp_path / "de-en.dev.de").write_text("a\tone\na\ttwo\n")
    with pytest.raises(XltError, match="duplicate"):
        load_bucc_split(tmp_path, "de-en", "dev")


def test_source_counts_add_up_to_the_scores_at_the_threshold():
    from xlt.evaluate.mining import source_counts

    src_ids = ["s0", "s1", "s2", "s3"]
    gold = {("s0", "t0"), ("s1", "t1"), ("s1", "t5"), ("s3", "t3")}
    # s1 keeps two pairs (one gold), s2 one wrong pair, s3's pair falls under the threshold
    mined = [("s0", "t0", 2.0), ("s1", "t1", 1.8), ("s1", "t2", 1.5), ("s2", "t2", 1.2), ("s3", "t3", 0.9)]
    counts = source_counts(mined, gold, 1.0, src_ids)
    assert {k: v.tolist() for k, v in counts.items()} == {
        "kept": [1, 2, 1, 0],
        "correct": [1, 1, 0, 0],
        "gold": [1, 2, 0, 1],
    }
    scores = precision_recall_f1(mined, gold, 1.0)
    assert (counts["kept"].sum(), counts["correct"].sum(), counts["gold"].sum()) == (
        scores["predicted"],
        scores["correct"],
        scores["gold"],
    )


def _retuned_on_the_split_itself(mined, gold, src_ids) -> dict[str, float]:
    """The re-tuning bootstrap's statistic on the one 'resample' that draws every sentence once,
    from the tuning example set as `xlt aggregate` reads it back (JSON)."""
    import json

    from xlt.analysis.bootstrap import resampled_tuned_mining
    from xlt.evaluate.mining import tuning_examples

    one = json.loads(json.dumps(tuning_examples(mined, gold, src_ids, lang="de", split="tune")))
    assert (one["kind"], one["split"], one["interval_only"]) == ("mining_tuning", "tune", True)
    ones = np.ones((1, len(src_ids)))
    return {
        metric: float(
            resampled_tuned_mining(metric, one["candidate_scores"], one["candidate_gold"], one["gold"], ones)[0]
        )
        for metric in ("precision", "recall", "f1")
    }


def test_retuning_without_resampling_gives_the_tuned_scores_exactly():
    rng = np.random.default_rng(11)
    src_ids = [f"s{i}" for i in range(40)]
    # margins on a coarse grid (ties), many sources with a wrong or no candidate, some gold pairs missed
    mined = [
        (s, f"t{i}" if rng.random() < 0.5 else f"w{i}", float(rng.integers(0, 30)) / 7 + 0.9)
        for i, s in enumerate(src_ids)
        if rng.random() < 0.8
    ]
    gold = {(s, f"t{i}") for i, s in enumerate(src_ids) if rng.random() < 0.6}
    gold |= {(s, t) for s, t, _ in mined if t.startswith("t")} - {("s3", "t3")}  # s3's candidate is wrong after all
    _, tuned = tune_threshold(mined, gold)
    assert 0 < tuned["f1"] < 1
    assert _retuned_on_the_split_itself(mined, gold, src_ids) == {m: tuned[m] for m in ("precision", "recall", "f1")}


def test_retuning_breaks_f1_ties_as_the_tuning_does():
    # keeping only the 3.0 pair (P 1, R 1/2) and keeping all four (P 1/2, R 1) both give F1 2/3:
    # tune_threshold keeps the higher threshold, and so must every resample
    gold = {("s0", "t0"), ("s3", "t3")}
    mined = [("s0", "t0", 3.0), ("s1", "w1", 2.0), ("s2", "w2", 1.9), ("s3", "t3", 1.8)]
    threshold, tuned = tune_threshold(mined, gold)
    assert (threshold, tuned["precision"], tuned["recall"]) == (2.5, 1.0, 0.5)
    assert _retuned_on_the_split_itself(mined, gold, ["s0", "s1", "s2", "s3"]) == {
        m: tuned[m] for m in ("precision", "recall", "f1")
    }


def test_retuning_without_a_correct_candidate_predicts_nothing():
    gold = {("s0", "t0")}
    mined = [("s0", "w0", 2.0), ("s1", "w1", 1.0)]
    assert tune_threshold(mined, gold)[1]["f1"] == 0.0
    assert _retuned_on_the_split_itself(mined, gold, ["s0", "s1"]) == {"precision": 0.0, "recall": 0.0, "f1": 0.0}
    assert _retuned_on_the_split_itself([], gold, ["s0", "s1"]) == {"precision": 0.0, "recall": 0.0, "f1": 0.0}
