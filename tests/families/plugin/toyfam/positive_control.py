"""The toy family's positive control: the fair coin (bias 0) calls every label right."""

from __future__ import annotations

from typing import Mapping

from xlt.report.positive_control.rows import missing, need_columns, num, row

CHECK_NAMES = ("the unbiased coin is accurate",)


def spec(config: dict) -> dict:
    from xlt.families.toyfam import plan

    return {"runs": [r["run_id"] for r in plan.runs(config) if r["bias"] == 0.0], "not_run": {}}


def checks(table, spec: dict, world: Mapping, thresholds: dict) -> list[dict]:
    need_columns(table, "toyfam", ["run_id", "metric", "value"])
    accuracy = table[table.metric == "accuracy"].groupby("run_id")["value"].mean()
    expected = f">= {num(thresholds['min_accuracy'])}"
    return [
        missing("toyfam", CHECK_NAMES[0], run, expected, f"{run} (accuracy)")
        if run not in accuracy
        else row(
            "toyfam", CHECK_NAMES[0], run, expected, num(accuracy[run]), accuracy[run] >= thresholds["min_accuracy"]
        )
        for run in spec["runs"]
    ]
