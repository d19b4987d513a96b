"""The MonoX sweep (Chi et al.): split, teachers, students, then tables and figures.

The source-language data is split once per (task, seed) (`monox_split`); each teacher is
fine-tuned once per (task, training size, seed) and stores its logits (`train_teacher`); every
kd/pl student at that size reads those logits, finetune/self_train students need no teacher
(`distill`). The sweep's grid and checks: xlt.families.monox.sweep; here, every job's `xlt`
arguments from the validated settings, and the tables and figures.
"""

from __future__ import annotations

import json

from xlt.core import plan as common
from xlt.core import settings
from xlt.core.job_spec import JobSpec
from xlt.core.metrics import curve_path
from xlt.core.plan import Job
from xlt.data.records import NUM_LABELS
from xlt.families.monox import costing
from xlt.families.monox.sweep import FAMILY as FAMILY
from xlt.families.monox.sweep import MODES as MODES
from xlt.families.monox.sweep import TEACHER_MODES as TEACHER_MODES
from xlt.families.monox.sweep import check as check
from xlt.families.monox.sweep import runs as runs
from xlt.families.monox.sweep import task_sizes, tasks

PATHS = common.family_paths(FAMILY)
DIR, TABLE, SUMMARY, PLOT, CURVES = PATHS.runs, PATHS.table, PATHS.summary, PATHS.plot, PATHS.curves
# one split per (task, seed): its job id is "{task}/seed{seed}", the directory below splits/
SPLIT = f"{DIR}/splits/{{run_id}}"
SPLIT_ID = r"[^/]+/seed\d+"
SPLIT_PARTS = ("labelled", "unlabelled", "dev")
TEACHER = f"{DIR}/teachers/{{run_id}}"
STUDENT = f"{DIR}/students/{{run_id}}"
TEACHER_METRICS = f"{TEACHER}/metrics.json"
STUDENT_METRICS = f"{STUDENT}/metrics.json"
# a student's checkpoint choices (monox.checkpoint_selection; xlt.evaluate.checkpoint_choice)
CHECKPOINTS = f"{STUDENT}/checkpoints.json"
CHECKPOINT_TABLE = PATHS.checkpoint_table
# training curves, written beside the metrics by MetricsFile.write
TEACHER_CURVE, STUDENT_CURVE = str(curve_path(TEACHER_METRICS)), str(curve_path(STUDENT_METRICS))
ACCURACY_CSV = f"{PATHS.tables}_accuracy.csv"
ACCURACY_MARKDOWN = f"{PATHS.tables}_accuracy.md"
ACCURACY_HTML = f"{PATHS.plots}/accuracy-table.html"
PLOT_KINDS = ("monox-accuracy-heatmap", "monox-accuracy-vs-size", "monox-accuracy-vs-temperature")
AXES_LEFT_OUT = ("run_id", "role", "teacher_run_id")  # sweep-row bookkeeping, not meta.axes

# what the tables that join families read (xlt.core.family_plan.FamilyPlan)
EVALUATIONS = ("train_teacher", "distill")
LEDGER = {"train_teacher": (("run_id",), TEACHER_METRICS), "distill": (("run_id",), STUDENT_METRICS)}
BASELINE = ("mode", "finetune")  # the student fine-tuned on gold labels only
# seed 002 averages CLS over its three domains; our table has one task per domain
PAPER_DOMAIN_MEANS = {("task", "cls"): ("cls-books", "cls-dvd", "cls-music")}
# the family's cost hooks (xlt.core.family_plan), which `xlt plan` prices its jobs with
output_bytes = costing.output_bytes
trained_models = costing.trained_models
training_data = costing.training_data
training_runs = costing.training_runs


def training(config: dict, task: str, role: str = "student") -> dict:
    """Shared `training` < `monox.training` < the task's `training` < (teacher jobs) the task's
    `teacher_training`."""
    spec = tasks(config[FAMILY])[task]
    return {
        **settings.training(config, FAMILY),
        **spec["training"],
        **(spec["teacher_training"] if role == "teacher" else {}),
    }


def split_id(task: str, seed: int) -> str:
    """The job id of a split, which is also its directory below splits/."""
    return f"{task}/seed{seed}"


def split_files(task: str, seed: int) -> list[str]:
    d = SPLIT.format(run_id=split_id(task, seed))
    return [f"{d}/{part}.jsonl" for part in SPLIT_PARTS] + [f"{d}/split.json"]


def num_labels(config: dict, task: str) -> int:

    return NUM_LABELS[config["datasets"][task]["task"]]


def _split_job(config: dict, task: str, seed: int) -> Job:
    """How the split gets its unlabelled pool and dev set (paper: XNLI vs CLS)."""
    spec, source = tasks(config[FAMILY])[task], config[FAMILY]["source_lang"]
    pool = (
        ("labelled_fraction", spec["labelled_fraction"])
        if "labelled_fraction" in spec
        else ("unlabelled", common.data_file(task, source, spec["unlabelled_split"]))
    )
    dev = (
        ("dev_fraction", spec["dev_fraction"])
        if "dev_fraction" in spec
        else ("dev", common.data_file(task, source, spec["dev_split"]))
    )
    run_id = split_id(task, seed)
    return Job(
        run_id,
        JobSpec(
            "monox-split",
            [
                ("train", common.data_file(task, source, "train")),
                pool,
                dev,
                ("seed", seed),
                ("name", task),
                ("out", SPLIT.format(run_id=run_id)),
            ],
        ),
        inputs={"data": common.data_info(task)},
        axes={"task": task, "seed": seed},
    )


def _axes(row: dict, model: str) -> dict:
    """meta.axes of the run's metrics file: the config name of the model the job trains (the
    table's `model` column), then the sweep row without the bookkeeping keys."""
    return {"model": model} | {k: v for k, v in row.items() if k not in AXES_LEFT_OUT}


def _teacher_job(config: dict, row: dict) -> Job:
    task, source = row["task"], config[FAMILY]["source_lang"]
    split = tasks(config[FAMILY])[task]["eval"]["split"]
    axes = _axes(row, row["teacher"])
    # the monolingual teacher is scored in the source language only (the paper's Table 1)
    spec = JobSpec(
        "train-teacher",
        [
            ("model", common.model_ref(config, row["teacher"])),
            *common.head_settings(config, row["teacher"]),
            ("split", SPLIT.format(run_id=split_id(task, row["seed"]))),
            ("size", row["size"]),
            ("num_labels", num_labels(config, task)),
            ("eval_data", [common.data_file(task, source, split)]),
            ("eval_langs", source),
            ("source_lang", source),
            ("seed", row["seed"]),
            *common.config_settings(training(config, task, "teacher")),
            *common.monitor_settings(config),
            ("axes", json.dumps(axes)),
            ("run_id", row["run_id"]),
            ("out", TEACHER.format(run_id=row["run_id"])),
            *saved_model_settings(config, TEACHER, row["run_id"]),
        ],
    )
    return Job(
        row["run_id"],
        spec,
        axes=axes,
        inputs={
            "split": split_files(task, row["seed"]),
            "model": common.model_input(config, row["teacher"]),
            "data": common.data_info(task),
        },
    )


def saved_model_settings(config: dict, run: str, run_id: str) -> list[tuple[str, str]]:
    """Teachers and students keep predictions, logits and metrics, not weights; with config
    keep_models they also save the trained model to <run>/model (the rules' `model` output)."""
    return [("save_model", f"{run.format(run_id=run_id)}/model")] if config.get("keep_models") else []


def teacher_logits(teacher_run_id: str) -> str:
    return f"{TEACHER.format(run_id=teacher_run_id)}/logits.npz"


def _student_job(config: dict, row: dict) -> Job:
    family, task = config[FAMILY], row["task"]
    evaluation = tasks(family)[task]["eval"]
    mode = []  # the teacher's logits (kd, pl), temperature, threshold, rounds
    if row["teacher_run_id"]:
        mode.append(("teacher_logits", teacher_logits(row["teacher_run_id"])))
    if row["mode"] == "kd":
        mode.append(("temperature", row["temperature"]))
    if row["mode"] in ("pl", "self_train"):
        mode.append(("threshold", family["threshold"]))
    if row["mode"] == "self_train":
        mode.append(("rounds", family["self_train_rounds"]))
    if family["checkpoint_selection"]:
        from xlt.evaluate.checkpoint_choice import tracking_settings  # deferred: imports numpy; plans stay light

        mode += tracking_settings(config, task, evaluation["split"], evaluation["langs"])
    axes = _axes(row, row["student"])
    spec = JobSpec(
        "distill",
        [
            ("mode", row["mode"]),
            ("model", common.model_ref(config, row["student"])),
            *common.head_settings(config, row["student"]),
            ("split", SPLIT.format(run_id=split_id(task, row["seed"]))),
            ("size", row["size"]),
            ("num_labels", num_labels(config, task)),
            ("freeze_depth", family["student_freeze_depth"]),
            *mode,
            ("eval_data", [common.data_file(task, lang, evaluation["split"]) for lang in evaluation["langs"]]),
            ("eval_langs", ",".join(evaluation["langs"])),
            ("source_lang", family["source_lang"]),
            ("seed", row["seed"]),
            *common.config_settings(training(config, task)),
            *common.monitor_settings(config),
            ("axes", json.dumps(axes)),
            ("run_id", row["run_id"]),
            ("out", f"{STUDENT.format(run_id=row['run_id'])}/metrics.json"),
            *saved_model_settings(config, STUDENT, row["run_id"]),
        ],
    )
    inputs = {
        "split": split_files(task, row["seed"]),
        "model": common.model_input(config, row["student"]),
        "teacher": [teacher_logits(row["teacher_run_id"])] if row["teacher_run_id"] else [],
        "data": common.data_info(task),
    }
    return Job(row["run_id"], spec, inputs=inputs, axes=axes)


def jobs(config: dict) -> dict[str, dict[str, Job]]:
    """rule -> job id -> Job, for `monox_split` (id "{task}/seed{seed}"), `train_teacher` and
    `distill` (the run ids of `runs`)."""
    rows = runs(config)
    splits = dict.fromkeys((row["task"], row["seed"]) for row in rows)
    return {
        "monox_split": common.by_run_id([_split_job(config, task, seed) for task, seed in splits]),
        "train_teacher": common.by_run_id([_teacher_job(config, row) for row in rows if row["role"] == "teacher"]),
        "distill": common.by_run_id([_student_job(config, row) for row in rows if row["role"] == "student"]),
    }


def plot_kinds(config: dict) -> list[str]:
    """The heatmap always; the size and temperature curves where the config sweeps them."""
    family = config[FAMILY]
    kinds = ["monox-accuracy-heatmap"]
    if any(len(task_sizes(family, spec)) > 1 for spec in family["tasks"]):
        kinds.append("monox-accuracy-vs-size")
    if "kd" in family["modes"] and any(
        len(set(spec["temperatures"]) | {family["temperature"]}) > 1 for spec in family["tasks"]
    ):
        kinds.append("monox-accuracy-vs-temperature")
    return kinds


def checkpoint_selection(config: dict) -> bool:
    family = settings.family(config, FAMILY)
    return bool(family and family["checkpoint_selection"])


def checkpoint_files(config: dict) -> list[str]:
    """Every student's checkpoint choices (only with monox.checkpoint_selection)."""
    if not checkpoint_selection(config):
        return []
    return common.run_files(CHECKPOINTS, jobs(config)["distill"])


def student_outputs(config: dict) -> dict[str, str]:
    """The distill rule's outputs beyond metrics and curve: checkpoints.json with tracking on."""
    return {"checkpoints": CHECKPOINTS} if checkpoint_selection(config) else {}


def targets(config: dict) -> list[str]:
    if not any(row["role"] == "student" for row in runs(config)):
        return []
    accuracy = [ACCURACY_CSV, ACCURACY_MARKDOWN, ACCURACY_HTML]
    return common.standard_targets(PATHS, plot_kinds(config), curve_files(config), extra=accuracy) + (
        [CHECKPOINT_TABLE] if checkpoint_selection(config) else []
    )


def curve_files(config: dict) -> list[str]:
    """The training curve of every teacher, then of every student."""
    planned = jobs(config)
    teachers, students = planned["train_teacher"], planned["distill"]
    return common.run_files(TEACHER_CURVE, teachers) + common.run_files(STUDENT_CURVE, students)
