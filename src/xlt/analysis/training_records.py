"""What each run of a budget comparison trained, from its training record (train.json): the
sentences it saw, its optimiser steps, peak learning rate and dev checks, beside the planned budget
(xlt.analysis.compare's budget rows)."""

from __future__ import annotations

from pathlib import Path
from typing import Iterable

from xlt.core.io import read_json

TRAINED = ("seen", "steps", "lr", "dev_checks")
TRAINED_COLUMNS = [f"{what}_{side}" for what in TRAINED for side in "ab"]


def read_training(paths: Iterable[str | Path]) -> dict[str, dict]:
    """Run id -> what it trained, from its training record's meta: the sentences it saw, its
    optimiser steps, peak learning rate and dev checks (the evaluations its checkpoint was
    selected among)."""
    records = {}
    for path in paths:
        meta = read_json(path)["meta"]
        records[meta.get("run_id")] = {
            "seen": meta.get("sentences_seen"),
            "steps": meta.get("steps"),
            "lr": meta.get("train", {}).get("lr"),
            "dev_checks": len(meta.get("history", [])),
        }
    return records


def budget_columns(run_a: str, run_b: str, planned_a, planned_b, training: dict[str, dict]) -> dict:
    """Both runs' planned budgets, what each trained (its record's; None without one) and whether
    the budgets are equal: the measured ones where both runs have one, else the planned (None where
    either run has no budget)."""
    trained = {
        f"{what}_{side}": training.get(run, {}).get(what)
        for what in TRAINED
        for side, run in (("a", run_a), ("b", run_b))
    }
    budget_a, budget_b = planned_a, planned_b
    if trained["seen_a"] is not None and trained["seen_b"] is not None:
        budget_a, budget_b = trained["seen_a"], trained["seen_b"]
    equal = None if budget_a is None or budget_b is None else budget_a == budget_b
    return {"budget_a": planned_a, "budget_b": planned_b, "equal_budget": equal, **trained}
