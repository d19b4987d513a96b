"""The toy family's runs and jobs: per bias and seed, one `xlt toy-train` job (a few steps of the
demo model on the toy's hub data) and one `xlt toy-eval` job (a biased coin calls its labels)."""

from __future__ import annotations

import json

from xlt.core import settings
from xlt.core.errors import XltError
from xlt.core.job_spec import JobSpec
from xlt.core.metrics import curve_path
from xlt.core.plan import RESULTS, Job, by_run_id, config_settings, model_input, model_ref

FAMILY = "toyfam"
RUN = f"{RESULTS}/runs/{FAMILY}/{{run_id}}"
METRICS = f"{RUN}/metrics.json"
TRAIN_METRICS = f"{RUN}/train.json"
TRAIN_CURVE = str(curve_path(TRAIN_METRICS))
LOG = f"{RESULTS}/logs/{FAMILY}/{{run_id}}.log"
TRAIN_LOG = f"{RESULTS}/logs/{FAMILY}/{{run_id}}.train.log"
TABLE = f"{RESULTS}/tables/{FAMILY}.csv"
SUMMARY = f"{RESULTS}/tables/{FAMILY}_summary.csv"
CURVES = f"{RESULTS}/plots/{FAMILY}/training-curves.png"  # drawn by the workflow's generic rule

EVALUATIONS = ("toy_eval",)
LEDGER = {"toy_train": (("run_id",), TRAIN_METRICS), "toy_eval": (("run_id",), METRICS)}
BASELINE = ("bias", 0.0)  # the fair coin


def check(config: dict) -> None:
    if 0.0 not in config[FAMILY]["biases"]:
        raise XltError(f"{FAMILY}.biases: add 0.0, the baseline every other bias is compared with")
    if config[FAMILY]["model"] not in config["models"]:
        raise XltError(f"{FAMILY}.model: {config[FAMILY]['model']!r} is no model of `models:`; declare it there")


def runs(config: dict) -> list[dict]:
    family = config.get(FAMILY)
    if not family or not family["enabled"]:
        return []
    return [
        {"run_id": f"bias{bias:g}-seed{seed}", "bias": bias, "seed": seed}
        for bias in family["biases"]
        for seed in family["seeds"]
    ]


def jobs(config: dict) -> dict[str, dict[str, Job]]:
    trains, evals = [], []
    for row in runs(config):
        axes = {"bias": row["bias"], "seed": row["seed"]}
        section, run_id = config[FAMILY], row["run_id"]
        training = {**settings.training(config, FAMILY), "seed": row["seed"]}
        trains.append(
            Job(
                run_id,
                JobSpec(
                    "toy-train",
                    [
                        ("model", model_ref(config, section["model"])),
                        ("data", section["data"]),
                        *config_settings(training),
                        ("run_id", run_id),
                        ("axes", json.dumps(axes)),
                        ("out", TRAIN_METRICS.format(run_id=run_id)),
                    ],
                ),
                inputs={"model": model_input(config, section["model"])},
                axes=axes,
            )
        )
        evals.append(
            Job(
                run_id,
                JobSpec(
                    "toy-eval",
                    [
                        ("run_id", run_id),
                        ("bias", row["bias"]),
                        ("seed", row["seed"]),
                        ("examples", section["examples"]),
                        ("axes", json.dumps(axes)),
                        ("out", METRICS.format(run_id=run_id)),
                    ],
                ),
                axes=axes,
            )
        )
    return {"toy_train": by_run_id(trains), "toy_eval": by_run_id(evals)}


def curve_files(config: dict) -> list[str]:
    """The training curve of every run (the generic training-curves rule draws them)."""
    return [TRAIN_CURVE.format(run_id=run_id) for run_id in jobs(config)["toy_train"]]


def targets(config: dict) -> list[str]:
    return [TABLE, CURVES] if runs(config) else []
