"""The MonoX sweep's grid and its checks: which teachers and students a config trains.

The source-language data is split once per (task, seed); each teacher is fine-tuned once per
(task, training size, seed); every kd/pl student at that size reads its logits, finetune and
self_train students need no teacher. `runs` lists them (xlt.families.monox.plan builds their jobs),
`check` holds a config to what the schema cannot say.
"""

from __future__ import annotations

import math

from xlt.core import settings
from xlt.core.errors import XltError
from xlt.data.records import NUM_LABELS

FAMILY = "monox"
MODES = ("finetune", "self_train", "kd", "pl")
TEACHER_MODES = ("kd", "pl")  # modes that read the teacher's logits


def tasks(family: dict) -> dict[str, dict]:
    """dataset name -> its entry of `monox.tasks` (a list in the config)."""
    return {spec["dataset"]: spec for spec in family["tasks"]}


def task_sizes(family: dict, spec: dict) -> list:
    """The headline size followed by the task's size sweep, without repeats."""
    return list(dict.fromkeys([family["size"], *spec["sizes"]]))


def check(config: dict) -> None:

    family = config[FAMILY]
    needs_teacher = [m for m in family["modes"] if m in TEACHER_MODES]
    if needs_teacher and not family["teachers"]:
        raise XltError(
            f"monox.modes has {needs_teacher}, which distil from a teacher, but monox.teachers is "
            f"not set; declare a teacher model or drop those modes"
        )
    for role in ("teachers", "students"):
        for model in family[role]:
            settings.require(config, "models", model, f"monox.{role}")
    if family["student_freeze_depth"] >= 0:
        for model in family["students"]:
            settings.freeze_depths(config, [family["student_freeze_depth"]], model, "monox.student_freeze_depth")
    source = family["source_lang"]
    names = [spec["dataset"] for spec in family["tasks"]]
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise XltError(f"monox.tasks: dataset(s) {repeated} listed more than once; list each dataset once")
    for i, spec in enumerate(family["tasks"]):
        task = spec["dataset"]
        where = f"monox.tasks[{i}] ({task})"
        settings.require(config, "datasets", task, f"monox.tasks[{i}].dataset")
        kind = config["datasets"][task]["task"]
        if kind not in NUM_LABELS:
            raise XltError(
                f"{where}: dataset {task!r} is a {kind} dataset; MonoX needs a classification "
                f"dataset (task {' or '.join(NUM_LABELS)})"
            )
        if ("labelled_fraction" in spec) == ("unlabelled_split" in spec):
            raise XltError(
                f"{where}: set exactly one of labelled_fraction (split the train set into labelled "
                f"and unlabelled, as for XNLI) or unlabelled_split (a separate unlabelled split, as for CLS)"
            )
        if ("dev_split" in spec) == ("dev_fraction" in spec):
            raise XltError(
                f"{where}: set exactly one of dev_split (a dataset split, e.g. dev) or dev_fraction "
                f"(hold out part of the labelled data, as for CLS)"
            )
        settings.require_split(config, task, "train", [source], f"{where} (monox.source_lang)")
        for key in ("unlabelled_split", "dev_split"):
            if key in spec:
                settings.require_split(config, task, spec[key], [source], f"{where}.{key}")
        settings.require_split(config, task, spec["eval"]["split"], spec["eval"]["langs"], f"{where}.eval")
        _check_sizes(config, family, task, spec)


def _check_sizes(config: dict, family: dict, task: str, spec: dict) -> None:
    """Training sizes against the labelled split, where its size is known before any job runs
    (demo datasets declare their sizes); other datasets fail in the job with the same message."""
    dataset = config["datasets"][task]
    n_train = dataset["sizes"].get("train") if dataset["source"] == "demo" else None
    if n_train is None:
        return
    labelled = n_train
    if "labelled_fraction" in spec:
        labelled = math.floor(spec["labelled_fraction"] * n_train + 0.5)
    if "dev_fraction" in spec:
        labelled -= math.floor(spec["dev_fraction"] * labelled + 0.5)
    for size in task_sizes(family, spec):
        if size != "all" and size > labelled:
            raise XltError(
                f"monox.tasks ({task}).sizes: training size {size} is larger than the {labelled} labelled "
                f"examples of dataset {task!r} ({n_train} train examples after the configured "
                f"split); use a size <= {labelled} or 'all'"
            )


def size_label(size: int | str) -> str:
    return f"n{size}"


def temperature_label(temperature: float) -> str:
    return f"T{temperature:g}"


def runs(config: dict) -> list[dict]:
    """One row per training job: the teachers first (role teacher: one per teacher x task x
    training size x seed, and only where a kd/pl student needs it), then the students.

    Student jobs are the headline grid (every mode at the headline size, kd at the headline
    temperature), the size sweep (every mode at each of the task's `sizes`) and the temperature
    sweep (kd at each of the task's `temperatures`), without repeats. `headline` marks the rows
    of the headline grid (the per-language table); `teacher_run_id` names the teacher job whose
    logits a kd/pl student reads."""
    family = settings.family(config, FAMILY)
    if family is None:
        return []
    teachers, students = {}, []
    for task, spec in tasks(family).items():
        grid = {}  # (mode, size, temperature) -> headline?
        for size in task_sizes(family, spec):
            for mode in family["modes"]:
                temperature = family["temperature"] if mode == "kd" else None
                headline = size == family["size"]
                grid[(mode, size, temperature)] = grid.get((mode, size, temperature), False) or headline
        if "kd" in family["modes"]:
            for temperature in spec["temperatures"]:
                grid.setdefault(("kd", family["size"], temperature), temperature == family["temperature"])
        for seed in family["seeds"]:
            for student in family["students"]:
                for (mode, size, temperature), headline in grid.items():
                    uses = family["teachers"] if mode in TEACHER_MODES else [None]
                    for teacher in uses:
                        teacher_run = None
                        if teacher is not None:
                            teacher_run = f"{teacher}-{task}-{size_label(size)}-seed{seed}"
                            teachers.setdefault(
                                teacher_run,
                                {
                                    "run_id": teacher_run,
                                    "role": "teacher",
                                    "task": task,
                                    "mode": "teacher",
                                    "student": None,
                                    "teacher": teacher,
                                    "size": size,
                                    "temperature": None,
                                    "seed": seed,
                                    "headline": size == family["size"],
                                    "teacher_run_id": None,
                                },
                            )
                        parts = (
                            [student, task, mode]
                            + ([teacher] if teacher else [])
                            + ([temperature_label(temperature)] if temperature is not None else [])
                            + [size_label(size), f"seed{seed}"]
                        )
                        students.append(
                            {
                                "run_id": "-".join(parts),
                                "role": "student",
                                "task": task,
                                "mode": mode,
                                "student": student,
                                "teacher": teacher,
                                "size": size,
                                "temperature": temperature,
                                "seed": seed,
                                "headline": headline,
                                "teacher_run_id": teacher_run,
                            }
                        )
    return list(teachers.values()) + students
