"""The positive control's checks on crafted tables: a passing set passes, and for every check a
crafted failing row fails that check (and only it); missing rows fail; a disabled family, or a
check the sweep cannot answer, is reported as not run."""

import copy

import pandas as pd
import pytest

from xlt.core.errors import XltError
from xlt.report.positive_control import checks
from xlt.report.positive_control.checks import FAIL, NOT_RUN, PASS, check_names, positive_control

CHECK_NAMES = check_names()  # family -> its checks' names, from the registered families

WORLD = {
    "qaa": {"overlap": 0.5, "order": "SVO", "adjectives": "pre"},
    "qab": {"overlap": 0.2, "order": "SVO", "adjectives": "post"},
    "qac": {"overlap": 0.0, "order": "SOV", "adjectives": "post"},
}
THRESHOLDS = {
    "freeze_depth": {"source_accuracy": 0.85, "above_chance": 0.20, "order_tolerance": 0.0, "depth_gain": 0.10},
    "alignment": {"chance_factor": 10},
    "dual": {"error_drop": 0.20, "distill_gain": 0.20},
    "monox": {"modes": ["finetune", "kd", "pl"], "source_accuracy": 0.80, "max_majority_share": 0.70},
    "sbert": {"spearman_gain": 0.10},
}
MODEL = "m"  # freeze_depth's model column: the config's model name
DUAL_RUNS = ("m-margin0-scale10-mean-bs32-depthnone-seed1", "m-margin0.3-scale10-mean-bs32-depthnone-seed1")
KD_RUN, TEACHER_RUN = "m-distill-mean-bs32-depthnone-seed1", "teacher-m-mean-L-1-depthnone-seed1"
SBERT_RUN, SBERT_BASE = "m-mean-L-1-depthnone-seed1", "m-mean-L-1-untrained"


# ------------------------------------------------------------------ crafted tables that pass


def freeze_depth_table(overrides=None):
    """Depths -1 .. 4 of a 4-layer model, two seeds (the checks average them: seed 2 = seed 1 + 0.02
    and seed 1 - 0.02 are the same mean). Nothing frozen: en 0.9, qaa 0.7, qab 0.5, qac 0.4;
    depth 4 (all frozen) 0.4 on qaa; other depths 0.6. `overrides`: (depth, lang) -> mean accuracy."""
    means = {}
    for depth in range(-1, 5):
        for lang in ("en", "qaa", "qab", "qac"):
            means[(depth, lang)] = 0.6
    means.update({(-1, "en"): 0.9, (-1, "qaa"): 0.7, (-1, "qab"): 0.5, (-1, "qac"): 0.4, (4, "qaa"): 0.4})
    means.update(overrides or {})
    rows = []
    for (depth, lang), mean in means.items():
        for seed, shift in ((1, -0.02), (2, 0.02)):
            rows.append(
                {
                    "family": "freeze_depth",
                    "run_id": f"m-depth{depth}-seed{seed}",
                    "model": MODEL,
                    "freeze_depth": depth,
                    "seed": seed,
                    "lang": lang,
                    "metric": "accuracy",
                    "value": mean + shift,
                }
            )
    rows.append(
        {
            "family": "freeze_depth",
            "run_id": "m-depth-1-seed1",
            "model": MODEL,
            "freeze_depth": -1,
            "seed": 1,
            "lang": "avg",
            "metric": "accuracy",
            "value": 0.6,
        }
    )
    return pd.DataFrame(rows)


def alignment_table(centred=None, raw=0.0):
    """pretrained-m on qaa, layers 0..4: centred mean accuracy 0.05 at layer 0, 0.30 at layer 2
    (xx->en 0.35, en->xx 0.25), 0.2 elsewhere; the raw metric is `raw` everywhere; qab has 0."""
    centred = centred or {0: 0.05, 1: 0.2, 2: 0.3, 3: 0.2, 4: 0.2}
    rows = []
    for layer, mean in centred.items():
        for direction, shift in (("xx->en", 0.05), ("en->xx", -0.05)):
            base = {
                "family": "alignment",
                "run_id": "pretrained-m",
                "model": MODEL,
                "source": "pretrained",
                "source_run": "",
                "layer": layer,
                "direction": direction,
            }
            rows.append({**base, "lang": "qaa", "metric": "bitext_retrieval_acc_centered", "value": mean + shift})
            rows.append({**base, "lang": "qaa", "metric": "bitext_retrieval_acc", "value": raw})
            rows.append({**base, "lang": "qab", "metric": "bitext_retrieval_acc_centered", "value": 0.0})
            # a dual run aligns perfectly; the check reads the pretrained model only
            rows.append(
                {
                    **base,
                    "run_id": "dual-x",
                    "source": "dual",
                    "lang": "qaa",
                    "metric": "bitext_retrieval_acc_centered",
                    "value": 1.0 if layer == 0 else 0.0,
                }
            )
    return pd.DataFrame(rows)


def dual_table(errors=None):
    """mean_error (and per-direction error) per run and language: untrained 0.9, runs 0.5 and 0.6;
    the distilled student 0.4 and its teacher scored zero-shot 0.85."""
    errors = errors or {}
    rows = []
    for run, trained, default in (
        (DUAL_RUNS[0], True, 0.5),
        (DUAL_RUNS[1], True, 0.6),
        ("m-mean-untrained", False, 0.9),
        (KD_RUN, True, 0.4),
        (TEACHER_RUN, True, 0.85),
    ):
        for lang in ("qaa", "qab", "qac"):
            value = errors.get((run, lang), default)
            base = {
                "family": "dual",
                "run_id": run,
                "trained": trained,
                "pooling": "mean",
                "lang": lang,
                "split": "test",
                "dataset": "demo-bitext",
            }
            rows.append({**base, "metric": "mean_error", "value": value})
            rows.append({**base, "metric": "error", "direction": "xx->en", "value": value + 0.05})
            rows.append({**base, "metric": "error", "direction": "en->xx", "value": value - 0.05})
    # a trained run's training record and mining rows: not retrieval errors
    rows.append({"family": "dual", "run_id": DUAL_RUNS[0], "trained": True, "metric": "dev_accuracy", "value": 0.1})
    rows.append(
        {"family": "dual", "run_id": DUAL_RUNS[0], "trained": True, "lang": "qaa", "metric": "f1", "value": 0.1}
    )
    return pd.DataFrame(rows)


def monox_table(accuracy=None, shares=None):
    """Headline students of every mode: en test accuracy 0.85, majority share 0.55 per language;
    a size-20 student (not headline) that collapsed, and the teacher, are not checked."""
    accuracy, shares = accuracy or {}, shares or {}
    rows = []
    students = [(f"m-t-{mode}-nall-seed1", mode, True) for mode in ("finetune", "self_train", "kd", "pl")]
    students.append(("m-t-kd-n20-seed1", "kd", False))
    for run, mode, headline in students:
        base = {"family": "monox", "run_id": run, "mode": mode, "headline": headline, "split": "test"}
        for lang in ("en", "qaa", "qab", "qac"):
            acc = accuracy.get((mode, lang), 0.85 if headline else 0.3)
            share = shares.get((mode, lang), 0.55 if headline else 0.99)
            rows.append({**base, "lang": lang, "metric": "accuracy", "value": acc})
            rows.append({**base, "lang": lang, "metric": "majority_share", "value": share})
        rows.append({**base, "lang": "avg", "metric": "accuracy", "value": 0.6})
        rows.append({**base, "lang": "en", "split": "dev", "metric": "accuracy", "value": 0.1})
    rows.append(
        {
            "family": "monox",
            "run_id": "teacher-t-nall-seed1",
            "mode": "teacher",
            "headline": True,
            "split": "test",
            "lang": "en",
            "metric": "accuracy",
            "value": 0.1,
        }
    )
    return pd.DataFrame(rows)


def sbert_table(trained=0.6, untrained=0.4):
    rows = []
    for run, is_trained, value in ((SBERT_RUN, True, trained), (SBERT_BASE, False, untrained)):
        base = {
            "family": "sbert",
            "run_id": run,
            "trained": is_trained,
            "pooling": "mean",
            "split": "test",
            "dataset": "demo-sts",
        }
        rows.append({**base, "lang": "en", "similarity": "cosine", "metric": "spearman", "value": value})
        # other similarities, languages and metrics are not the check's
        rows.append({**base, "lang": "en", "similarity": "euclidean", "metric": "spearman", "value": 1 - value})
        rows.append({**base, "lang": "qaa", "similarity": "cosine", "metric": "spearman", "value": 1 - value})
        rows.append({**base, "lang": "en", "similarity": "cosine", "metric": "pearson", "value": 1 - value})
        rows.append(
            {**base, "lang": "qaa", "split": "test", "dataset": "demo-bitext", "metric": "mean_error", "value": 0.5}
        )
    return pd.DataFrame(rows)


def adapt_table(final=None):
    """Final perplexities (no step) of the untouched model (reference-m: qab test 100,
    multilingual dev 50) and three schemes; step records (curves) that the checks ignore."""
    final = final or {}
    values = {
        ("0-4", "qab"): 40,
        ("0-4", "multilingual"): 70,
        ("2-4", "qab"): 50,
        ("2-4", "multilingual"): 60,
        ("gradual-start1-step1-every2steps", "qab"): 45,
        ("gradual-start1-step1-every2steps", "multilingual"): 55,
    }
    values.update(final)
    rows = [
        {
            "family": "adapt",
            "run_id": "reference-m",
            "model": "m",
            "scheme": "pre-trained",
            "role": "transfer",
            "lang": lang,
            "split": split,
            "metric": "perplexity",
            "value": value,
        }
        for lang, split, value in (("qab", "test", 100), ("qab", "dev", 90), ("multilingual", "dev", 50))
    ]
    for scheme in ("0-4", "2-4", "gradual-start1-step1-every2steps"):
        base = {"family": "adapt", "run_id": f"m-{scheme}-seed1", "model": "m", "scheme": scheme, "role": "adapted"}
        rows.append({**base, "lang": "qab", "split": "test", "metric": "perplexity", "value": values[(scheme, "qab")]})
        rows.append(
            {
                **base,
                "lang": "multilingual",
                "split": "dev",
                "metric": "perplexity",
                "value": values[(scheme, "multilingual")],
            }
        )
        rows.append({**base, "lang": "qab", "split": "dev", "metric": "perplexity", "value": 1.0})
        for step in (0, 25):  # curves: a step-0 multilingual perplexity far above every final one
            rows.append(
                {**base, "lang": "multilingual", "split": "dev", "step": step, "metric": "perplexity", "value": 1000.0}
            )
            rows.append({**base, "lang": "qab", "split": "test", "step": step, "metric": "perplexity", "value": 1.0})
    return pd.DataFrame(rows)


def tables():
    return {
        "freeze_depth": freeze_depth_table(),
        "alignment": alignment_table(),
        "dual": dual_table(),
        "monox": monox_table(),
        "sbert": sbert_table(),
        "adapt": adapt_table(),
    }


def spec():
    return {
        "world": copy.deepcopy(WORLD),
        "thresholds": copy.deepcopy(THRESHOLDS),
        "freeze_depth": {"source_lang": "en", "labels": 3, "models": {MODEL: {"name": "m", "layers": 4}}},
        "alignment": {
            "runs": ["pretrained-m"],
            "metric": "bitext_retrieval_acc_centered",
            "candidates": {"qaa": 100, "qab": 100, "qac": 100},
        },
        "dual": {
            "pairs": {run: "m-mean-untrained" for run in DUAL_RUNS},
            "langs": ["qaa", "qab", "qac"],
            "distill": {KD_RUN: TEACHER_RUN},
            "distill_lang": "qac",
        },
        "monox": {"source_lang": "en", "modes": ["finetune", "self_train", "kd", "pl"]},
        "sbert": {"pairs": {SBERT_RUN: SBERT_BASE}, "lang": "en", "dataset": "demo-sts", "split": "test"},
        "adapt": {
            "target": "qab",
            "target_split": "test",
            "multilingual": "multilingual",
            "multilingual_split": "dev",
            "references": {"m": "reference-m"},
            "all_layers": {"m": "0-4"},
        },
    }


def run(table_overrides=None, spec_overrides=None):
    return positive_control({**tables(), **(table_overrides or {})}, {**spec(), **(spec_overrides or {})})


def only_failures(result):
    bad = result[result["pass"] == FAIL]
    return [(family, check) for family, check in zip(bad.family, bad.check)]


# ------------------------------------------------------------------ the passing set


def test_a_world_that_shows_every_effect_passes_every_check():
    result = run()
    assert list(result.columns) == ["family", "check", "subject", "expected", "observed", "pass", "known_failure"]
    assert set(result["pass"]) == {PASS}, result.to_string()
    # every check of every family has at least one row
    assert {(f, c) for f, c in zip(result.family, result.check)} == {
        (f, c) for f, names in CHECK_NAMES.items() for c in names
    }
    # per subject: 4 freeze_depth, 2 alignment, 2 runs x 3 languages, 3 accuracies + 4 shares, 1, 3 schemes + 1
    assert result.groupby("family", sort=False).size().to_dict() == {
        "freeze_depth": 4,
        "alignment": 2,
        "dual": 7,
        "monox": 7,
        "sbert": 1,
        "adapt": 4,
    }


def test_observed_values_are_what_the_checks_compared():
    result = run().set_index(["family", "check"])
    fd = CHECK_NAMES["freeze_depth"]
    assert result.loc[("freeze_depth", fd[0]), "observed"] == "0.900"  # the mean of seeds 0.88 and 0.92
    assert result.loc[("freeze_depth", fd[1]), "expected"] == ">= chance 1/3 + 0.2 = 0.533"
    assert result.loc[("freeze_depth", fd[1]), "subject"] == "qaa (overlap 0.5)"
    assert result.loc[("freeze_depth", fd[2]), "observed"] == "qaa 0.700, qab 0.500, qac 0.400"
    assert result.loc[("freeze_depth", fd[3]), "observed"] == "depth -1: 0.700, depth 4: 0.400"
    al = CHECK_NAMES["alignment"]
    assert result.loc[("alignment", al[0]), "observed"] == "layer 2: 0.300"  # both directions averaged
    assert result.loc[("alignment", al[0]), "expected"].startswith(
        ">= 10 x chance 1/100 = 0.100 (mean of xx->en and en->xx"
    )
    assert result.loc[("alignment", al[1]), "expected"].startswith("> layer 0 (embeddings): 0.050")
    adapt = result.loc[("adapt", CHECK_NAMES["adapt"][1])]
    assert adapt["observed"] == "0-4 +20.000, 2-4 +10.000, gradual-start1-step1-every2steps +5.000"
    sbert = result.loc[("sbert", CHECK_NAMES["sbert"][0])]
    assert (sbert["expected"].startswith(">= untrained 0.400 + 0.1 = 0.500"), sbert["observed"]) == (True, "0.600")


# ------------------------------------------------------------------ every check can fail


FD = CHECK_NAMES["freeze_depth"]


@pytest.mark.parametrize(
    "overrides, failing",
    [
        ({(-1, "en"): 0.84}, FD[0]),  # English below 0.85
        ({(-1, "qaa"): 0.52, (-1, "qab"): 0.45}, FD[1]),  # the high-overlap language 0.52 < 1/3 + 0.2
        ({(-1, "qac"): 0.55}, FD[2]),  # no overlap beats some overlap: qac 0.55 > qab 0.5
        ({(-1, "qab"): 0.75}, FD[2]),  # mid above high
        ({(4, "qaa"): 0.65}, FD[3]),  # best other depth 0.7 < depth 4's 0.65 + 0.1
    ],
)
def test_each_freeze_depth_check_fails_on_its_own_row(overrides, failing):
    result = run({"freeze_depth": freeze_depth_table(overrides)})
    assert only_failures(result) == [("freeze_depth", failing)]


def test_order_tolerance_lets_a_close_pair_pass():
    result = run({"freeze_depth": freeze_depth_table({(-1, "qac"): 0.52})})
    assert only_failures(result) == [("freeze_depth", FD[2])]
    spec_ = spec()
    spec_["thresholds"]["freeze_depth"]["order_tolerance"] = 0.05
    result = positive_control({**tables(), "freeze_depth": freeze_depth_table({(-1, "qac"): 0.52})}, spec_)
    assert only_failures(result) == []


def test_chance_follows_the_label_count():
    # 2 labels: chance 0.5, the bar 0.7: qaa's 0.7 passes, 0.69 fails
    assert only_failures(run(spec_overrides={"freeze_depth": {**spec()["freeze_depth"], "labels": 2}})) == []
    result = run(
        {"freeze_depth": freeze_depth_table({(-1, "qaa"): 0.69})},
        {"freeze_depth": {**spec()["freeze_depth"], "labels": 2}},
    )
    assert only_failures(result) == [("freeze_depth", FD[1])]


def test_the_high_overlap_language_comes_from_the_world():
    world = copy.deepcopy(WORLD)
    world["qac"]["overlap"], world["qaa"]["overlap"] = 0.5, 0.0  # qac is now the high-overlap language (0.4)
    result = run(spec_overrides={"world": world})
    assert ("freeze_depth", FD[1]) in only_failures(result)
    assert ("freeze_depth", FD[2]) in only_failures(result)  # qac 0.4 >= qab 0.5 >= qaa 0.7 does not hold
    row = result[(result.family == "freeze_depth") & (result.check == FD[1])].iloc[0]
    assert row["subject"] == "qac (overlap 0.5)" and row["observed"] == "0.400"


AL = CHECK_NAMES["alignment"]


@pytest.mark.parametrize(
    "centred, failing",
    [
        ({0: 0.05, 1: 0.08, 2: 0.09}, AL[0]),  # best 0.09 < 10 x 1/100
        ({0: 0.3, 1: 0.2, 2: 0.25}, AL[1]),  # the embedding layer is the best layer
    ],
)
def test_each_alignment_check_fails_on_its_own_row(centred, failing):
    assert only_failures(run({"alignment": alignment_table(centred)})) == [("alignment", failing)]


def test_alignment_reads_the_metric_the_spec_names_and_chance_from_the_candidates():
    # the raw metric is 0 everywhere: read instead of the centred one, both checks fail
    raw = {**spec()["alignment"], "metric": "bitext_retrieval_acc"}
    assert only_failures(run(spec_overrides={"alignment": raw})) == [("alignment", AL[0]), ("alignment", AL[1])]
    # 20 candidates: chance 0.05, the bar 0.5 > 0.3
    few = {**spec()["alignment"], "candidates": {"qaa": 20}}
    assert only_failures(run(spec_overrides={"alignment": few})) == [("alignment", AL[0])]


def test_dual_fails_per_run_and_language():
    result = run({"dual": dual_table({(DUAL_RUNS[1], "qac"): 0.75})})  # 0.75 > 0.9 - 0.2
    assert only_failures(result) == [("dual", CHECK_NAMES["dual"][0])]
    bad = result[result["pass"] == FAIL].iloc[0]
    assert bad["subject"] == f"qac (overlap 0), {DUAL_RUNS[1]}" and bad["observed"] == "0.750"
    assert bad["expected"] == "<= untrained 0.900 - 0.2 = 0.700 (mean of both directions)"
    # exactly at the bar passes
    assert only_failures(run({"dual": dual_table({(DUAL_RUNS[1], "qac"): 0.7})})) == []


def test_distilled_student_must_beat_the_zero_shot_teacher_on_the_zero_overlap_language():
    result = run({"dual": dual_table({(KD_RUN, "qac"): 0.7})})  # 0.7 > 0.85 - 0.2
    assert only_failures(result) == [("dual", CHECK_NAMES["dual"][1])]
    bad = result[result["pass"] == FAIL].iloc[0]
    assert bad["subject"] == f"qac (overlap 0), {KD_RUN}" and bad["observed"] == "0.700"
    assert bad["expected"] == "<= zero-shot teacher 0.850 - 0.2 = 0.650 (mean of both directions)"
    # the other languages do not count
    assert only_failures(run({"dual": dual_table({(KD_RUN, "qaa"): 0.99, (KD_RUN, "qac"): 0.6})})) == []
    missing = run({"dual": dual_table().query("run_id != @TEACHER_RUN").reset_index(drop=True)})
    assert only_failures(missing) == [("dual", CHECK_NAMES["dual"][1])]
    not_run = {**spec()["dual"], "not_run": {CHECK_NAMES["dual"][1]: "no distilled runs"}}
    del not_run["distill"]
    rows = run(spec_overrides={"dual": not_run})
    assert rows[rows.check == CHECK_NAMES["dual"][1]]["pass"].tolist() == [NOT_RUN]


MX = CHECK_NAMES["monox"]


@pytest.mark.parametrize(
    "table, failing_run, failing",
    [
        (monox_table(accuracy={("kd", "en"): 0.79}), "m-t-kd-nall-seed1", MX[0]),
        (monox_table(accuracy={("finetune", "en"): 0.5}), "m-t-finetune-nall-seed1", MX[0]),
        (monox_table(shares={("pl", "qac"): 0.71}), "m-t-pl-nall-seed1", MX[1]),
        # a mode whose accuracy is not checked may still not collapse
        (monox_table(shares={("self_train", "qaa"): 1.0}), "m-t-self_train-nall-seed1", MX[1]),
    ],
)
def test_each_monox_check_fails_on_its_own_row(table, failing_run, failing):
    result = run({"monox": table})
    assert only_failures(result) == [("monox", failing)]
    assert list(result[result["pass"] == FAIL].subject) == [failing_run]


def test_monox_reads_headline_students_only_and_names_the_worst_language():
    # self_train's accuracy is not checked (modes), the n20 student is no headline run
    result = run({"monox": monox_table(accuracy={("self_train", "en"): 0.1})})
    assert only_failures(result) == []
    result = run({"monox": monox_table(shares={("pl", "qac"): 0.71, ("pl", "qab"): 0.6})})
    assert result[result["pass"] == FAIL].iloc[0]["observed"] == "0.710 (qac)"


def test_sbert_fails_when_training_gains_too_little():
    assert only_failures(run({"sbert": sbert_table(trained=0.49)})) == [("sbert", CHECK_NAMES["sbert"][0])]
    assert only_failures(run({"sbert": sbert_table(trained=0.5)})) == []  # exactly untrained + 0.1


AD = CHECK_NAMES["adapt"]


@pytest.mark.parametrize(
    "final, failing",
    [
        ({("2-4", "qab"): 100}, AD[0]),  # not below the untouched model's 100
        ({("gradual-start1-step1-every2steps", "qab"): 130}, AD[0]),
        ({("2-4", "multilingual"): 75}, AD[1]),  # another scheme costs the other languages more
        ({("0-4", "multilingual"): 40}, AD[1]),  # training every layer lowers it
    ],
)
def test_each_adapt_check_fails_on_its_own_row(final, failing):
    assert only_failures(run({"adapt": adapt_table(final)})) == [("adapt", failing)]


def test_adapt_ties_with_the_all_layers_scheme_pass():
    assert only_failures(run({"adapt": adapt_table({("2-4", "multilingual"): 70})})) == []


# ------------------------------------------------------------------ missing rows, disabled families


@pytest.mark.parametrize(
    "family, table, failing",
    [
        ("freeze_depth", freeze_depth_table().query("freeze_depth != -1"), [FD[0], FD[1], FD[2]]),
        ("freeze_depth", freeze_depth_table().query("freeze_depth != 4"), [FD[3]]),
        ("alignment", alignment_table().query("layer != 0"), [AL[1]]),
        ("alignment", alignment_table().query("run_id != 'pretrained-m'"), [AL[0], AL[1]]),
        ("dual", dual_table().query("run_id != 'm-mean-untrained'"), ["training lowers the retrieval error"] * 6),
        ("monox", monox_table().query("metric != 'majority_share'"), [MX[1]]),
        ("monox", monox_table().query("mode != 'pl'"), [MX[0]]),
        ("sbert", sbert_table().query("run_id != @SBERT_BASE"), [CHECK_NAMES["sbert"][0]]),
        ("adapt", adapt_table().query("run_id != 'reference-m'"), [AD[0], AD[1]]),
        ("adapt", adapt_table().query("not (lang == 'multilingual' and scheme == '2-4')"), [AD[1]]),
    ],
)
def test_rows_the_config_asked_for_but_the_table_lacks_fail(family, table, failing):
    result = run({family: table.reset_index(drop=True)})
    bad = result[result["pass"] == FAIL]
    assert list(bad.check) == failing and set(bad.family) == {family}
    assert bad.observed.str.startswith("no rows for ").all() and bad.observed.str.endswith(f"in {family}.csv").all()


def test_a_disabled_family_is_reported_as_not_run_never_as_passed():
    spec_ = spec()
    del spec_["dual"], spec_["adapt"]
    result = positive_control({k: v for k, v in tables().items() if k not in ("dual", "adapt")}, spec_)
    skipped = result[result["pass"] == NOT_RUN]
    assert sorted(set(skipped.family)) == ["adapt", "dual"]
    # in the families' registered order (xlt.core.registry), each family's checks in its own order
    assert list(skipped.check) == [
        check for family, names in CHECK_NAMES.items() if family in ("dual", "adapt") for check in names
    ]
    assert set(skipped.observed) == {"dual is disabled in this config", "adapt is disabled in this config"}
    assert set(result[result["pass"] != NOT_RUN]["pass"]) == {PASS}


def test_a_check_the_sweep_cannot_answer_is_not_run_and_the_others_still_run():
    spec_ = spec()
    spec_["freeze_depth"]["not_run"] = {FD[3]: "depth 4 (every layer of m frozen) is not in freeze_depth.depths"}
    spec_["adapt"]["not_run"] = {name: "why" for name in CHECK_NAMES["adapt"]}
    spec_["monox"]["modes"] = ["finetune", "self_train", "kd"]  # the sweep trains no pl student
    # a failing row under a skipped check does not count: the check did not run
    result = positive_control({**tables(), "freeze_depth": freeze_depth_table({(4, "qaa"): 0.7})}, spec_)
    skipped = result[result["pass"] == NOT_RUN]
    expected = [
        ("freeze_depth", FD[3], "depth 4 (every layer of m frozen) is not in freeze_depth.depths"),
        ("monox", MX[0], "pl is not in monox.modes"),
        ("adapt", AD[0], "why"),
        ("adapt", AD[1], "why"),
    ]
    families = list(CHECK_NAMES)  # the families' registered order (xlt.core.registry)
    assert [(f, c, o) for f, c, o in zip(skipped.family, skipped.check, skipped.observed)] == sorted(
        expected, key=lambda one: families.index(one[0])
    )
    assert set(result[result["pass"] != NOT_RUN]["pass"]) == {PASS}
    assert list(result[result.family == "freeze_depth"].check) == list(FD)  # report order kept
    # the checks that do run still fail on their own rows
    result = positive_control({**tables(), "freeze_depth": freeze_depth_table({(-1, "en"): 0.5})}, spec_)
    assert only_failures(result) == [("freeze_depth", FD[0])]


def test_an_enabled_family_without_its_table_is_an_error():
    with pytest.raises(XltError, match="no monox table given"):
        positive_control({k: v for k, v in tables().items() if k != "monox"}, spec())


def test_a_table_of_another_shape_is_an_error():
    with pytest.raises(XltError, match=r"sbert.csv has no column\(s\) \['similarity'\]"):
        run({"sbert": sbert_table().drop(columns="similarity")})


def test_booleans_read_back_from_csv(tmp_path):
    """headline/trained columns come back from CSV as bools, or as strings beside NaN."""
    path = tmp_path / "monox.csv"
    table = monox_table(shares={("pl", "qac"): 0.71}).astype({"headline": object})
    table.loc[len(table)] = {
        "family": "monox",
        "run_id": "x",
        "mode": "kd",
        "headline": None,
        "split": "test",
        "lang": "en",
        "metric": "accuracy",
        "value": 0.0,
    }
    table.to_csv(path, index=False)
    result = run({"monox": pd.read_csv(path)})
    assert only_failures(result) == [("monox", MX[1])]


def test_overlap_ranking():
    from xlt.report.positive_control import world as checks  # the ranking lives with the world

    assert checks.overlap_ranking(WORLD) == ["qaa", "qab", "qac"]
    assert checks.overlap_ranking({"qab": {"overlap": 0.2}, "qaa": {"overlap": 0.2}, "qac": {"overlap": 0.9}}) == [
        "qac",
        "qaa",
        "qab",
    ]
    with pytest.raises(XltError, match="no languages"):
        checks.overlap_ranking({})


def test_format_checks_gives_two_lines_a_check():
    spec_ = spec()
    del spec_["sbert"]
    result = positive_control({**tables(), "dual": dual_table({(DUAL_RUNS[0], "qaa"): 0.8})}, spec_)
    lines = checks.format_checks(result).splitlines()
    assert len(lines) == 2 * len(result)
    i = lines.index("    YES  freeze_depth: source-language accuracy, nothing frozen [en]")
    assert lines[i + 1] == "         expected >= 0.850; observed 0.900"
    i = lines.index(f"     NO  dual: training lowers the retrieval error [qaa (overlap 0.5), {DUAL_RUNS[0]}]")
    assert (
        lines[i + 1] == "         expected <= untrained 0.900 - 0.2 = 0.700 (mean of both directions); observed 0.800"
    )
    i = lines.index("NOT RUN  sbert: training raises source-language STS")
    assert lines[i + 1] == "         observed sbert is disabled in this config"
