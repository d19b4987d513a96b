"""The freeze-depth sweep (seed 001): model x freeze depth x seed.

Each run fine-tunes on the source language with the embeddings and the first N layers
frozen (`finetune`), then scores zero-shot accuracy on every evaluation language
(`evaluate`). Everything a job needs comes from the validated settings here.
"""

from __future__ import annotations

import json

from xlt.core import plan as common
from xlt.core import settings
from xlt.core.errors import XltError
from xlt.core.job_spec import ON, JobSpec
from xlt.core.metrics import curve_path
from xlt.core.plan import Job
from xlt.data.records import NUM_LABELS
from xlt.frozen_prefix.store_plan import check_prefix_states, shared_prefix, store_settings, stored_depths

FAMILY = "freeze_depth"
PATHS = common.family_paths(FAMILY)
RUN, TABLE, SUMMARY, PLOT, CURVES = PATHS.run, PATHS.table, PATHS.summary, PATHS.plot, PATHS.curves
PLOT_KINDS = ("accuracy-vs-depth", "accuracy-heatmap")
TRAIN_METRICS = f"{RUN}/train.json"
CHECKPOINTS = f"{RUN}/checkpoints.json"  # the checkpoint choices of a run (xlt.evaluate.checkpoint_choice)
CHECKPOINT_TABLE = PATHS.checkpoint_table
TRAIN_CURVE = str(curve_path(TRAIN_METRICS))  # written beside the metrics by MetricsFile.write
CLASSIFICATION_TASKS = ("nli", "sentiment")
# one store of frozen-prefix states per model (the family's training data and max_length are the
# sweep's): every depth's finetune job reads its boundary from it (prefix_states.shared)
PREFIX_STATES = f"{common.RESULTS}/prefix_states/{FAMILY}/{{model}}"

# what the tables that join families read (xlt.core.family_plan.FamilyPlan)
EVALUATIONS = ("evaluate_xnli",)
LEDGER = {
    "prefix_states": (("model",), None),
    "finetune": (("run_id",), TRAIN_METRICS),
    "evaluate_xnli": (("run_id",), f"{RUN}/eval.json"),
}
KEEPS_MODEL = ("finetune",)
BASELINE = ("freeze_depth", -1)  # nothing frozen
# whether a run's frozen prefix was cached follows from its freeze depth (-1 has none)
DERIVED_AXES = frozenset({"cache_frozen_prefix"})


def prefix_store(rule: str) -> bool:
    """For the plan (xlt.cost): prefix_states writes the sweep's frozen-prefix store."""
    return rule == "prefix_states"


def check(config: dict) -> None:
    family = config[FAMILY]
    for model in family["models"]:
        settings.require(config, "models", model, f"{FAMILY}.models")
        model_depths(config, model)
    unswept = sorted(set(family["model_depths"]) - set(family["models"]))
    if unswept:
        raise XltError(
            f"{FAMILY}.model_depths: {', '.join(unswept)} not in {FAMILY}.models "
            f"({', '.join(family['models'])}); a model's depths need the model in the sweep"
        )
    train, evaluation = family["train"], family["eval"]
    for role in ("train", "eval"):
        settings.require_task(config, family[role]["dataset"], CLASSIFICATION_TASKS, f"{FAMILY}.{role}.dataset")
    if config["datasets"][train["dataset"]]["task"] != config["datasets"][evaluation["dataset"]]["task"]:
        raise XltError(
            f"{FAMILY}: train dataset {train['dataset']!r} and eval dataset {evaluation['dataset']!r} "
            "are different tasks; a classifier is scored on the task it was trained for"
        )
    for split in ("train", "dev"):
        settings.require_split(config, train["dataset"], split, [train["lang"]], f"{FAMILY}.train")
    settings.require_split(config, evaluation["dataset"], evaluation["split"], evaluation["langs"], f"{FAMILY}.eval")
    depths = [d for model in family["models"] for d in model_depths(config, model)]
    check_prefix_states(config, FAMILY, depths, f"{FAMILY}.depths")


def model_depths(config: dict, model: str) -> list[int]:
    """The depths `model` is swept at: its `model_depths` entry where it has one, else `depths`."""
    family = config[FAMILY]
    if model in family["model_depths"]:
        return settings.freeze_depths(config, family["model_depths"][model], model, f"{FAMILY}.model_depths.{model}")
    return settings.freeze_depths(config, family["depths"], model, f"{FAMILY}.depths")


def runs(config: dict) -> list[dict]:
    """One row per fine-tuning run: model x freeze depth x seed (x warm-up ratio, when swept)."""
    family = settings.family(config, FAMILY)
    if family is None:
        return []
    rows = []
    for model in family["models"]:
        for depth in model_depths(config, model):
            for seed in family["seeds"]:
                row = {
                    "run_id": f"{model}-depth{settings.depth_label(depth)}-seed{seed}",
                    "model": model,
                    "freeze_depth": depth,
                    "seed": seed,
                }
                rows += [
                    {**row, "run_id": f"{row['run_id']}-warmup{settings.number_label(ratio)}", "warmup_ratio": ratio}
                    for ratio in family["warmup_ratios"]
                ] or [row]
    return rows


def num_labels(config: dict) -> int:

    return NUM_LABELS[config["datasets"][config[FAMILY]["train"]["dataset"]]["task"]]


def _prefix_states_jobs(config: dict, rows: list[dict]) -> list[Job]:
    """One `xlt prefix-states` job per model whose sweep has a depth >= 0, storing all of them."""
    family = config[FAMILY]
    train, store, training = family["train"], family["prefix_states"], settings.training(config, FAMILY)
    return [
        Job(
            model,
            JobSpec(
                "prefix-states",
                [
                    ("model", common.model_ref(config, model)),
                    *common.head_settings(config, model),
                    ("num_labels", num_labels(config)),
                    ("train", common.data_file(train["dataset"], train["lang"], "train")),
                    *store_settings(depths, training, training["batch_size"], store, PREFIX_STATES.format(model=model)),
                ],
            ),
            axes={"model": model},
            inputs={"model": common.model_input(config, model), "data": common.data_info(train["dataset"])},
        )
        for model, depths in stored_depths(rows, family["models"])
    ]


def jobs(config: dict) -> dict[str, dict[str, Job]]:
    """rule -> job id -> Job, for `finetune` and `evaluate_xnli` (by run id) and, with
    prefix_states.shared, `prefix_states` (by model name)."""
    rows = runs(config)
    if not rows:
        return {"finetune": {}, "evaluate_xnli": {}}
    family = config[FAMILY]
    train, evaluation = family["train"], family["eval"]
    training = settings.training(config, FAMILY)
    shared = shared_prefix(config, FAMILY)
    finetune, evaluate = [], []
    for row in rows:
        run_dir = RUN.format(run_id=row["run_id"])
        spec = [
            ("model", common.model_ref(config, row["model"])),
            *common.head_settings(config, row["model"]),
            ("train", common.data_file(train["dataset"], train["lang"], "train")),
            ("dev", common.data_file(train["dataset"], train["lang"], "dev")),
            ("num_labels", num_labels(config)),
            ("freeze_depth", row["freeze_depth"]),
        ]
        inputs = {"model": common.model_input(config, row["model"])}
        if shared and row["freeze_depth"] >= 0:  # depth -1 freezes nothing: it trains uncached
            inputs["prefix_states"] = PREFIX_STATES.format(model=row["model"])
            spec.append(("prefix_states", inputs["prefix_states"]))
        elif family["cache_frozen_prefix"]:
            spec.append(("cache_frozen_prefix", ON))
        spec += _tracking_settings(config) if family["checkpoint_selection"] else []
        spec += [("seed", row["seed"]), *common.config_settings(training), *common.monitor_settings(config)]
        extra_axes = {"model": row["model"]}  # the config's name: the tables' `model` column
        if "warmup_ratio" in row:  # a swept axis: overrides the shared setting, recorded with the run
            spec.append(("warmup_ratio", row["warmup_ratio"]))
            extra_axes["warmup_ratio"] = row["warmup_ratio"]
        spec += [("axes", json.dumps(extra_axes)), ("run_id", row["run_id"]), ("out", run_dir)]
        axes = {k: v for k, v in row.items() if k != "run_id"}
        data = common.data_info(train["dataset"])
        if family["checkpoint_selection"] and evaluation["dataset"] != train["dataset"]:  # it reads the test sets too
            data = [data, common.data_info(evaluation["dataset"])]
        finetune.append(Job(row["run_id"], JobSpec("finetune", spec), axes=axes, inputs={**inputs, "data": data}))
        evaluate.append(
            Job(
                row["run_id"],
                axes=axes,
                inputs={"data": common.data_info(evaluation["dataset"])},
                spec=JobSpec(
                    "evaluate",
                    [
                        ("model", f"{run_dir}/model"),
                        ("train_metrics", f"{run_dir}/train.json"),
                        (
                            "data",
                            [
                                common.data_file(evaluation["dataset"], lang, evaluation["split"])
                                for lang in evaluation["langs"]
                            ],
                        ),
                        ("langs", ",".join(evaluation["langs"])),
                        ("max_length", training["max_length"]),
                        ("out", f"{run_dir}/eval.json"),
                    ],
                ),
            )
        )
    planned = {"finetune": common.by_run_id(finetune), "evaluate_xnli": common.by_run_id(evaluate)}
    return {"prefix_states": common.by_run_id(_prefix_states_jobs(config, rows)), **planned} if shared else planned


def _tracking_settings(config: dict) -> list[tuple[str, str]]:
    """--track-test for every eval language, --track-dev where the eval dataset has a dev split."""
    from xlt.evaluate.checkpoint_choice import tracking_settings  # deferred: imports numpy; plans stay light

    evaluation = config[FAMILY]["eval"]
    return tracking_settings(config, evaluation["dataset"], evaluation["split"], evaluation["langs"])


def checkpoint_files(config: dict) -> list[str]:
    return common.run_files(CHECKPOINTS, jobs(config)["finetune"])


def targets(config: dict) -> list[str]:
    if not runs(config):
        return []
    checkpoints = [CHECKPOINT_TABLE] if config[FAMILY]["checkpoint_selection"] else []
    return common.standard_targets(PATHS, PLOT_KINDS, curve_files(config), extra=checkpoints)


def curve_files(config: dict) -> list[str]:
    """The training curve of every fine-tuning run (the inputs of the training-curves figure)."""
    return common.run_files(TRAIN_CURVE, jobs(config)["finetune"])
