"""The adapt plan: config errors name the offending key before any job runs, and every job's
complete `xlt` command line comes from the validated settings."""

import copy
import json
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from xlt.core.errors import XltError
from xlt.core.job_spec import JobSpec
from xlt.core.settings import validate
from xlt.families.adapt.plan import PLOT_KINDS, curve_files, eval_sets, jobs, references, runs, targets
from xlt.families.adapt.schemes import parse_scheme, parse_scheme_arg, trainable_layers

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module")
def demo():
    return yaml.safe_load((ROOT / "config.yaml").read_text())


def _with(config, **changes):
    config = copy.deepcopy(config)
    for path, value in changes.items():
        node = config
        keys = path.split("__")
        for key in keys[:-1]:
            node = node[key]
        if value is None:
            del node[keys[-1]]
        else:
            node[keys[-1]] = value
    return config


def test_demo_and_paper_configs_expand(demo):
    validate(demo)
    rows = runs(demo)
    assert [r["scheme"] for r in rows] == ["0-12", "9-12", "gradual-start4-step4-every30steps"]
    assert len({r["run_id"] for r in rows}) == len(rows)
    assert [r["role"] for r in references(demo)] == ["native", "transfer"]
    sets = eval_sets(demo)
    assert sets["multilingual/dev"]["size_of"] == "qab/dev"
    assert set(sets) == {"qab/dev", "qab/test", "multilingual/dev", "qab/compare"}
    paper = yaml.safe_load((ROOT / "config" / "paper.yaml").read_text())
    validate(paper)
    assert len(runs(paper)) == 5 * 3  # the seed's five schemes x three seeds
    assert {r["model"] for r in references(paper)} == {"mbert", "bertje"}


@pytest.mark.parametrize(
    "changes, fragment",
    [
        (
            {"adapt__schemes": ["0-12", "12-6"]},
            r"adapt.schemes\[1\] \(model 'demo-mbert', 12 layers\): layer scheme '12-6'",
        ),
        ({"adapt__schemes": ["0-13"]}, r"adapt.schemes\[0\].*out of range for a model with 12 layers"),
        ({"adapt__schemes": ["last-6"]}, r"adapt.schemes\[0\].*not a range"),
        ({"adapt__schemes": ["9-12", {"gradual": {"step": 4}}]}, r"adapt.schemes\[1\].*exactly one of"),
        (
            {"adapt__schemes": [{"gradual": {"every_steps": 10, "step": 4, "start": 13}}]},
            r"adapt.schemes\[0\].*between 1 and 12",
        ),
        ({"adapt__schemes": ["9-12", " 9 - 12"]}, r"adapt.schemes lists \['9-12'\] more than once"),
        ({"adapt__native": "bertje"}, r"adapt.native: unknown model 'bertje'"),
        ({"adapt__models": ["demo-mbert", "xlmr"]}, r"adapt.models: unknown model 'xlmr'"),
        ({"adapt__target__dataset": "nope"}, r"adapt.target.dataset: unknown dataset 'nope'"),
        (
            {"adapt__target__lang": "qaa"},
            r"adapt.target.train_split: dataset 'demo-corpus' has no train split for \['qaa'\]",
        ),
        ({"adapt__target__test_split": "dev"}, r"adapt.target: eval_split and test_split are both 'dev'"),
        (
            {"adapt__multilingual__langs": ["en", "de"]},
            r"adapt.multilingual: dataset 'demo-corpus' has no dev split for \['de'\]",
        ),
        ({"adapt__training__eval_every": 0}, r"adapt.training.eval_every \(K"),
        # the MLM loss is a mean over masked tokens, which micro-batches split unevenly
        ({"adapt__training__grad_accum": 2}, r"training.grad_accum \(adapt's training\) 2: adapt's MLM loss is a mean"),
        ({"adapt__curve": {"training": {"grad_accum": 4}}}, r"adapt.curve.training.grad_accum 4: adapt's MLM loss"),
        ({"adapt__compare": {"layers": [0, 13]}}, r"adapt.compare.layers \[13\] are outside 0..12"),
        ({"adapt__select": "worst"}, r"config error at adapt.select"),
        (
            {"adapt__schemes": [{"gradual": {"every_steps": 10, "step": 4, "speed": 2}}]},
            r"config error at adapt.schemes.0",
        ),
        ({"adapt__target": None}, r"'target' is a required property"),
    ],
)
def test_config_errors_name_the_key(demo, changes, fragment):
    with pytest.raises(XltError, match=fragment):
        validate(_with(demo, **changes))


def test_disabled_family_has_no_jobs(demo):
    config = _with(demo, adapt__enabled=False, adapt__native="undeclared")
    validate(config)  # a disabled family is not checked
    assert runs(config) == [] and references(config) == [] and eval_sets(config) == {}


def test_switched_off_with_enabled_false_alone(demo):
    config = validate(_with(demo, adapt={"enabled": False}))
    assert runs(config) == [] and jobs(config) == {
        "adapt_eval_set": {},
        "adapt_mlm": {},
        "adapt_reference_perplexity": {},
    }
    assert targets(config) == []
    without = _with(demo)
    del without["adapt"]
    validate(without)
    assert runs(without) == [] and references(without) == [] and eval_sets(without) == {}


def test_defaults_come_from_the_schema(demo):
    config = _with(demo, adapt__eval_sentences=None, adapt__compare=None, adapt__seeds=None)
    family = validate(config)["adapt"]
    assert family["eval_sentences"] == 10000 and family["compare"] == {
        "sentences": 256,
        "layers": "all",
        "levels": ["sentence", "word"],
    }
    assert family["seeds"] == [1] and family["select"] == "best" and family["sample_seed"] == 1
    assert family["mask_seed"] == 1234 and family["mlm_probability"] == 0.15 and family["eval_batch_size"] == 16
    assert family["target"] == {
        "dataset": "demo-corpus",
        "lang": "qab",
        "train_split": "train",
        "eval_split": "dev",
        "test_split": "test",
    }
    assert family["multilingual"]["fields"] == ["text"]
    sets = eval_sets(config)
    assert (
        sets["qab/dev"]["max_size"] == sets["qab/test"]["max_size"] == 10000 and sets["qab/compare"]["max_size"] == 256
    )


def _argv(job):
    return shlex.split(job.cli)


TRAINING = [
    "--epochs",
    "1.0",
    "--max-steps",
    "100",
    "--batch-size",
    "16",
    "--lr",
    "0.001",
    "--weight-decay",
    "0.01",
    "--warmup-ratio",
    "0.1",
    "--max-grad-norm",
    "1.0",
    "--grad-accum",
    "1",
    "--eval-every",
    "25",
    "--max-length",
    "48",
    "--precision",
    "auto",
    "--device",
    "auto",
    "--log-every",
    "20",
    "--checkpoint-every",
    "0",
    "--length-bucketing",
    "False",
    "--compile",
    "False",
    "--schedule",
    "linear",
]
EVAL = "results/runs/adapt/eval"


def test_jobs_give_the_complete_command_line_of_every_rule(demo):
    plan = jobs(validate(copy.deepcopy(demo)))
    assert {rule: list(by_id) for rule, by_id in plan.items()} == {
        "adapt_eval_set": ["qab/dev", "qab/test", "multilingual/dev", "qab/compare"],
        "adapt_mlm": [
            "demo-mbert-layers0-12-seed1",
            "demo-mbert-layers9-12-seed1",
            "demo-mbert-gradual-start4-step4-every30steps-seed1",
        ],
        "adapt_reference_perplexity": ["reference-demo-native-qab", "reference-demo-mbert"],
    }
    multi = plan["adapt_eval_set"]["multilingual/dev"]
    assert _argv(multi) == [
        "--data",
        "results/data/demo-corpus/en/dev.jsonl",
        "results/data/demo-corpus/qaa/dev.jsonl",
        "results/data/demo-corpus/qac/dev.jsonl",
        "--fields",
        "text",
        "--size-of",
        f"{EVAL}/qab/dev.jsonl",
        "--seed",
        "1",
        "--out",
        f"{EVAL}/multilingual/dev.jsonl",
    ]
    assert multi.inputs == {"data": ["results/data/demo-corpus/info.json"], "size_of": [f"{EVAL}/qab/dev.jsonl"]}
    assert _argv(plan["adapt_eval_set"]["qab/compare"]) == [
        "--data",
        "results/data/demo-corpus/qab/dev.jsonl",
        "--fields",
        "text",
        "--max-size",
        "48",
        "--seed",
        "1",
        "--out",
        f"{EVAL}/qab/compare.jsonl",
    ]
    assert plan["adapt_eval_set"]["qab/compare"].inputs["size_of"] == []

    gradual = plan["adapt_mlm"]["demo-mbert-gradual-start4-step4-every30steps-seed1"]
    assert _argv(gradual) == [
        "--model",
        "results/models/demo-mbert",
        "--train",
        "results/data/demo-corpus/qab/train.jsonl",
        "--target",
        f"{EVAL}/qab/dev.jsonl",
        "--eval",
        f"{EVAL}/multilingual/dev.jsonl",
        "--test",
        f"{EVAL}/qab/test.jsonl",
        "--native",
        "results/models/demo-native-qab",
        "--compare",
        f"{EVAL}/qab/compare.jsonl",
        "--compare-levels",
        "sentence",
        "word",
        "--scheme",
        '{"gradual": {"every_steps": 30, "step": 4, "start": 4}}',
        "--select",
        "best",
        "--mask-seed",
        "1234",
        "--mlm-probability",
        "0.15",
        "--pll-sentences",
        "200",
        "--pll-words",
        "40",
        "--max-unk-share",
        "0.01",
        "--eval-batch-size",
        "16",
        "--bootstrap-resamples",
        "1000",
        "--bootstrap-seed",
        "0",
        "--bootstrap-confidence",
        "0.95",
        "--seed",
        "1",
        *TRAINING,
        "--tensorboard",  # the demo config's monitor.tensorboard
        "true",
        "--run-id",
        "demo-mbert-gradual-start4-step4-every30steps-seed1",
        "--axes",
        json.dumps(
            {
                "model": "demo-mbert",
                "scheme": "gradual-start4-step4-every30steps",
                "seed": 1,
                "role": "adapted",
                "text_unit": "document",
            }
        ),
        "--out",
        "results/runs/adapt/demo-mbert-gradual-start4-step4-every30steps-seed1/metrics.json",
    ]
    assert gradual.inputs == {
        "model": ["results/models/demo-mbert"],
        "native": ["results/models/demo-native-qab"],
        "data": "results/data/demo-corpus/info.json",
        "sets": [
            f"{EVAL}/qab/dev.jsonl",
            f"{EVAL}/multilingual/dev.jsonl",
            f"{EVAL}/qab/test.jsonl",
            f"{EVAL}/qab/compare.jsonl",
        ],
    }
    assert _argv(plan["adapt_mlm"]["demo-mbert-layers9-12-seed1"])[_argv(gradual).index("--scheme") + 1] == "9-12"

    native = plan["adapt_reference_perplexity"]["reference-demo-native-qab"]
    assert _argv(native) == [
        "--model",
        "results/models/demo-native-qab",
        "--data",
        f"{EVAL}/qab/dev.jsonl",
        "--data",
        f"{EVAL}/multilingual/dev.jsonl",
        "--data",
        f"{EVAL}/qab/test.jsonl",
        "--mask-seed",
        "1234",
        "--mlm-probability",
        "0.15",
        "--pll-sentences",
        "200",
        "--pll-words",
        "40",
        "--max-unk-share",
        "0.01",
        "--batch-size",
        "16",
        "--max-length",
        "48",
        "--family",
        "adapt",
        "--run-id",
        "reference-demo-native-qab",
        "--axes",
        json.dumps({"model": "demo-native-qab", "scheme": "pre-trained", "role": "native", "text_unit": "document"}),
        "--out",
        "results/runs/adapt/reference-demo-native-qab/perplexity.json",
    ]
    assert native.inputs == {
        "model": ["results/models/demo-native-qab"],
        "sets": [f"{EVAL}/qab/dev.jsonl", f"{EVAL}/multilingual/dev.jsonl", f"{EVAL}/qab/test.jsonl"],
    }


def test_jobs_follow_the_settings(demo):
    config = validate(
        _with(
            demo,
            adapt__compare={"layers": [0, 12], "levels": ["word"]},
            adapt__select="last",
            adapt__mask_seed=7,
            adapt__sample_seed=3,
            adapt__multilingual__fields=["text", "text_pair"],
            adapt__target__eval_split="test",
            adapt__target__test_split="dev",
        )
    )
    plan = jobs(config)
    run = _argv(plan["adapt_mlm"]["demo-mbert-layers0-12-seed1"])
    i = run.index("--compare-layers")
    assert run[i : i + 5] == ["--compare-layers", "0", "12", "--compare-levels", "word"]
    assert run[run.index("--select") + 1] == "last" and run[run.index("--mask-seed") + 1] == "7"
    assert (
        run[run.index("--target") + 1] == f"{EVAL}/qab/test.jsonl"
        and run[run.index("--test") + 1] == f"{EVAL}/qab/dev.jsonl"
    )
    multi = _argv(plan["adapt_eval_set"]["multilingual/dev"])
    assert multi[multi.index("--fields") : multi.index("--size-of") + 2] == [
        "--fields",
        "text",
        "text_pair",
        "--size-of",
        f"{EVAL}/qab/test.jsonl",
    ]
    assert multi[multi.index("--seed") + 1] == "3"
    # the family's training override wins over the shared training section
    overridden = jobs(validate(_with(demo, adapt__training={"max_length": 64, "eval_every": 5})))
    ref = _argv(overridden["adapt_reference_perplexity"]["reference-demo-mbert"])
    assert ref[ref.index("--max-length") + 1] == "64"
    run = _argv(overridden["adapt_mlm"]["demo-mbert-layers0-12-seed1"])
    assert run[run.index("--eval-every") + 1] == "5" and run[run.index("--max-length") + 1] == "64"
    assert run[run.index("--lr") + 1] == "0.0005"  # the shared value: the override no longer sets lr
    # the checkpoints' intervals are drawn as `xlt aggregate` draws the final ones (config statistics:)
    run = _argv(
        jobs(validate(_with(demo, statistics={"resamples": 200, "seed": 5, "confidence": 0.9})))["adapt_mlm"][
            "demo-mbert-layers0-12-seed1"
        ]
    )
    i = run.index("--bootstrap-resamples")
    assert run[i : i + 6] == ["--bootstrap-resamples", "200", "--bootstrap-seed", "5", "--bootstrap-confidence", "0.9"]
    # the word-level NLL subset is the same for the runs and the untouched models
    plan = jobs(validate(_with(demo, adapt__word_nll={"sentences": 30, "words": 12})))
    for argv in (
        _argv(plan["adapt_mlm"]["demo-mbert-layers0-12-seed1"]),
        _argv(plan["adapt_reference_perplexity"]["reference-demo-native-qab"]),
    ):
        i = argv.index("--pll-sentences")
        assert argv[i : i + 4] == ["--pll-sentences", "30", "--pll-words", "12"]


def test_targets_end_with_the_training_curves_of_every_mlm_run(demo):
    config = validate(demo)
    assert targets(config) == [
        "results/tables/adapt.csv",
        "results/tables/adapt_summary.csv",
        "results/tables/adapt_final.csv",
        "results/tables/adapt_word_nll.csv",
        *(f"results/plots/adapt/{kind}.png" for kind in PLOT_KINDS),
        "results/plots/adapt/training-curves.png",
    ]
    assert "results/plots/adapt/word-nll.png" in targets(config)
    # no word-level scoring, no figure of it (its table is written header-only)
    assert "results/plots/adapt/word-nll.png" not in targets(validate(_with(demo, adapt__word_nll={"sentences": 0})))
    run_ids = list(jobs(config)["adapt_mlm"])
    assert run_ids and curve_files(config) == [f"results/runs/adapt/{run_id}/metrics.curve.csv" for run_id in run_ids]


def test_plan_and_config_check_do_not_import_torch():
    code = "import sys, xlt.families.adapt.plan; assert 'torch' not in sys.modules, 'torch imported'"
    subprocess.run([sys.executable, "-c", code], check=True)


def _evaluations(job) -> dict:
    """--eval-every and the evaluation files after --target / --eval / --test of an adapt_mlm job."""
    argv = _argv(job)
    return {
        "every": argv[argv.index("--eval-every") + 1],
        **{flag: [argv[i + 1] for i, a in enumerate(argv) if a == flag] for flag in ("--target", "--eval", "--test")},
    }


def test_paper_curve_runs_score_both_sets_every_50_steps_and_scheme_runs_the_dutch_dev_set_every_100():
    """Seed 003: the curves (A.2) measure "at every 50 steps ... the Dutch validation set and ... the
    XNLI validation set" with all layers trained; the layer schemes (A.3) early-stop "at every 100 steps"."""
    paper = validate(yaml.safe_load((ROOT / "config" / "paper.yaml").read_text()))
    runs_ = jobs(paper)["adapt_mlm"]
    multi, dev, test = f"{EVAL}/multilingual/dev.jsonl", f"{EVAL}/nl/dev.jsonl", f"{EVAL}/nl/test.jsonl"
    curve = {run_id: _evaluations(job) for run_id, job in runs_.items() if job.axes["scheme"] == "0-12"}
    others = {run_id: _evaluations(job) for run_id, job in runs_.items() if job.axes["scheme"] != "0-12"}
    assert len(curve) == 3 and len(others) == 12
    assert all(e == {"every": "50", "--target": [dev], "--eval": [multi], "--test": [test]} for e in curve.values())
    # the multilingual set once, on the selected model (a final number per scheme), never per checkpoint
    assert all(e == {"every": "100", "--target": [dev], "--eval": [], "--test": [test, multi]} for e in others.values())


def test_published_table1_steps_are_checkpoints_of_the_paper_curve_runs():
    """Every published perplexity-at-step row (Table 1, steps #1, #501, #1501: our 0, 500, 1500) is a
    checkpoint of the curve runs of its scheme, on the Dutch and the multilingual set."""
    import pandas as pd

    paper = validate(yaml.safe_load((ROOT / "config" / "paper.yaml").read_text()))
    published = pd.read_csv(ROOT / "src" / "xlt" / "families" / "adapt" / "paper_results.csv")
    settings_ = [dict(kv.split("=") for kv in s.split(";")) for s in published.setting if "step=" in s]
    assert len(settings_) == 6
    for setting in settings_:
        for job in (j for j in jobs(paper)["adapt_mlm"].values() if j.axes["scheme"] == setting["scheme"]):
            evaluations = _evaluations(job)
            assert (int(setting["step"]) - 1) % int(evaluations["every"]) == 0
            assert evaluations["--eval"] == [f"{EVAL}/multilingual/dev.jsonl"]


def test_default_adapt_evaluations_are_every_run_a_curve_run(demo):
    """Without curve / scheme_eval every run scores the target and multilingual sets every
    training.eval_every steps (config.yaml and config/tiny.yaml plan what they planned before)."""
    for config in (demo, yaml.safe_load((ROOT / "config" / "tiny.yaml").read_text())):
        validated = validate(copy.deepcopy(config))
        assert validated["adapt"]["curve"] == {"schemes": "all", "training": {}}
        assert validated["adapt"]["scheme_eval"] == {"eval_every": None, "multilingual": "checkpoints"}
        every = str(validated["adapt"]["training"].get("eval_every", validated["training"]["eval_every"]))
        multi = f"{EVAL}/multilingual/dev.jsonl"
        for job in jobs(validated)["adapt_mlm"].values():
            evaluations = _evaluations(job)
            assert (
                evaluations["every"] == every and evaluations["--eval"] == [multi] and len(evaluations["--test"]) == 1
            )
            assert multi in job.inputs["sets"]


@pytest.mark.parametrize(
    "multilingual, eval_args, test_args",
    [("checkpoints", ["multilingual"], ["qab"]), ("final", [], ["qab", "multilingual"]), ("none", [], ["qab"])],
)
def test_scheme_eval_decides_the_other_schemes_evaluations(demo, multilingual, eval_args, test_args):
    config = validate(
        _with(
            demo,
            adapt__curve={"schemes": ["0-12", "gradual-start4-step4-every30steps"]},
            adapt__scheme_eval={"eval_every": 50, "multilingual": multilingual},
        )
    )
    plan = jobs(config)["adapt_mlm"]
    assert _argv(plan["demo-mbert-layers0-12-seed1"]) == _argv(
        jobs(validate(copy.deepcopy(demo)))["adapt_mlm"]["demo-mbert-layers0-12-seed1"]
    )  # a curve run is planned as before
    assert _evaluations(plan["demo-mbert-gradual-start4-step4-every30steps-seed1"])["every"] == "25"
    scheme = plan["demo-mbert-layers9-12-seed1"]
    evaluations = _evaluations(scheme)
    assert evaluations["every"] == "50" and evaluations["--target"] == [f"{EVAL}/qab/dev.jsonl"]
    assert [Path(p).parent.name for p in evaluations["--eval"]] == eval_args
    assert [Path(p).parent.name for p in evaluations["--test"]] == test_args
    assert (f"{EVAL}/multilingual/dev.jsonl" in scheme.inputs["sets"]) == (multilingual != "none")
    # eval_every null: the family's training.eval_every
    unset = validate(_with(demo, adapt__curve={"schemes": ["0-12"]}, adapt__scheme_eval={"multilingual": multilingual}))
    assert _evaluations(jobs(unset)["adapt_mlm"]["demo-mbert-layers9-12-seed1"])["every"] == "25"


def test_curve_training_overrides_the_training_of_the_curve_runs_only(demo):
    """adapt.curve.training (e.g. a curve that runs longer and checkpoints more often than the layer
    schemes' runs) reaches the curve runs' flags, on top of the family's training; every other run
    is planned exactly as without it."""
    curve = {"schemes": ["0-12"]}
    longer = validate(_with(demo, adapt__curve={**curve, "training": {"max_steps": 300, "eval_every": 10}}))
    plain = jobs(validate(_with(demo, adapt__curve=curve)))["adapt_mlm"]
    plan = jobs(longer)["adapt_mlm"]
    assert set(plan) == set(plain)
    argv = _argv(plan["demo-mbert-layers0-12-seed1"])
    assert (
        argv[argv.index("--max-steps") + 1] == "300"
        and _evaluations(plan["demo-mbert-layers0-12-seed1"])["every"] == "10"
    )
    before = _argv(plain["demo-mbert-layers0-12-seed1"])
    assert [a for a in argv if a not in ("300", "10")] == [a for a in before if a not in ("100", "25")]
    assert argv[argv.index("--lr") + 1] == "0.001"  # the family's override still applies beneath
    for run_id in ("demo-mbert-layers9-12-seed1", "demo-mbert-gradual-start4-step4-every30steps-seed1"):
        assert _argv(plan[run_id]) == _argv(plain[run_id])
        assert _argv(plan[run_id])[_argv(plan[run_id]).index("--max-steps") + 1] == "100"
    # curve.schemes all: every run is a curve run and gets it
    every = jobs(validate(_with(demo, adapt__curve={"training": {"max_steps": 300}})))["adapt_mlm"]
    assert all(_argv(job)[_argv(job).index("--max-steps") + 1] == "300" for job in every.values())


@pytest.mark.parametrize(
    "changes, fragment",
    [
        (
            {"adapt__curve": {"training": {"eval_every": 0}}},
            r"adapt.curve.training.eval_every \(steps between the "
            r"curve runs' checkpoints\) must be at least 1, got 0",
        ),
        ({"adapt__curve": {"training": {"steps": 10}}}, r"config error at adapt.curve.training"),
        (
            {"adapt__curve": {"schemes": ["0-12", "6-12"]}},
            r"adapt.curve.schemes names \['6-12'\], not schemes of model "
            r"'demo-mbert'; use the runs' scheme names \['0-12', '9-12'",
        ),
        ({"adapt__curve": {"schemes": []}}, r"config error at adapt.curve.schemes"),
        ({"adapt__scheme_eval": {"eval_every": 0}}, r"config error at adapt.scheme_eval.eval_every"),
        ({"adapt__scheme_eval": {"multilingual": "sometimes"}}, r"config error at adapt.scheme_eval.multilingual"),
    ],
)
def test_curve_and_scheme_eval_errors_name_the_key(demo, changes, fragment):
    with pytest.raises(XltError, match=fragment):
        validate(_with(demo, **changes))


def test_the_plan_runs_a_schemes_untrained_bottom_layers_forward_only():
    """xlt.cost.estimate asks the adapt plan how many bottom layers a step runs without a backward
    pass: a range scheme's start, the gradual scheme's mean over its stages; fewer FLOPs and less
    per-step dispatch than training every layer, and never more than training them all."""
    from xlt.core import settings
    from xlt.cost import estimate, profile
    from xlt.families.adapt import plan as adapt_plan

    assert adapt_plan.frozen_layers(JobSpec("adapt-mlm", [("scheme", "6-12")]), 12, 300, 100) == 6
    assert adapt_plan.frozen_layers(JobSpec("adapt-mlm", [("scheme", "0-12")]), 12, 300, 100) == 0
    gradual = json.dumps({"gradual": {"every_epochs": 1, "step": 4, "start": 4}})
    assert adapt_plan.frozen_layers(JobSpec("adapt-mlm", [("scheme", gradual)]), 12, 300, 100) == pytest.approx(
        (8 + 4 + 0) / 3
    )
    assert adapt_plan.frozen_layers(JobSpec("adapt-mlm", [("scheme", gradual)]), 12, 150, 100) == pytest.approx(
        (100 * 8 + 50 * 4) / 150
    )
    assert (
        adapt_plan.frozen_layers(JobSpec("perplexity", [("data", "x")]), 12, 10, 10) == 0
    )  # no scheme: nothing frozen
    # summed stage by stage, exactly the mean of every step's lowest trained layer (less one)
    for scheme, steps, per_epoch in [
        (gradual, 301, 100),
        (json.dumps({"gradual": {"every_steps": 7, "step": 3, "start": 2}}), 50, 9),
        (json.dumps({"gradual": {"every_epochs": 2, "step": 5}}), 95, 10),
        ("3-9", 17, 4),
    ]:
        parsed = parse_scheme(parse_scheme_arg(scheme), 12)
        bottoms = [min(trainable_layers(parsed, s, s // per_epoch, 12)) - 1 for s in range(steps)]
        spec = JobSpec("adapt-mlm", [("scheme", scheme)])
        assert adapt_plan.frozen_layers(spec, 12, steps, per_epoch) == sum(bottoms) / steps, scheme

    config = settings.load("config/paper.yaml")
    h100 = profile.load("h100")
    costs = {
        job.run_id.split("-seed")[0]: estimate.job_cost(config, "adapt", "adapt_mlm", job.run_id, job.spec, h100)
        for job in adapt_plan.jobs(config)["adapt_mlm"].values()
        if job.run_id.endswith("seed1")
    }
    full, six, one = costs["mbert-layers0-12"], costs["mbert-layers6-12"], costs["mbert-layers11-12"]
    assert one.train_seconds < six.train_seconds < full.train_seconds
    assert one.train_flops < six.train_flops < full.train_flops
    assert one.peak_memory_gib == full.peak_memory_gib  # memory is a peak: planned for every layer trained


def test_every_run_records_the_text_unit_it_trains_and_is_scored_on():
    """The published numbers (seed 003) are on sentences; a run says whether it was (xlt.report.paper)."""
    paper = validate(yaml.safe_load((ROOT / "config" / "paper.yaml").read_text()))
    planned = jobs(paper)
    assert {
        job.axes["text_unit"] for rule in ("adapt_mlm", "adapt_reference_perplexity") for job in planned[rule].values()
    } == {"sentence"}
    articles = yaml.safe_load((ROOT / "config" / "paper.yaml").read_text())
    wiki = articles["datasets"]["nl-wiki"]
    del wiki["sentences"]  # the whole articles, as the config read them before
    wiki["split_names"] = {"train": "train[:80000]", "dev": "train[80000:90000]", "test": "train[90000:100000]"}
    planned = jobs(validate(articles))
    assert {job.axes["text_unit"] for job in planned["adapt_mlm"].values()} == {"document"}


def test_the_paper_scores_the_seeds_10000_dutch_and_10000_xnli_validation_sentences():
    """Seed 003 A.1: 10,000 Dutch validation and test sentences each, and 10,000 sentences "randomly
    picked from the original XNLI validation set", size-matched to the Dutch set."""
    from xlt.data.sentences import text_unit

    paper = validate(yaml.safe_load((ROOT / "config" / "paper.yaml").read_text()))
    wiki, sets = paper["datasets"]["nl-wiki"], eval_sets(paper)
    assert text_unit(wiki) == "sentence"
    assert sets["nl/dev"]["max_size"] == wiki["sentences"]["sizes"]["dev"] == 10000  # every drawn sentence
    assert sets["nl/test"]["max_size"] == wiki["sentences"]["sizes"]["test"] == 10000
    multi = sets["multilingual/dev"]
    assert multi["size_of"] == "nl/dev" and multi["fields"] == ["text", "text_pair"]  # premises and hypotheses
    assert {dataset for dataset, _, _ in multi["sources"]} == {"xnli-validation"} and len(multi["sources"]) == 15
    assert paper["datasets"]["xnli-validation"]["split_names"] == {"dev": "validation"}
