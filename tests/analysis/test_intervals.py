"""ci_low / ci_high in the aggregated table, from each metrics file's examples file."""

import numpy as np
import pytest

from xlt.analysis.bootstrap import bootstrap_interval
from xlt.analysis.intervals import record_interval
from xlt.core.metrics import MetricsFile, example_set, record
from xlt.evaluate.retrieval import bitext_retrieval, retrieval_examples, retrieval_records
from xlt.report.aggregate import aggregate


def _classification_run(tmp_path, name="test.json"):
    rng = np.random.default_rng(3)
    metrics = MetricsFile("freeze_depth", "d6", axes={"freeze_depth": 6})
    for lang, n, p in [("de", 300, 0.7), ("fr", 200, 0.6)]:
        gold = rng.integers(0, 3, n)
        pred = np.where(rng.random(n) < p, gold, (gold + 1) % 3)
        metrics.add("accuracy", float(np.mean(pred == gold)), lang=lang)
        metrics.examples.append(example_set("classification", "accuracy", prediction=pred, gold=gold, lang=lang))
    metrics.add("accuracy", float(np.mean([r["value"] for r in metrics.records])), lang="avg")
    metrics.add("wall_s", 3.0)
    metrics.write(tmp_path / name)
    return metrics


def test_aggregated_rows_carry_intervals_around_their_values(tmp_path):
    metrics = _classification_run(tmp_path)
    table = aggregate([tmp_path / "test.json"]).set_index("lang", drop=False)
    assert list(table.columns[-3:]) == ["value", "ci_low", "ci_high"]
    accuracy_rows = table[table.metric == "accuracy"]
    assert (accuracy_rows.ci_low < accuracy_rows.value).all() and (accuracy_rows.value < accuracy_rows.ci_high).all()
    de = metrics.examples[0]
    alone = bootstrap_interval("accuracy", de["prediction"], de["gold"])
    assert table.loc["de", "ci_low"] == pytest.approx(alone.low) and table.loc["de", "ci_high"] == pytest.approx(
        alone.high
    )
    # the average pools 500 examples: narrower than either language's interval
    width = accuracy_rows.ci_high - accuracy_rows.ci_low
    assert width["avg"] < width["de"] and width["avg"] < width["fr"]
    assert table[table.metric == "wall_s"].ci_low.isna().all()


def test_runs_without_examples_files_aggregate_as_before(tmp_path):
    MetricsFile("x", "r", records=[record("accuracy", 0.5, lang="de")]).write(tmp_path / "old.json")
    table = aggregate([tmp_path / "old.json"])
    assert "ci_low" not in table.columns and table.value.tolist() == [0.5]


def test_retrieval_records_each_find_their_direction():
    rng = np.random.default_rng(0)
    xx = rng.normal(size=(80, 8))
    result = bitext_retrieval(xx, xx + rng.normal(scale=1.5, size=(80, 8)), match="index")
    sets = retrieval_examples(result, lang="de")
    for rec in retrieval_records(result, lang="de"):
        low, high = record_interval(rec, sets)
        assert low <= rec["value"] <= high, rec
    assert record_interval(record("f1", 0.5, lang="de"), sets) is None


def test_xlt_aggregate_puts_intervals_in_the_table_and_the_summary(tmp_path):
    import pandas as pd

    from xlt.analysis.bootstrap import bootstrap_interval, resample_counts, resampled_metric
    from xlt.cli import main

    metrics = _classification_run(tmp_path)
    out = tmp_path / "freeze_depth.csv"
    main(
        [
            "aggregate",
            str(tmp_path / "test.json"),
            "--out",
            str(out),
            "--resamples",
            "500",
            "--seed",
            "1",
            "--confidence",
            "0.9",
        ]
    )
    table, summary = pd.read_csv(out), pd.read_csv(tmp_path / "freeze_depth_summary.csv")
    assert "avg" not in set(table.lang) and summary.lang.tolist() == ["avg"]
    for frame in (table, summary):
        assert list(frame.columns[-3:]) == ["value", "ci_low", "ci_high"]
    de, fr = metrics.examples[0], metrics.examples[1]
    alone = bootstrap_interval("accuracy", de["prediction"], de["gold"], resamples=500, seed=1, confidence=0.9)
    row = table[(table.lang == "de") & (table.metric == "accuracy")].iloc[0]
    assert (row.ci_low, row.ci_high) == pytest.approx((alone.low, alone.high))
    # the macro average: each language resampled within itself, averaged per resample
    draws = (
        resampled_metric(
            "accuracy", np.asarray(de["prediction"]), np.asarray(de["gold"]), resample_counts(len(de["gold"]), 500, 1)
        )
        + resampled_metric(
            "accuracy", np.asarray(fr["prediction"]), np.asarray(fr["gold"]), resample_counts(len(fr["gold"]), 500, 2)
        )
    ) / 2
    assert (summary.iloc[0].ci_low, summary.iloc[0].ci_high) == pytest.approx(tuple(np.percentile(draws, [5, 95])))


def test_mean_retrieval_resamples_both_directions_with_the_same_draws():
    from xlt.analysis.bootstrap import resample_counts, resampled_metric

    rng = np.random.default_rng(5)
    xx = rng.normal(size=(60, 8))
    result = bitext_retrieval(xx, xx + rng.normal(scale=1.4, size=(60, 8)), match="index")
    sets = retrieval_examples(result, lang="de")
    (mean_error,) = [r for r in retrieval_records(result, lang="de") if r["metric"] == "mean_error"]
    counts = resample_counts(60, 400, 7)
    draws = np.mean(
        [
            resampled_metric(
                "error_rate", np.asarray(one["correct"], dtype=np.int64), np.ones(60, dtype=np.int64), counts
            )
            for one in sets
        ],
        axis=0,
    )
    assert record_interval(mean_error, sets, resamples=400, seed=7) == pytest.approx(
        tuple(np.percentile(draws, [2.5, 97.5]))
    )


def _perplexity_set(lang, n, seed):
    """A perplexity example set: per sentence a summed masked-token loss and its masked tokens
    (some sentences without a mask, as short ones have)."""
    rng = np.random.default_rng(seed)
    tokens = rng.integers(0, 6, n)
    loss = tokens * rng.gamma(2.0, 1.5, n)
    return example_set(
        "perplexity", "perplexity", loss=loss, tokens=tokens, masks=["h"] * n, mask_seed=11, lang=lang, split="dev"
    )


@pytest.mark.parametrize("statistics", [{}, {"resamples": 300, "seed": 4, "confidence": 0.9}])
def test_repeated_set_intervals_are_the_intervals_aggregate_gives_each_set(statistics):
    """Scored once, a set's interval is exactly record_interval's for a record over it (the
    reference job's, from its kept examples), for every metric of the set and every set."""
    from xlt.analysis.intervals import RepeatedSetIntervals

    intervals = RepeatedSetIntervals(**statistics)
    sets = [_perplexity_set("nl", 90, 1), _perplexity_set("multilingual", 90, 2)]
    for one in sets:
        for metric in ("perplexity", "mlm_loss"):
            mine = intervals.interval((one["lang"], one["split"]), metric, one["loss"], one["tokens"])
            theirs = record_interval(record(metric, 1.0, lang=one["lang"], split=one["split"]), sets, **statistics)
            assert mine == theirs, (one["lang"], metric)


def test_repeated_set_intervals_draw_once_per_set_and_reuse_the_draws(monkeypatch):
    """Later evaluations of a set (other losses, the same sentences) resample the same sentences:
    one draw per set, and every step's interval is record_interval's with the same settings."""
    import xlt.analysis.intervals as module

    first, other = _perplexity_set("nl", 50, 1), _perplexity_set("multilingual", 70, 2)
    steps = [{**first, "loss": list(np.asarray(first["loss"]) * (1 - 0.1 * step))} for step in range(3)]  # improving
    expected = [
        record_interval(record("perplexity", 1.0, lang="nl", split="dev"), [one], resamples=200, seed=3)
        for one in steps
    ]
    draws = []
    real = module.resample_counts
    monkeypatch.setattr(module, "resample_counts", lambda *args: draws.append(args) or real(*args))
    intervals = module.RepeatedSetIntervals(resamples=200, seed=3)
    for one, interval in zip(steps, expected):
        assert intervals.interval(("nl", "dev"), "perplexity", one["loss"], one["tokens"]) == interval
        intervals.interval(("multilingual", "dev"), "perplexity", other["loss"], other["tokens"])
    assert draws == [(50, 200, 3), (70, 200, 3)]
    assert len(set(expected)) == 3  # the steps' intervals differ: the same draws, other losses
    with pytest.raises(ValueError, match="70 examples but the resample matrix has 50"):
        intervals.interval(("nl", "dev"), "perplexity", other["loss"], other["tokens"])  # not the set it drew for


def test_aggregate_keeps_the_bounds_a_record_brings(tmp_path):
    """A record computed with its bounds (adapt's per-step perplexity) keeps them; the records
    beside it still get theirs from the examples file."""
    one = _perplexity_set("nl", 80, 1)
    value = float(np.exp(np.sum(one["loss"]) / np.sum(one["tokens"])))
    brought = {**record("perplexity", value, lang="nl", split="dev", step=0), "ci_low": 1.5, "ci_high": 2.5}
    MetricsFile(
        "adapt", "r", records=[brought, record("perplexity", value, lang="nl", split="dev")], examples=[one]
    ).write(tmp_path / "metrics.json")
    table = aggregate([tmp_path / "metrics.json"], resamples=200)
    step, final = table[table.step.notna()].iloc[0], table[table.step.isna()].iloc[0]
    assert (step.value, step.ci_low, step.ci_high) == (value, 1.5, 2.5)
    assert (final.ci_low, final.ci_high) == record_interval(
        record("perplexity", value, lang="nl", split="dev"), [one], resamples=200
    )


def _mining_counts(seed=4, n=40):
    """Per source sentence: pairs kept at the threshold (0-2), how many of them are gold, gold pairs (0-1)."""
    rng = np.random.default_rng(seed)
    gold = (rng.random(n) < 0.6).astype(int)
    kept = rng.integers(0, 3, n)
    correct = np.minimum(gold, kept) * (rng.random(n) < 0.8)
    return kept, correct, gold


def test_mining_resamples_match_drawing_the_sentences_one_by_one():
    from xlt.analysis.bootstrap import resample_counts, resampled_mining

    kept, correct, gold = _mining_counts()
    counts = resample_counts(len(gold), 50, 3)
    rng = np.random.default_rng(3)
    draws = rng.integers(0, len(gold), size=(50, len(gold)))  # the very draws resample_counts makes
    for metric in ("precision", "recall", "f1"):
        vectorised = resampled_mining(metric, kept, correct, gold, counts)
        for r, drawn in enumerate(draws):
            k, c, g = kept[drawn].sum(), correct[drawn].sum(), gold[drawn].sum()
            p, rec = (c / k if k else 0.0), (c / g if g else 0.0)
            expected = {"precision": p, "recall": rec, "f1": 2 * p * rec / (p + rec) if p + rec else 0.0}[metric]
            assert vectorised[r] == pytest.approx(expected), (metric, r)


def test_mining_records_get_intervals_from_their_split_only():
    kept, correct, gold = _mining_counts()
    sets = [
        example_set(
            "mining", "mining", kept=kept, correct=correct, gold=gold, lang="de", split="test", interval_only=True
        )
    ]
    p, r = correct.sum() / kept.sum(), correct.sum() / gold.sum()
    for metric, value in (("precision", p), ("recall", r), ("f1", 2 * p * r / (p + r))):
        low, high = record_interval(record(metric, value, lang="de", split="test"), sets)
        assert low < value < high and high - low < 0.5, metric
        assert record_interval(record(metric, value, lang="de", split="tune"), sets) is None
    assert record_interval(record("accuracy", 0.5, lang="de", split="test"), sets) is None


def _dev_retrieval_sets(n=50):
    rng = np.random.default_rng(8)
    sets, records = [], []
    for lang, share in (("qaa", 0.7), ("qac", 0.4)):
        for direction in ("xx->en", "en->xx"):
            correct = rng.random(n) < share
            retrieved = np.where(correct, np.arange(n), (np.arange(n) + 1) % n)
            sets.append(
                example_set(
                    "retrieval",
                    "dev_retrieval_acc",
                    retrieved=retrieved,
                    gold=np.arange(n),
                    correct=correct,
                    lang=lang,
                    direction=direction,
                    split="dev",
                    interval_only=True,
                )
            )
            records.append(
                record("dev_retrieval_acc", float(np.mean(correct)), lang=lang, direction=direction, split="dev")
            )
    return sets, records


def test_dual_dev_retrieval_records_and_their_mean_get_intervals():
    from xlt.analysis.bootstrap import resample_counts, resampled_metric

    sets, records = _dev_retrieval_sets()
    for rec in records:
        low, high = record_interval(rec, sets)
        assert low <= rec["value"] <= high, rec
    mean = record("dev_retrieval_acc_mean", float(np.mean([r["value"] for r in records])), split="dev")
    low, high = record_interval(mean, sets, resamples=300, seed=2)
    assert low < mean["value"] < high
    # every language resampled within itself, its two directions with the same draws
    draws = np.mean(
        [
            resampled_metric(
                "accuracy",
                np.asarray(one["correct"], dtype=np.int64),
                np.ones(50, dtype=np.int64),
                resample_counts(50, 300, 2 + ("qaa", "qac").index(one["lang"])),
            )
            for one in sets
        ],
        axis=0,
    )
    assert (low, high) == pytest.approx(tuple(np.percentile(draws, [2.5, 97.5])))
    # Tatoeba's accuracy@1 sets of the same language are not the dev score's
    tatoeba = [{**one, "metric": "accuracy@1"} for one in sets]
    assert record_interval(records[0], tatoeba) is None and record_interval(mean, tatoeba) is None


def test_pseudo_label_accuracy_reads_its_own_set_and_no_other():
    rng = np.random.default_rng(2)
    heldout = rng.integers(0, 3, 200)
    pseudo = np.where(rng.random(200) < 0.75, heldout, (heldout + 1) % 3)
    dev = example_set(
        "classification", "accuracy", prediction=heldout, gold=heldout, lang="en", split="dev", interval_only=True
    )
    pseudo_set = example_set(
        "classification", "pseudo_label_accuracy", prediction=pseudo, gold=heldout, interval_only=True
    )
    value = float(np.mean(pseudo == heldout))
    interval = record_interval(record("pseudo_label_accuracy", value), [dev, pseudo_set])
    alone = bootstrap_interval("accuracy", pseudo, heldout)
    assert interval == pytest.approx((alone.low, alone.high)) and alone.low < value < alone.high
    # the dev accuracy takes the dev set, never the pseudo labels
    assert record_interval(record("accuracy", 1.0, lang="en", split="dev"), [dev, pseudo_set]) == (1.0, 1.0)
    assert record_interval(record("pseudo_label_accuracy", value), [dev]) is None


def _tuning_candidates(seed=5, n=30):
    """A small random tuning split: per source 0-3 candidates with coarse (often tied) scores,
    some of them gold, and gold pairs of which some were never mined (missed)."""
    rng = np.random.default_rng(seed)
    scores = [list(rng.integers(0, 10, rng.integers(0, 4)) / 4) for _ in range(n)]
    hits = [[int(h) for h in rng.random(len(row)) < 0.5] for row in scores]
    gold = [sum(row) + int(rng.random() < 0.3) for row in hits]
    return scores, hits, gold


def _tune_by_hand(scores, hits, gold, drawn):
    """Tune the threshold on the sentences `drawn` (with repeats) with the project's own
    tune_threshold: every draw of a sentence is a new sentence with its candidates and gold pairs."""
    from xlt.core.errors import XltError
    from xlt.evaluate.mining import tune_threshold

    mined, gold_pairs = [], set()
    for k, i in enumerate(drawn):
        hit_number = np.cumsum(hits[i]) - 1  # the h-th hit finds gold target t{k}-{h}
        for j, (score, hit) in enumerate(zip(scores[i], hits[i])):
            mined.append((f"s{k}", f"t{k}-{hit_number[j]}" if hit else f"wrong{k}-{j}", score))
        gold_pairs |= {(f"s{k}", f"t{k}-{h}") for h in range(gold[i])}  # beyond the hits: missed
    try:
        return tune_threshold(mined, gold_pairs)[1]
    except XltError:  # a resample without gold pairs: nothing to find, every score 0
        return {"precision": 0.0, "recall": 0.0, "f1": 0.0}


def test_tuned_mining_resamples_match_tuning_every_resample_by_hand():
    from xlt.analysis.bootstrap import resample_counts, resampled_tuned_mining

    scores, hits, gold = _tuning_candidates()
    for sentence_hits, n_gold in zip(hits, gold):  # a hit is one of the sentence's gold pairs
        assert sum(sentence_hits) <= n_gold
    counts = resample_counts(len(gold), 60, 7)
    draws = np.random.default_rng(7).integers(0, len(gold), size=(60, len(gold)))  # resample_counts' draws
    by_hand = [_tune_by_hand(scores, hits, gold, drawn) for drawn in draws]
    for metric in ("precision", "recall", "f1"):
        vectorised = resampled_tuned_mining(metric, scores, hits, gold, counts)
        assert vectorised.tolist() == [scores_r[metric] for scores_r in by_hand], metric
    assert len({s["f1"] for s in by_hand}) > 5  # the resamples differ: the comparison is not trivial


def test_tuned_mining_gives_the_same_resamples_in_any_block_size(monkeypatch):
    from xlt.analysis import bootstrap

    scores, hits, gold = _tuning_candidates(seed=6)
    counts = bootstrap.resample_counts(len(gold), 50, 1)
    whole = bootstrap.resampled_tuned_mining("f1", scores, hits, gold, counts)
    monkeypatch.setattr(bootstrap, "_TUNING_BLOCK", 7)  # 7 // candidates = 1 resample per block
    assert bootstrap.resampled_tuned_mining("f1", scores, hits, gold, counts).tolist() == whole.tolist()


def _two_cut_split():
    """A tuning split with two possible cuts, at score 2 and at score 1 (see the test below).

    10 sentences A: a gold pair at 2, a second gold pair at 1;  10 sentences B: a gold and a wrong
    pair, both at 2, and one gold pair;  22 sentences D: a wrong pair at 1, no gold.
    Cut at 2: every A keeps 1, 1 correct, 2 gold; every B 2, 1, 1: 2 correct = 2/3 (kept + gold)
    in every sentence, so F1 is exactly 2/3 in every resample that draws any gold.
    Cut at 1: F1 = 2 (20 + 10) / (40 + 30 + 22) = 0.652 on the split, so the cut at 2 is tuned,
    but resamples with fewer D sentences do better at 1."""
    rows = [([2.0, 1.0], [1, 1], 2)] * 10 + [([2.0, 2.0], [1, 0], 1)] * 10 + [([1.0], [0], 0)] * 22
    scores, hits, gold = (list(column) for column in zip(*rows))
    return scores, hits, gold


def test_retuned_f1_interval_is_wider_than_the_one_at_the_fixed_threshold():
    """Why wider: at the fixed threshold each resample scores one cut, here one whose F1 hardly
    moves, so its interval claims the tuned F1 is known almost exactly. Re-tuning scores each
    resample at its own best cut, never below the fixed cut's F1 there, and higher wherever the
    other cut wins; the spread of which cut wins is the uncertainty of the tuning itself."""
    from xlt.analysis.bootstrap import resample_counts, resampled_mining, resampled_tuned_mining
    from xlt.evaluate.mining import source_counts, tune_threshold

    scores, hits, gold = _two_cut_split()
    mined = [
        (f"s{i}", f"t{i}-{j}" if hit else f"w{i}-{j}", score)
        for i, row in enumerate(scores)
        for j, (score, hit) in enumerate(zip(row, hits[i]))
    ]
    gold_pairs = {(f"s{i}", f"t{i}-{j}") for i, n in enumerate(gold) for j in range(n)}
    threshold, tuned = tune_threshold(mined, gold_pairs)
    assert threshold == 1.5 and tuned["f1"] == pytest.approx(2 / 3)
    fixed_set = example_set(
        "mining",
        "mining",
        **source_counts(mined, gold_pairs, threshold, [f"s{i}" for i in range(42)]),
        lang="de",
        split="tune",
        interval_only=True,
    )
    tuning_set = example_set(
        "mining_tuning",
        "mining",
        candidate_scores=scores,
        candidate_gold=hits,
        gold=gold,
        lang="de",
        split="tune",
        interval_only=True,
    )
    f1 = record("f1", tuned["f1"], lang="de", split="tune")
    fixed_low, fixed_high = record_interval(f1, [fixed_set])
    low, high = record_interval(f1, [tuning_set])
    assert fixed_high - fixed_low < 1e-9  # 2/3 in every resample
    assert high - low > 0.02 and low <= tuned["f1"] <= high
    # resample by resample: the re-tuned F1 is the better of the two cuts, the fixed cut included
    counts = resample_counts(42, 1000, 0)
    retuned = resampled_tuned_mining("f1", scores, hits, gold, counts)
    at_fixed = resampled_mining("f1", fixed_set["kept"], fixed_set["correct"], fixed_set["gold"], counts)
    assert np.all(retuned >= at_fixed - 1e-12) and np.mean(retuned > at_fixed + 1e-9) > 0.1


def test_tuning_split_records_get_intervals_and_the_test_split_keeps_its_own():
    scores, hits, gold = _tuning_candidates()
    kept, correct, n_gold = _mining_counts()
    test_set = example_set(
        "mining", "mining", kept=kept, correct=correct, gold=n_gold, lang="de", split="test", interval_only=True
    )
    tuning_set = example_set(
        "mining_tuning",
        "mining",
        candidate_scores=scores,
        candidate_gold=hits,
        gold=gold,
        lang="de",
        split="tune",
        interval_only=True,
    )
    tuned = _tune_by_hand(scores, hits, gold, range(len(gold)))
    for metric in ("precision", "recall", "f1"):
        low, high = record_interval(record(metric, tuned[metric], lang="de", split="tune"), [test_set, tuning_set])
        assert low <= tuned[metric] <= high and low < high, metric
        test = record(metric, 0.5, lang="de", split="test")
        assert record_interval(test, [test_set, tuning_set]) == record_interval(test, [test_set]), metric
    # the threshold is a margin value, not a score over sentences: no interval
    assert record_interval(record("threshold", 1.0, lang="de", split="tune"), [test_set, tuning_set]) is None


def _translated_sets(kind="classification", n=400, langs=("de", "fr", "ru")):
    """One item list in every language, every language's predictions identical: perfectly correlated."""
    rng = np.random.default_rng(11)
    gold = rng.integers(0, 3, n)
    pred = np.where(rng.random(n) < 0.7, gold, (gold + 1) % 3)
    return [example_set(kind, "accuracy", prediction=pred, gold=gold, lang=lang) for lang in langs]


def test_average_over_translations_of_the_same_items_is_as_wide_as_one_language():
    # identical per-item correctness everywhere: averaging languages adds no information, so the
    # average's interval must be one language's (independent draws per language made it narrower)
    sets = _translated_sets()
    value = float(np.mean(sets[0]["prediction"] == sets[0]["gold"]))
    one = record_interval({"metric": "accuracy", "value": value, "lang": "de"}, sets)
    avg = record_interval({"metric": "accuracy", "value": value, "lang": "avg"}, sets)
    assert avg == pytest.approx(one, abs=1e-12)


def test_translated_score_sets_share_their_draws_too():
    rng = np.random.default_rng(5)
    gold = rng.random(300) * 5
    predicted = gold + rng.normal(0, 1, 300)
    sets = [example_set("scores", "spearman", predicted=predicted, gold=gold, lang=lang) for lang in ("de", "es")]
    one = record_interval({"metric": "spearman", "value": 0.0, "lang": "de"}, sets)
    assert record_interval({"metric": "spearman", "value": 0.0, "lang": "avg"}, sets) == pytest.approx(one, abs=1e-12)


def test_alignment_is_detected_from_size_and_gold_only():
    from xlt.analysis.intervals import item_aligned

    sets = _translated_sets()
    assert item_aligned(sets)
    shuffled = dict(sets[1], gold=list(np.roll(sets[1]["gold"], 1)))
    assert not item_aligned([sets[0], shuffled])  # other items (or another order): independent draws
    shorter = dict(sets[1], gold=sets[1]["gold"][:-1], prediction=sets[1]["prediction"][:-1])
    assert not item_aligned([sets[0], shorter])
    # retrieval's gold is the partner's index, 0..n-1 in any language: never taken for alignment
    retrieval = [
        example_set(
            "retrieval", "accuracy@1", retrieved=list(range(5)), gold=list(range(5)), correct=[1] * 5, lang=lang
        )
        for lang in ("de", "fr")
    ]
    assert not item_aligned(retrieval)


def test_unaligned_languages_keep_independent_draws():
    # different items per language (different gold): the stratified bootstrap as before, the
    # average narrower than one language
    sets = _translated_sets(langs=("de",)) + [
        dict(_translated_sets(langs=("fr",))[0], gold=list(np.roll(_translated_sets()[0]["gold"], 7)))
    ]
    one = record_interval({"metric": "accuracy", "value": 0.0, "lang": "de"}, sets)
    avg = record_interval({"metric": "accuracy", "value": 0.0, "lang": "avg"}, sets)
    assert avg[1] - avg[0] < one[1] - one[0]


def _one_item_short(sets: list[dict]) -> list[dict]:
    """The last language's set an item short: the case detection took for unrelated sets."""
    last = sets[-1]
    return [*sets[:-1], dict(last, gold=last["gold"][1:], prediction=last["prediction"][1:])]


def test_declared_aligned_sets_that_disagree_are_refused():
    from xlt.core.errors import XltError

    sets = [dict(one, item_aligned=True) for one in _translated_sets()]
    avg = {"metric": "accuracy", "value": 0.7, "lang": "avg"}
    assert record_interval(avg, sets) == record_interval(avg, _translated_sets())  # declared and true: shared draws
    with pytest.raises(
        XltError,
        match=r"declared item-aligned .* \(de: 400, fr: 400, ru: 399 items; .*set "
        r"item_aligned: false",
    ):
        record_interval(avg, _one_item_short(sets))


def test_undeclared_sets_that_do_not_line_up_are_drawn_independently_with_a_warning(caplog):
    avg = {"metric": "accuracy", "value": 0.7, "lang": "avg"}
    with caplog.at_level("WARNING", logger="xlt.analysis.intervals"):
        record_interval(avg, _one_item_short(_translated_sets()))
    [line] = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert "(de: 400, fr: 400, ru: 399 items) do not declare item alignment" in line
    assert "declare datasets.<name>.item_aligned" in line
    caplog.clear()
    with caplog.at_level("WARNING", logger="xlt.analysis.intervals"):
        record_interval(avg, _translated_sets())  # detected: nothing to say
        record_interval(avg, [dict(one, item_aligned=False) for one in _one_item_short(_translated_sets())])
    assert not caplog.records


def test_sets_declared_unaligned_draw_independently_even_where_their_gold_agrees():
    sets = _translated_sets()
    one = record_interval({"metric": "accuracy", "value": 0.7, "lang": "de"}, sets)
    avg = {"metric": "accuracy", "value": 0.7, "lang": "avg"}
    shared = record_interval(avg, sets)
    independent = record_interval(avg, [dict(s, item_aligned=False) for s in sets])
    assert shared == pytest.approx(one, abs=1e-12)
    assert independent[1] - independent[0] < 0.7 * (one[1] - one[0])  # three independent draws: about 1/sqrt(3)
