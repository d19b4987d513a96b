"""The monox sweep: config checks and one row per job."""
from __future__ import annotations

import math
from pathlib import Path

from xlt.core import settings
from xlt.core.errors import XltError
from xlt.core.settings import dataset_languages, depth_label, model_layers
from xlt.core.settings import number_label as _number
from xlt.core.settings import require as _require
from xlt.core.settings import require_split as _require_split


def training_settings(config: dict, family: str) -> dict:
    return settings.training(config, family)

# ---------------------------------------------------------------- MonoX teacher -> student

MONOX_MODES = ("finetune", "self_train", "kd", "pl")
MONOX_TEACHER_MODES = ("kd", "pl")  # modes that read the teacher's logits
MONOX_DEFAULTS = {"modes": list(MONOX_MODES), "source_lang": "en", "seeds": [1], "size": "all",
                  "temperature": 0.1, "threshold": 0.0, "self_train_rounds": 1}


def monox_settings(config: dict) -> dict | None:
    """The `monox` section with its defaults filled in, or None when absent or disabled."""
    family = config.get("monox")
    if not family or not family.get("enabled", True):
        return None
    return {**MONOX_DEFAULTS, **family}


def monox_tasks(family: dict) -> dict[str, dict]:
    """dataset name -> its entry of `monox.tasks` (a list in the config)."""
    return {spec["dataset"]: spec for spec in family["tasks"]}


def monox_training(config: dict, task: str, role: str = "student") -> dict:
    """Shared `training` < `monox.training` < the task's `training` < (teacher jobs) the task's
    `teacher_training`."""
    spec = monox_tasks(config["monox"])[task]
    return {**training_settings(config, "monox"), **spec.get("training", {}),
            **(spec.get("teacher_training", {}) if role == "teacher" else {})}


def check_monox(config: dict) -> None:
    family = monox_settings(config)
    if family is None:
        return
    from xlt.data.records import NUM_LABELS

    for key in ("students", "tasks"):
        if not family.get(key):
            raise XltError(f"monox.{key} is required when the family is enabled (or set monox.enabled: false)")
    needs_teacher = [m for m in family["modes"] if m in MONOX_TEACHER_MODES]
    if needs_teacher and not family.get("teachers"):
        raise XltError(f"monox.modes has {needs_teacher}, which distil from a teacher, but monox.teachers is "
                       f"not set; declare a teacher model or drop those modes")
    for role in ("teachers", "students"):
        for model in family.get(role, []):
            _require(config, "models", model, f"monox.{role}")
    source = family["source_lang"]
    names = [spec["dataset"] for spec in family["tasks"]]
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise XltError(f"monox.tasks: dataset(s) {repeated} listed more than once; list each dataset once")
    for i, spec in enumerate(family["tasks"]):
        task = spec["dataset"]
        where = f"monox.tasks[{i}] ({task})"
        _require(config, "datasets", task, f"monox.tasks[{i}].dataset")
        kind = config["datasets"][task]["task"]
        if kind not in NUM_LABELS:
            raise XltError(f"{where}: dataset {task!r} is a {kind} dataset; MonoX needs a classification "
                           f"dataset (task {' or '.join(NUM_LABELS)})")
        if ("labelled_fraction" in spec) == ("unlabelled_split" in spec):
            raise XltError(f"{where}: set exactly one of labelled_fraction (split the train set into labelled "
                           f"and unlabelled, as for XNLI) or unlabelled_split (a separate unlabelled split, as for CLS)")
        if ("dev_split" in spec) == ("dev_fraction" in spec):
            raise XltError(f"{where}: set exactly one of dev_split (a dataset split, e.g. dev) or dev_fraction "
                           f"(hold out part of the labelled data, as for CLS)")
        _require_split(config, task, "train", [source], f"{where} (monox.source_lang)")
        for key in ("unlabelled_split", "dev_split"):
            if key in spec:
                _require_split(config, task, spec[key], [source], f"{where}.{key}")
        _require_split(config, task, spec["eval"].get("split", "test"), spec["eval"]["langs"], f"{where}.eval")
        _check_monox_sizes(config, family, task, spec)


def _check_monox_sizes(config: dict, family: dict, task: str, spec: dict) -> None:
    """Training sizes against the labelled split, where its size is known before any job runs
    (demo datasets declare their sizes); other datasets fail in the job with the same message."""
    dataset = config["datasets"][task]
    n_train = dataset.get("sizes", {}).get("train") if dataset["source"] == "demo" else None
    if n_train is None:
        return
    labelled = n_train
    if "labelled_fraction" in spec:
        labelled = math.floor(spec["labelled_fraction"] * n_train + 0.5)
    if "dev_fraction" in spec:
        labelled -= math.floor(spec["dev_fraction"] * labelled + 0.5)
    for size in monox_task_sizes(family, spec):
        if size != "all" and size > labelled:
            raise XltError(f"monox.tasks ({task}).sizes: training size {size} is larger than the {labelled} labelled "
                           f"examples of dataset {task!r} ({n_train} train examples after the configured "
                           f"split); use a size <= {labelled} or 'all'")


def monox_task_sizes(family: dict, spec: dict) -> list:
    """The headline size followed by the task's size sweep, without repeats."""
    return list(dict.fromkeys([family["size"], *spec.get("sizes", [])]))


def size_label(size: int | str) -> str:
    return f"n{size}"


def temperature_label(temperature: float) -> str:
    return f"T{temperature:g}"


def monox_runs(config: dict) -> list[dict]:
    """One row per training job: the teachers first (role teacher: one per teacher x task x
    training size x seed, and only where a kd/pl student needs it), then the students.

    Student jobs are the headline grid (every mode at the headline size, kd at the headline
    temperature), the size sweep (every mode at each of the task's `sizes`) and the temperature
    sweep (kd at each of the task's `temperatures`), without repeats. `headline` marks the rows
    of the headline grid (the per-language table); `teacher_run_id` names the teacher job whose
    logits a kd/pl student reads."""
    family = monox_settings(config)
    if family is None:
        return []
    teachers, students = {}, []
    for task, spec in monox_tasks(family).items():
        grid = {}  # (mode, size, temperature) -> headline?
        for size in monox_task_sizes(family, spec):
            for mode in family["modes"]:
                temperature = family["temperature"] if mode == "kd" else None
                headline = size == family["size"]
                grid[(mode, size, temperature)] = grid.get((mode, size, temperature), False) or headline
        if "kd" in family["modes"]:
            for temperature in spec.get("temperatures", []):
                grid.setdefault(("kd", family["size"], temperature), temperature == family["temperature"])
        for seed in family["seeds"]:
            for student in family["students"]:
                for (mode, size, temperature), headline in grid.items():
                    uses = family["teachers"] if mode in MONOX_TEACHER_MODES else [None]
                    for teacher in uses:
                        teacher_run = None
                        if teacher is not None:
                            teacher_run = f"{teacher}-{task}-{size_label(size)}-seed{seed}"
                            teachers.setdefault(teacher_run, {
                                "run_id": teacher_run, "role": "teacher", "task": task, "mode": "teacher",
                                "student": None, "teacher": teacher, "size": size, "temperature": None,
                                "seed": seed, "headline": size == family["size"], "teacher_run_id": None,
                            })
                        parts = [student, task, mode] + ([teacher] if teacher else []) + \
                                ([temperature_label(temperature)] if temperature is not None else []) + \
                                [size_label(size), f"seed{seed}"]
                        students.append({
                            "run_id": "-".join(parts), "role": "student", "task": task, "mode": mode,
                            "student": student, "teacher": teacher, "size": size, "temperature": temperature,
                            "seed": seed, "headline": headline, "teacher_run_id": teacher_run,
                        })
    return list(teachers.values()) + students


# family -> function expanding the config into one row per training job


check = check_monox
runs = monox_runs
