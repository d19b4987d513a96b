"""The toy family's runs and jobs: one `xlt toy-eval` job per bias and seed."""

from __future__ import annotations

import json

from xlt.core.errors import XltError
from xlt.core.plan import RESULTS, Job, by_run_id

FAMILY = "toyfam"
RUN = f"{RESULTS}/runs/{FAMILY}/{{run_id}}"
METRICS = f"{RUN}/metrics.json"
LOG = f"{RESULTS}/logs/{FAMILY}/{{run_id}}.log"
TABLE = f"{RESULTS}/tables/{FAMILY}.csv"
SUMMARY = f"{RESULTS}/tables/{FAMILY}_summary.csv"

EVALUATIONS = ("toy_eval",)
LEDGER = {"toy_eval": (("run_id",), METRICS)}
BASELINE = ("bias", 0.0)  # the fair coin


def check(config: dict) -> None:
    if 0.0 not in config[FAMILY]["biases"]:
        raise XltError(f"{FAMILY}.biases: add 0.0, the baseline every other bias is compared with")


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
    out = []
    for row in runs(config):
        axes = {"bias": row["bias"], "seed": row["seed"]}
        out.append(
            Job(
                row["run_id"],
                [
                    "--run-id",
                    row["run_id"],
                    "--bias",
                    row["bias"],
                    "--seed",
                    row["seed"],
                    "--examples",
                    config[FAMILY]["examples"],
                    "--axes",
                    json.dumps(axes),
                    "--out",
                    METRICS.format(run_id=row["run_id"]),
                ],
                axes=axes,
            )
        )
    return {"toy_eval": by_run_id(out)}


def targets(config: dict) -> list[str]:
    return [TABLE] if runs(config) else []
