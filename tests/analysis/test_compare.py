"""xlt compare: paired tests between runs that differ in one axis, against the family's
baseline, Holm-corrected; and the spread over seeds. Crafted metrics + examples files."""

import numpy as np
import pandas as pd
import pytest

from xlt.analysis.compare import paired_tests, read_runs, seeds_table
from xlt.analysis.significance import holm
from xlt.cli import main
from xlt.core.errors import XltError
from xlt.core.metrics import MetricsFile, example_set

N = 400
GOLD = np.arange(N) % 3


def predictions(correct_share: float, seed: int) -> np.ndarray:
    """Predictions right on exactly round(share * N) examples, which ones drawn by `seed`."""
    rng = np.random.default_rng(seed)
    right = np.zeros(N, bool)
    right[rng.choice(N, int(round(correct_share * N)), replace=False)] = True
    return np.where(right, GOLD, (GOLD + 1) % 3)


def write_classifier_run(root, family, run_id, axes, by_lang):
    metrics = MetricsFile(family, run_id, axes=axes, manifest=False)
    for lang, predicted in by_lang.items():
        metrics.add("accuracy", float(np.mean(predicted == GOLD)), lang=lang)
        metrics.examples.append(example_set("classification", "accuracy", prediction=predicted, gold=GOLD, lang=lang))
    path = root / run_id / "eval.json"
    metrics.write(path)
    return path


@pytest.fixture
def depth_runs(tmp_path):
    same = predictions(0.6, 1)
    paths = [
        write_classifier_run(
            tmp_path,
            "freeze_depth",
            "d-1",
            {"model": "m", "freeze_depth": -1, "seed": 1},
            {"en": same, "de": predictions(0.5, 2)},
        ),
        write_classifier_run(
            tmp_path,
            "freeze_depth",
            "d0",
            {"model": "m", "freeze_depth": 0, "seed": 1},
            {"en": same, "de": predictions(0.5, 2)},
        ),  # identical to nothing frozen
        write_classifier_run(
            tmp_path,
            "freeze_depth",
            "d3",
            {"model": "m", "freeze_depth": 3, "seed": 1},
            {"en": predictions(0.9, 3), "de": predictions(0.8, 4)},
        ),
    ]
    return paths


def test_neighbours_and_baseline_with_mcnemar_and_holm(depth_runs):
    table = paired_tests(read_runs(depth_runs), "freeze_depth", resamples=300)
    pairs = set(zip(table["run_a"], table["run_b"], table["comparison"]))
    assert pairs == {("d-1", "d0", "neighbours"), ("d0", "d3", "neighbours"), ("d-1", "d3", "vs_baseline")}
    assert len(table) == 3 * 2 and set(table["test"]) == {"mcnemar"}  # two languages a pair
    same = table[(table.run_a == "d-1") & (table.run_b == "d0")]
    assert (same["diff"] == 0).all() and (same["p_value"] == 1).all() and not same["significant"].any()
    better = table[(table.run_a == "d-1") & (table.run_b == "d3")].set_index("set")
    assert better.loc["lang=en", "diff"] == pytest.approx(0.3) and better.loc["lang=de", "diff"] == pytest.approx(0.3)
    assert better["significant"].all() and (better["diff_ci_low"] > 0.2).all()
    np.testing.assert_allclose(table["p_holm"], holm(table["p_value"]))
    assert (table["p_holm"] >= table["p_value"]).all()


def test_the_cache_column_leaves_the_depth_pairs_as_they_were(tmp_path):
    """cache_frozen_prefix follows from the depth (-1 trains uncached beside cached depths), so
    it is no comparison axis: the runs pair along freeze_depth exactly as without the column,
    and the tidy table carries it and prefix_precision as columns."""
    from xlt.report.aggregate import aggregate

    same, de = predictions(0.6, 1), predictions(0.5, 2)
    shares = {-1: (same, de), 0: (same, de), 3: (predictions(0.9, 3), predictions(0.8, 4))}

    def runs(root, with_columns):
        return [
            write_classifier_run(
                root,
                "freeze_depth",
                f"d{d}",
                {"model": "m", "freeze_depth": d, "seed": 1}
                | ({"cache_frozen_prefix": d >= 0, "prefix_precision": "bfloat16"} if with_columns else {}),
                {"en": en, "de": other},
            )
            for d, (en, other) in shares.items()
        ]

    def pairs(paths):
        table = paired_tests(read_runs(paths), "freeze_depth", resamples=200)
        return list(zip(table.axis, table.comparison, table.run_a, table.run_b, table.set, table.p_value))

    plain, marked = runs(tmp_path / "plain", False), runs(tmp_path / "marked", True)
    assert pairs(marked) == pairs(plain) and len(pairs(plain)) == 6
    table = aggregate(marked)
    assert {"cache_frozen_prefix", "prefix_precision"} <= set(table.columns)
    by_run = table.drop_duplicates("run_id").set_index("run_id")
    assert by_run["cache_frozen_prefix"].to_dict() == {"d-1": False, "d0": True, "d3": True}
    assert set(by_run["prefix_precision"]) == {"bfloat16"}


def test_holm_can_undo_a_lone_small_p_value(tmp_path):
    """A difference that is significant alone stops being so among many null comparisons."""
    base = predictions(0.60, 1)
    nudged = base.copy()
    flips = np.flatnonzero(nudged != GOLD)[:14]  # 14 more right, none worse: McNemar p = 2 / 2**14
    nudged[flips] = GOLD[flips]
    paths = [
        write_classifier_run(
            tmp_path,
            "freeze_depth",
            f"d{d}",
            {"model": "m", "freeze_depth": d, "seed": 1},
            {"en": nudged if d == 0 else base},
        )
        for d in range(-1, 12)
    ]
    table = paired_tests(read_runs(paths), "freeze_depth", resamples=200)
    row = table[(table.run_a == "d-1") & (table.run_b == "d0")].iloc[0]
    assert row["p_value"] < 0.05
    assert row["p_holm"] >= min(1.0, row["p_value"] * 2)  # corrected over the family's rows


def test_untrained_baseline_matches_on_the_axes_it_has(tmp_path):
    rng = np.random.default_rng(0)
    gold = rng.uniform(0, 5, N)

    def run(run_id, axes, noise):
        metrics = MetricsFile("sbert", run_id, axes=axes, manifest=False)
        predicted = gold + rng.normal(scale=noise, size=N)
        metrics.examples.append(
            example_set("scores", "spearman", predicted=predicted, gold=gold, lang="en", similarity="cosine")
        )
        metrics.add("spearman", 0.0, lang="en", similarity="cosine")
        path = tmp_path / run_id / "eval.json"
        metrics.write(path)
        return path

    paths = [
        run("untrained", {"model": "m", "pooling": "mean", "trained": False, "freeze_depth": None, "seed": None}, 4.0),
        run("trained", {"model": "m", "pooling": "mean", "trained": True, "freeze_depth": -1, "seed": 1}, 0.5),
        run("other-pooling", {"model": "m", "pooling": "cls", "trained": True, "freeze_depth": -1, "seed": 1}, 0.5),
    ]
    table = paired_tests(read_runs(paths), "sbert", resamples=300)
    baseline = table[table.comparison == "vs_baseline"]
    assert list(zip(baseline.run_a, baseline.run_b)) == [("untrained", "trained")]  # not the cls run
    row = baseline.iloc[0]
    assert row["test"] == "paired_bootstrap" and row["metric"] == "spearman"
    assert row["diff"] > 0.3 and row["diff_ci_low"] > 0 and row["significant"]


def test_sets_scored_on_other_examples_are_not_compared(tmp_path):
    a = write_classifier_run(tmp_path, "freeze_depth", "a", {"freeze_depth": -1}, {"en": predictions(0.5, 1)})
    metrics = MetricsFile("freeze_depth", "b", axes={"freeze_depth": 2}, manifest=False)
    other_gold = (GOLD + 1) % 3
    metrics.examples.append(
        example_set("classification", "accuracy", prediction=other_gold, gold=other_gold, lang="en")
    )
    metrics.write(tmp_path / "b" / "eval.json")
    assert paired_tests(read_runs([a, tmp_path / "b" / "eval.json"]), "freeze_depth").empty


def _with_dev_sets(paths, interval_only):
    """Each run's examples file plus a source-language dev set and a pseudo-label set, scored
    differently per run, so a paired test would find them worth comparing."""
    from xlt.core.metrics import examples_path, read_examples, write_examples

    for shift, path in enumerate(paths):
        extra = {"interval_only": True} if interval_only else {}
        sets = read_examples(examples_path(path)) + [
            example_set(
                "classification",
                "accuracy",
                prediction=predictions(0.3 + 0.3 * shift, 9 + shift),
                gold=GOLD,
                lang="en",
                split="dev",
                **extra,
            ),
            example_set(
                "classification",
                "pseudo_label_accuracy",
                prediction=predictions(0.9 - 0.3 * shift, shift),
                gold=GOLD,
                **extra,
            ),
        ]
        write_examples(examples_path(path), sets)


def test_interval_only_sets_leave_the_tests_table_as_it_was(depth_runs):
    before = paired_tests(read_runs(depth_runs), "freeze_depth", resamples=300)
    _with_dev_sets(depth_runs, interval_only=True)
    pd.testing.assert_frame_equal(paired_tests(read_runs(depth_runs), "freeze_depth", resamples=300), before)
    # without the mark the same sets are compared, and Holm corrects over more rows
    _with_dev_sets(depth_runs, interval_only=False)
    marked_and_not = paired_tests(read_runs(depth_runs), "freeze_depth", resamples=300)
    assert len(marked_and_not) == len(before) + 3 * 2
    same_rows = before.merge(marked_and_not, on=["run_a", "run_b", "set"], suffixes=("", "_more"))
    assert len(same_rows) == len(before) and (same_rows["p_value"] == same_rows["p_value_more"]).all()
    assert (same_rows["p_holm_more"] > same_rows["p_holm"]).any()


def test_a_missing_examples_file_names_the_run_and_the_fix(tmp_path):
    metrics = MetricsFile("freeze_depth", "lonely", axes={"freeze_depth": 1}, manifest=False)
    metrics.add("accuracy", 0.5, lang="en")
    metrics.write(tmp_path / "eval.json")
    with pytest.raises(XltError, match=r"run 'lonely' has no per-example outputs.*rerun its evaluation job"):
        read_runs([tmp_path / "eval.json"])


def test_seed_spread_beside_the_bootstrap_half_width():
    table = pd.DataFrame(
        {
            "family": "freeze_depth",
            "run_id": ["a1", "a2", "a3", "b1"],
            "model": "m",
            "freeze_depth": [2, 2, 2, 5],
            "seed": [1, 2, 3, 1],
            "lang": "en",
            "metric": "accuracy",
            "value": [0.60, 0.66, 0.69, 0.7],
            "ci_low": [0.55, 0.61, 0.64, 0.65],
            "ci_high": [0.65, 0.71, 0.74, 0.75],
        }
    )
    seeds = seeds_table(table)
    assert len(seeds) == 1  # depth 5 has one seed: no spread to give
    row = seeds.iloc[0]
    assert row["n_seeds"] == 3 and row["freeze_depth"] == 2
    assert row["mean"] == pytest.approx(np.mean([0.60, 0.66, 0.69]))
    assert row["seed_std"] == pytest.approx(np.std([0.60, 0.66, 0.69], ddof=1))
    assert row["ci_halfwidth_mean"] == pytest.approx(0.05)
    assert seeds_table(table[table.seed == 1]).empty


def test_the_verb_writes_both_tables(depth_runs, tmp_path, capsys):
    table = tmp_path / "freeze_depth.csv"
    pd.DataFrame(
        {
            "family": "freeze_depth",
            "run_id": ["d-1"],
            "freeze_depth": [-1],
            "seed": [1],
            "lang": "en",
            "metric": "accuracy",
            "value": [0.6],
        }
    ).to_csv(table, index=False)
    out_tests, out_seeds = tmp_path / "t.csv", tmp_path / "s.csv"
    assert main(
        [
            "compare",
            *map(str, depth_runs),
            "--family",
            "freeze_depth",
            "--table",
            str(table),
            "--out-tests",
            str(out_tests),
            "--out-seeds",
            str(out_seeds),
            "--resamples",
            "200",
        ]
    ) in (0, None)
    assert len(pd.read_csv(out_tests)) == 6 and out_seeds.is_file()
    assert "6 paired comparisons" in capsys.readouterr().out


def write_perplexity_run(root, run_id, axes, loss_by_set, tokens, masks, mask_seed=11):
    metrics = MetricsFile("adapt", run_id, axes=axes, manifest=False)
    for (lang, split), loss in loss_by_set.items():
        metrics.add("perplexity", float(np.exp(loss.sum() / tokens.sum())), lang=lang, split=split)
        metrics.examples.append(
            example_set(
                "perplexity",
                "perplexity",
                loss=loss,
                tokens=tokens,
                masks=masks,
                mask_seed=mask_seed,
                lang=lang,
                split=split,
            )
        )
    path = root / run_id / "metrics.json"
    metrics.write(path)
    return path


def test_adapt_schemes_against_the_pre_trained_model_and_their_neighbours(tmp_path):
    """adapt: every scheme against the untouched model it started from (which has no seed) and
    neighbouring schemes in the report's order (0-12, 9-12, 11-12, gradual; as text 11-12 would
    sort before 9-12); the native model, whose tokenizer masks other tokens, is compared with
    nothing; the pooled multilingual set is compared like the target set."""
    rng = np.random.default_rng(0)
    n = 300
    tokens = rng.integers(1, 8, n)
    base = np.array([rng.gamma(4.0, 0.75, t).sum() for t in tokens])  # about 3 nats a token
    masks = [f"{i:012x}" for i in range(n)]
    sets = [("qab", "dev"), ("multilingual", "dev")]
    adapted = {"0-12": 0.5, "9-12": 0.2, "11-12": 0.2, "gradual-start4-step4-every30steps": 0.3}
    paths = [
        write_perplexity_run(
            tmp_path,
            "reference-m",
            {"model": "m", "scheme": "pre-trained", "role": "transfer"},
            {s: base for s in sets},
            tokens,
            masks,
        ),
        write_perplexity_run(
            tmp_path,
            "reference-native",
            {"model": "native", "scheme": "pre-trained", "role": "native"},
            {s: base * 0.5 for s in sets},
            tokens,
            [f"other{i}" for i in range(n)],
        ),
    ]
    paths += [
        write_perplexity_run(
            tmp_path,
            f"m-{scheme}-seed1",
            {"model": "m", "scheme": scheme, "seed": 1, "role": "adapted"},
            {s: base - gain * tokens for s in sets},
            tokens,
            masks,
        )
        for scheme, gain in adapted.items()
    ]
    table = paired_tests(read_runs(paths), "adapt", resamples=300)
    pairs = set(zip(table["a"], table["b"], table["comparison"]))
    assert pairs == {
        ("0-12", "9-12", "neighbours"),
        ("9-12", "11-12", "neighbours"),
        ("11-12", "gradual-start4-step4-every30steps", "neighbours"),
    } | {("pre-trained", scheme, "vs_baseline") for scheme in adapted}
    assert len(table) == 7 * 2 and set(table["test"]) == {"paired_bootstrap"} and set(table["metric"]) == {"perplexity"}
    assert set(table["axis"]) == {"scheme"} and "reference-native" not in set(table.run_a) | set(table.run_b)
    rows = table[table.comparison == "vs_baseline"].set_index(["b", "set"])
    row = rows.loc[("0-12", "lang=qab,mask_seed=11,split=dev")]
    before, after = np.exp(base.sum() / tokens.sum()), np.exp((base - 0.5 * tokens).sum() / tokens.sum())
    assert (row.value_a, row.value_b, row["diff"]) == pytest.approx((before, after, after - before))
    assert row.diff_ci_high < 0 and row.significant
    same = table[(table.a == "9-12") & (table.b == "11-12")]
    assert (same["diff"] == 0).all() and (same["p_value"] == 1).all() and not same["significant"].any()


def test_perplexities_with_other_masks_are_not_compared(tmp_path):
    rng = np.random.default_rng(1)
    tokens = rng.integers(1, 5, 50)
    loss = rng.gamma(4.0, 0.5, 50) * tokens
    masks = [str(i) for i in range(50)]
    a = write_perplexity_run(
        tmp_path, "a", {"model": "m", "scheme": "0-12", "seed": 1}, {("x", "dev"): loss}, tokens, masks
    )
    b = write_perplexity_run(
        tmp_path, "b", {"model": "m", "scheme": "9-12", "seed": 1}, {("x", "dev"): loss}, tokens, masks[::-1]
    )
    assert paired_tests(read_runs([a, b]), "adapt").empty
    c = write_perplexity_run(
        tmp_path, "c", {"model": "m", "scheme": "9-12", "seed": 1}, {("x", "dev"): loss}, tokens, masks, mask_seed=12
    )  # another mask seed: another set, no pair
    assert paired_tests(read_runs([a, c]), "adapt").empty


def test_the_match_axis_leaves_the_pairs_as_they_were_and_never_pairs_two_rules(tmp_path):
    # eval-embeddings records the retrieval rule as the axis `match`, the same on every run of a
    # family, so the dual runs pair exactly as without it; a run scored by another rule pairs with none
    gold = np.arange(N)

    def run(root, run_id, axes, share, seed):
        metrics = MetricsFile("dual", run_id, axes=axes, manifest=False)
        found = np.where(np.random.default_rng(seed).random(N) < share, gold, (gold + 1) % N)
        metrics.examples.append(
            example_set(
                "retrieval",
                "accuracy@1",
                retrieved=found,
                gold=gold,
                correct=found == gold,
                lang="qaa",
                direction="xx->en",
            )
        )
        metrics.add("accuracy@1", float(np.mean(found == gold)), lang="qaa", direction="xx->en")
        path = root / run_id / "tatoeba.json"
        metrics.write(path)
        return path

    untrained = {"model": "m", "margin": None, "seed": None, "trained": False}
    runs = [
        ("untrained", untrained, 0.1, 1),
        ("m0", {"model": "m", "margin": 0, "seed": 1, "trained": True}, 0.6, 2),
        ("m3", {"model": "m", "margin": 0.3, "seed": 1, "trained": True}, 0.8, 3),
    ]

    def pairs(root, extra):
        paths = [run(root, run_id, axes | extra, share, seed) for run_id, axes, share, seed in runs]
        table = paired_tests(read_runs(paths), "dual", resamples=200)
        return list(zip(table.axis, table.comparison, table.run_a, table.run_b, table.set))

    (tmp_path / "plain").mkdir()
    (tmp_path / "index").mkdir()
    before, after = pairs(tmp_path / "plain", {}), pairs(tmp_path / "index", {"match": "index"})
    assert after == before and len(before) == 3  # margin neighbours, two against the untrained encoder
    # the untrained encoder is a wildcard only on the axes it lacks: not on the rule
    mixed = [
        run(tmp_path / "index", "untrained", untrained | {"match": "index"}, 0.1, 1),
        run(tmp_path / "text", "m0-text", runs[1][1] | {"match": "text"}, 0.6, 2),
    ]
    assert paired_tests(read_runs(mixed), "dual", resamples=200).empty


def test_dual_objectives_pair_the_distilled_student_with_the_teacher_and_each_additive_margin_run(tmp_path):
    """The reference axis: every objective against every earlier one on the same items, an axis
    either run lacks matching anything; other poolings and the untrained encoder stay apart."""
    none = {"margin": None, "scale": None, "batch_size": None, "freeze_depth": None, "seed": None}
    runs = {
        "untrained": {"model": "m", "objective": None, "pooling": "mean", "trained": False, **none},
        "teacher": {"model": "m", "objective": "teacher", "pooling": "mean", "trained": True, **none},
        "am0": {
            "model": "m",
            "objective": "additive_margin",
            "margin": 0,
            "scale": 10,
            "pooling": "mean",
            "batch_size": 32,
            "freeze_depth": -1,
            "seed": 1,
            "trained": True,
        },
        "am3": {
            "model": "m",
            "objective": "additive_margin",
            "margin": 0.3,
            "scale": 10,
            "pooling": "mean",
            "batch_size": 32,
            "freeze_depth": -1,
            "seed": 1,
            "trained": True,
        },
        "kd": {
            "model": "m",
            "objective": "mse_distill",
            "margin": None,
            "scale": None,
            "pooling": "mean",
            "batch_size": 32,
            "freeze_depth": -1,
            "seed": 1,
            "trained": True,
        },
        "kd-cls": {
            "model": "m",
            "objective": "mse_distill",
            "margin": None,
            "scale": None,
            "pooling": "cls",
            "batch_size": 32,
            "freeze_depth": -1,
            "seed": 1,
            "trained": True,
        },
    }
    shares = {"untrained": 0.1, "teacher": 0.3, "am0": 0.6, "am3": 0.7, "kd": 0.9, "kd-cls": 0.9}
    paths = [
        write_classifier_run(tmp_path, "dual", run_id, axes, {"qac": predictions(shares[run_id], i)})
        for i, (run_id, axes) in enumerate(runs.items())
    ]
    table = paired_tests(read_runs(paths), "dual", resamples=200)
    reference = table[table.comparison == "vs_reference"]
    assert set(zip(reference.run_a, reference.run_b)) == {
        ("teacher", "am0"),
        ("teacher", "am3"),
        ("teacher", "kd"),
        ("am0", "kd"),
        ("am3", "kd"),
    }
    assert (reference.axis == "objective").all()
    kd = reference[(reference.run_a == "teacher") & (reference.run_b == "kd")].iloc[0]
    assert kd["a"] == "teacher" and kd["b"] == "mse_distill"
    assert kd["diff"] == pytest.approx(0.6) and kd["test"] == "mcnemar" and kd["significant"]
    # the untrained encoder still meets every trained run with its pooling (the family's baseline)
    baseline = table[table.comparison == "vs_baseline"]
    assert set(baseline.run_b) == {"teacher", "am0", "am3", "kd"}


def test_objectives_of_other_budgets_are_paired_and_the_row_says_both_budgets(tmp_path):
    """Issue 35: the distillation's recipe (64 sentences, 24M seen) against the margin's (256 pairs,
    4.8M): the objectives still meet across their own batch sizes, every row states both budgets,
    and the budget-matched distilled run is the one with equal_budget true."""
    none = {
        "margin": None,
        "scale": None,
        "batch_size": None,
        "freeze_depth": None,
        "seed": None,
        "sentences_seen": None,
    }
    trained = {"model": "m", "pooling": "mean", "freeze_depth": -1, "seed": 1, "trained": True}
    runs = {
        "teacher": {"model": "m", "objective": "teacher", "pooling": "mean", "trained": True, **none},
        "am": {
            **trained,
            "objective": "additive_margin",
            "margin": 0.3,
            "scale": 10,
            "batch_size": 256,
            "sentences_seen": 4_800_000,
        },
        "kd": {
            **trained,
            "objective": "mse_distill",
            "margin": None,
            "scale": None,
            "batch_size": 64,
            "sentences_seen": 24_000_000,
        },
        "kd-matched": {
            **trained,
            "objective": "mse_distill",
            "margin": None,
            "scale": None,
            "batch_size": 64,
            "sentences_seen": 4_800_000,
        },
    }
    shares = {"teacher": 0.3, "am": 0.7, "kd": 0.9, "kd-matched": 0.8}
    paths = [
        write_classifier_run(tmp_path, "dual", run_id, axes, {"qac": predictions(shares[run_id], i)})
        for i, (run_id, axes) in enumerate(runs.items())
    ]
    table = paired_tests(read_runs(paths), "dual", resamples=200)
    rows = {(r.run_a, r.run_b): r for r in table.itertuples()}
    assert set(rows) == {
        ("teacher", "am"),
        ("teacher", "kd"),
        ("teacher", "kd-matched"),
        ("am", "kd"),
        ("am", "kd-matched"),
        ("kd-matched", "kd"),
    }
    assert (rows["am", "kd"].budget_a, rows["am", "kd"].budget_b, rows["am", "kd"].equal_budget) == (
        4_800_000,
        24_000_000,
        False,
    )
    assert rows["am", "kd-matched"].equal_budget is True
    assert rows["teacher", "kd"].equal_budget is None  # the teacher has no training budget
    # the two distilled runs differ in budget alone: compared along it
    assert rows["kd-matched", "kd"].axis == "sentences_seen"
    # a family without a budget axis keeps its columns
    assert "budget_a" not in paired_tests(read_runs(paths), "freeze_depth", resamples=200).columns


def test_budget_rows_say_what_each_run_trained_and_where_it_started(tmp_path):
    """Issue 47: a distilled student (from the model, taught by the NLI teacher) meets the margin run
    from the model and the one from the teacher's checkpoint; every row names both starts, and the
    budget rows give each run's measured sentences, steps, peak lr and dev checks from its train.json
    beside the planned budget. equal_budget compares the measured budgets: the plan said 4.8M for both,
    but the margin run's epoch was shorter (4,700,160 seen)."""
    from xlt.analysis.compare import read_training

    trained = {"model": "m", "pooling": "mean", "freeze_depth": -1, "seed": 1, "trained": True}
    margin = {**trained, "objective": "additive_margin", "margin": 0.3, "scale": 10, "batch_size": 256}
    kd = {**trained, "objective": "mse_distill", "margin": None, "scale": None, "batch_size": 64}
    runs = {
        "am": {**margin, "sentences_seen": 4_800_000, "start": "pretrained"},
        "am-t": {**margin, "sentences_seen": 4_800_000, "start": "teacher"},
        "kd": {**kd, "sentences_seen": 4_800_000, "start": "pretrained"},
    }
    shares = {"am": 0.6, "am-t": 0.7, "kd": 0.8}
    paths = [
        write_classifier_run(tmp_path, "dual", run_id, axes, {"qac": predictions(shares[run_id], i)})
        for i, (run_id, axes) in enumerate(runs.items())
    ]
    records = []
    for run_id, steps, batch, lr, checks in (
        ("am", 9_180, 256, 1e-5, 9),
        ("am-t", 9_180, 256, 1e-5, 9),
        ("kd", 75_000, 64, 2e-5, 75),
    ):
        record = MetricsFile("dual", run_id, axes=runs[run_id], manifest=False)
        seen = steps * batch * (2 if run_id.startswith("am") else 1)
        record.meta.update(
            steps=steps, sentences_seen=seen, train={"lr": lr}, history=[{"step": s} for s in range(checks)]
        )
        record.write(tmp_path / run_id / "train.json")
        records.append(tmp_path / run_id / "train.json")
    table = paired_tests(read_runs(paths), "dual", resamples=200, training=read_training(records))
    rows = {(r.run_a, r.run_b): r for r in table.itertuples()}
    assert set(rows) == {("am", "am-t"), ("am", "kd"), ("am-t", "kd")}
    assert rows["am", "am-t"].axis == "start" and (rows["am", "am-t"].a, rows["am", "am-t"].b) == (
        "pretrained",
        "teacher",
    )
    row = rows["am-t", "kd"]
    assert (row.start_a, row.start_b) == ("teacher", "pretrained")
    assert (row.budget_a, row.budget_b) == (4_800_000, 4_800_000)  # planned
    assert (row.seen_a, row.seen_b) == (9_180 * 512, 4_800_000)  # measured: 4,700,160 and 4,800,000
    assert (row.steps_a, row.steps_b, row.lr_a, row.lr_b) == (9_180, 75_000, 1e-5, 2e-5)
    assert (row.dev_checks_a, row.dev_checks_b) == (9, 75)
    assert row.equal_budget is False and rows["am", "am-t"].equal_budget is True
