"""The MonoX plan: the exact `xlt` arguments and input files of one job of each rule, the
targets, and a plan that plans without torch."""

import json
import subprocess
import sys

import pytest

from xlt.core.errors import XltError
from xlt.core.settings import validate
from xlt.families.monox.plan import curve_files, jobs, plot_kinds, targets

TRAIN_DEFAULTS = [
    "--epochs",
    "1.0",
    "--max-steps",
    "0",
    "--batch-size",
    "32",
    "--lr",
    "2e-05",
    "--weight-decay",
    "0.01",
    "--warmup-ratio",
    "0.1",
    "--max-grad-norm",
    "1.0",
    "--grad-accum",
    "1",
    "--eval-every",
    "0",
    "--max-length",
    "128",
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


def train_flags(**changes) -> list[str]:
    """TRAIN_DEFAULTS with some values replaced (keys as flag names without dashes)."""
    out = list(TRAIN_DEFAULTS)
    for key, value in changes.items():
        out[out.index("--" + key.replace("_", "-")) + 1] = value
    return out


def small_config():
    return {
        "models": {"mbert": {"source": "demo"}, "mono": {"source": "local", "path": "models/mono"}},
        "datasets": {
            "senti": {
                "source": "demo",
                "task": "sentiment",
                "languages": ["en", "qaa"],
                "splits": {"train": ["en"], "dev": ["en"], "test": "all"},
                "sizes": {"train": 500, "dev": 50, "test": 50},
            }
        },
        "training": {"lr": 1e-4},
        "monox": {
            "teachers": ["mono"],
            "students": ["mbert"],
            "threshold": 0.5,
            "self_train_rounds": 2,
            "tasks": [
                {
                    "dataset": "senti",
                    "labelled_fraction": 0.2,
                    "dev_split": "dev",
                    "eval": {"langs": ["en", "qaa"]},
                    "sizes": [10],
                    "temperatures": [1],
                    "training": {"max_steps": 60},
                    "teacher_training": {"max_steps": 100},
                }
            ],
        },
    }


SPLIT = "results/runs/monox/splits/senti/seed1"
SPLIT_FILES = [f"{SPLIT}/{part}" for part in ("labelled.jsonl", "unlabelled.jsonl", "dev.jsonl", "split.json")]
EVAL = ["results/data/senti/en/test.jsonl", "results/data/senti/qaa/test.jsonl"]


def axes(**row):
    # `model`: the config name of the model the job trains (the teacher's, or the student's)
    return json.dumps({"model": row["student"] or row["teacher"], "task": "senti", **row})


def test_one_job_of_each_rule_has_its_exact_arguments():
    plan = jobs(validate(small_config()))
    assert {rule: len(by_id) for rule, by_id in plan.items()} == {"monox_split": 1, "train_teacher": 2, "distill": 9}

    split = plan["monox_split"]["senti/seed1"]
    assert split.args == [
        "--train",
        "results/data/senti/en/train.jsonl",
        "--labelled-fraction",
        0.2,
        "--dev",
        "results/data/senti/en/dev.jsonl",
        "--seed",
        1,
        "--name",
        "senti",
        "--out",
        SPLIT,
    ]
    assert split.inputs == {"data": "results/data/senti/info.json"}

    teacher = plan["train_teacher"]["mono-senti-n10-seed1"]
    assert teacher.cli.split(" --axes ")[0].split() == [
        "--model",
        "models/mono",
        "--head",
        "auto",
        "--split",
        SPLIT,
        "--size",
        "10",
        "--num-labels",
        "2",
        "--eval-data",
        "results/data/senti/en/test.jsonl",
        "--eval-langs",
        "en",
        "--source-lang",
        "en",
        "--seed",
        "1",
        *train_flags(lr="0.0001", max_steps="100"),
    ]
    assert teacher.args[-6:] == [
        "--axes",
        axes(mode="teacher", student=None, teacher="mono", size=10, temperature=None, seed=1, headline=False),
        "--run-id",
        "mono-senti-n10-seed1",
        "--out",
        "results/runs/monox/teachers/mono-senti-n10-seed1",
    ]
    assert teacher.inputs == {"split": SPLIT_FILES, "model": ["models/mono"], "data": "results/data/senti/info.json"}

    kd = plan["distill"]["mbert-senti-kd-mono-T1-nall-seed1"]
    assert [str(a) for a in kd.args] == [
        "--mode",
        "kd",
        "--model",
        "results/models/mbert",
        "--head",
        "pooler",
        "--split",
        SPLIT,
        "--size",
        "all",
        "--num-labels",
        "2",
        "--freeze-depth",
        "-1",
        "--teacher-logits",
        "results/runs/monox/teachers/mono-senti-nall-seed1/logits.npz",
        "--temperature",
        "1",
        "--eval-data",
        *EVAL,
        "--eval-langs",
        "en,qaa",
        "--source-lang",
        "en",
        "--seed",
        "1",
        *train_flags(lr="0.0001", max_steps="60"),
        "--axes",
        axes(mode="kd", student="mbert", teacher="mono", size="all", temperature=1, seed=1, headline=False),
        "--run-id",
        "mbert-senti-kd-mono-T1-nall-seed1",
        "--out",
        "results/runs/monox/students/mbert-senti-kd-mono-T1-nall-seed1/metrics.json",
    ]
    assert kd.inputs == {
        "split": SPLIT_FILES,
        "model": ["results/models/mbert"],
        "teacher": ["results/runs/monox/teachers/mono-senti-nall-seed1/logits.npz"],
        "data": "results/data/senti/info.json",
    }

    # the mode-specific flags of the other modes; the rest is as for kd
    def mode_args(run_id):
        args = [str(a) for a in plan["distill"][run_id].args]
        return args[args.index("--freeze-depth") + 2 : args.index("--eval-data")]

    assert mode_args("mbert-senti-pl-mono-n10-seed1") == [
        "--teacher-logits",
        "results/runs/monox/teachers/mono-senti-n10-seed1/logits.npz",
        "--threshold",
        "0.5",
    ]
    assert mode_args("mbert-senti-self_train-nall-seed1") == ["--threshold", "0.5", "--rounds", "2"]
    assert mode_args("mbert-senti-finetune-n10-seed1") == []
    assert plan["distill"]["mbert-senti-finetune-n10-seed1"].inputs["teacher"] == []


def test_students_freeze_what_the_config_says_and_the_depth_is_checked():
    config = small_config()
    config["monox"]["student_freeze_depth"] = 0
    plan = jobs(validate(config))
    for job in plan["distill"].values():
        assert job.args[job.args.index("--freeze-depth") + 1] == 0
    assert all("--freeze-depth" not in job.args for job in plan["train_teacher"].values())  # teachers train whole
    config = small_config()
    config["monox"]["student_freeze_depth"] = 40
    with pytest.raises(XltError, match="freeze depth 40 in monox.student_freeze_depth is out of range"):
        validate(config)


def test_cls_style_split_reads_the_unlabelled_split_and_holds_out_dev():
    config = small_config()
    config["datasets"]["cls"] = {
        "source": "local",
        "task": "sentiment",
        "format": "cls",
        "files": "nowhere",
        "domain": "books",
        "languages": ["en", "de"],
        "splits": {"train": ["en"], "unlabeled": ["en"], "test": "all"},
    }
    config["monox"]["tasks"] = [
        {"dataset": "cls", "unlabelled_split": "unlabeled", "dev_fraction": 0.2, "eval": {"langs": ["en", "de"]}}
    ]
    config["monox"]["seeds"] = [3]
    split = jobs(validate(config))["monox_split"]["cls/seed3"]
    assert split.args == [
        "--train",
        "results/data/cls/en/train.jsonl",
        "--unlabelled",
        "results/data/cls/en/unlabeled.jsonl",
        "--dev-fraction",
        0.2,
        "--seed",
        3,
        "--name",
        "cls",
        "--out",
        "results/runs/monox/splits/cls/seed3",
    ]


def test_targets_follow_the_swept_axes():
    config = validate(small_config())
    assert targets(config) == [
        "results/tables/monox.csv",
        "results/tables/monox_summary.csv",
        "results/tables/monox_accuracy.csv",
        "results/tables/monox_accuracy.md",
        "results/plots/monox/accuracy-table.html",
        "results/plots/monox/monox-accuracy-heatmap.png",
        "results/plots/monox/monox-accuracy-vs-size.png",
        "results/plots/monox/monox-accuracy-vs-temperature.png",
        "results/plots/monox/training-curves.png",
    ]
    # teachers' and students' curves, beside their metrics.json
    planned = jobs(config)
    assert curve_files(config) == (
        [f"results/runs/monox/teachers/{run_id}/metrics.curve.csv" for run_id in planned["train_teacher"]]
        + [f"results/runs/monox/students/{run_id}/metrics.curve.csv" for run_id in planned["distill"]]
    )
    assert planned["train_teacher"] and planned["distill"]
    config = small_config()
    config["monox"]["tasks"][0].update(sizes=[], temperatures=[0.1])
    assert plot_kinds(validate(config)) == ["monox-accuracy-heatmap"]
    config = small_config()
    config["monox"]["enabled"] = False
    config = validate(config)
    assert targets(config) == [] and jobs(config) == {"monox_split": {}, "train_teacher": {}, "distill": {}}


def test_plan_imports_no_torch():
    out = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", "import xlt.families.monox.plan"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert "torch" not in out.stderr
