"""Paired comparisons within a family (`<family>_tests.csv`) and the seed spread (`<family>_seeds.csv`).

A comparison pairs two runs that differ in one sweep axis and agree on every other one, on
an evaluated set both scored (same kind, same dimensions, same gold): neighbouring values of
the axis, and every value against the family's baseline (its plan's `BASELINE`: nothing
frozen, the finetune student, the untrained encoder, adapt's untouched pre-trained model). A baseline run
leaves the axes it does not have empty (an untrained encoder has no margin, a pre-trained
model no seed), and those match anything. Along a family's reference axis (its plan's `REFERENCE_AXIS`: the
dual family's objective) every value is compared with every earlier one, and an axis that either run
lacks matches anything (a distilled student has no margin, the zero-shot teacher no seed), so the
distilled student meets the teacher and each additive-margin run on the same items. A family's budget
axis (its plan's optional `BUDGET_AXIS`: the dual family's sentences_seen) does not keep those
reference pairs apart, so runs of different budgets are paired, but each row says both budgets
(`budget_a`, `budget_b`) and whether they are equal (`equal_budget`; empty where a run has no
training budget, as the teacher and the untrained encoder); nor do its `RECIPE_AXES`, settings each
reference value has its own of (dual's batch size and start). With the runs' training records
(`xlt compare --training`: the train.json of each run, read by run id) a budget row also says what each
run trained: the sentences it saw (`seen_a`, `seen_b`, measured; `budget_a`, `budget_b` are the
planned ones), its optimiser steps, peak learning rate and dev checks, and `equal_budget` compares the
measured budgets where both runs have one, else the planned. Its `NAMED_AXES` (dual's start) are
stated for both runs on every row (`start_a`, `start_b`). Two accuracies on the same examples get McNemar's
exact test; correlations and perplexities a paired bootstrap (perplexities only on the same
sentences with the same masks: a model with another tokenizer masks other tokens and is not
compared). The difference is always `b - a` with its paired-bootstrap interval, and the
p-values are Holm-corrected over every row of the family, so `significant` controls the
family-wise error at `alpha`. Sets marked interval-only (dev splits, the unlabelled pool,
pseudo labels, mining: xlt.core.metrics) are never compared: they are there for intervals.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

import numpy as np
import pandas as pd

from xlt.analysis.bootstrap import paired_bootstrap
from xlt.analysis.defaults import DEFAULT_CONFIDENCE, DEFAULT_RESAMPLES, DEFAULT_SEED
from xlt.analysis.significance import discordant_counts, holm, mcnemar_exact
from xlt.analysis.training_records import TRAINED_COLUMNS, budget_columns
from xlt.analysis.training_records import read_training as read_training
from xlt.core import registry
from xlt.core.errors import XltError
from xlt.core.io import read_json
from xlt.core.metrics import EXAMPLE_LISTS, INTERVAL_ONLY, examples_path, read_examples

TESTS = "results/tables/{family}_tests.csv"
SEEDS = "results/tables/{family}_seeds.csv"
# axes that name a run rather than a setting
NOT_AXES = {"headline"}


def _declared(family: str | None, name: str, default):
    """What a registered family's plan declares for the paired tests (xlt.core.family_plan:
    BASELINE, DERIVED_AXES, ORDERS); `default` for no family or an unregistered one."""
    if family is None or family not in registry.names():
        return default
    value = getattr(registry.plan(family), name)
    return default if value is None else value


def _optional(family: str | None, name: str, default):
    """A registered family's optional plan member (BUDGET_AXIS, RECIPE_AXES), else `default`."""
    if family is None or family not in registry.names():
        return default
    return getattr(registry.plan(family), name, default)


def _budget_axis(family: str | None) -> str | None:
    return _optional(family, "BUDGET_AXIS", None)


BUDGET_COLUMNS = ["budget_a", "budget_b", "equal_budget"]
TEST_COLUMNS = [
    "family",
    "axis",
    "a",
    "b",
    "comparison",
    "kind",
    "metric",
    "set",
    "n",
    "value_a",
    "value_b",
    "diff",
    "diff_ci_low",
    "diff_ci_high",
    "test",
    "p_value",
    "p_holm",
    "significant",
    "run_a",
    "run_b",
]
SEED_COLUMNS_TAIL = ["metric", "n_seeds", "mean", "seed_std", "ci_halfwidth_mean"]


@dataclass
class Run:
    run_id: str
    axes: dict
    sets: dict[tuple, dict]  # (kind, metric, dims...) -> one example set


def _set_key(one: dict) -> tuple:
    dims = tuple(sorted((k, v) for k, v in one.items() if k not in EXAMPLE_LISTS | {"kind"}))
    return (one["kind"], *dims)


def read_runs(metrics_paths: Iterable[str | Path]) -> list[Run]:
    """Every metrics file with its examples file (the evaluation files of one family)."""
    runs = []
    for path in metrics_paths:
        meta = read_json(path)["meta"]
        examples = Path(examples_path(path))
        if not examples.is_file():
            raise XltError(
                f"{examples} not found: run {meta.get('run_id')!r} has no per-example outputs to compare "
                f"(rerun its evaluation job, e.g. delete {path} and run the workflow again)"
            )
        sets = {}
        for one in read_examples(examples):
            if not one.get(INTERVAL_ONLY):
                sets[_set_key(one)] = one
        runs.append(Run(meta.get("run_id"), dict(meta.get("axes", {})), sets))
    return runs


def _not_axes(family: str | None) -> set[str]:
    return NOT_AXES | set(_declared(family, "DERIVED_AXES", frozenset()))


def sweep_axes(runs: list[Run], family: str | None = None) -> list[str]:
    """Axes with more than one value across the runs (the ones a comparison can vary)."""
    names = sorted({k for r in runs for k in r.axes} - _not_axes(family))
    return [k for k in names if len({_hashable(r.axes.get(k)) for r in runs}) > 1]


def _hashable(value):
    return tuple(value) if isinstance(value, list) else value


def _order(value) -> tuple:
    """Sort key for axis values of mixed types (None first, then numbers, then text)."""
    if value is None:
        return (0, 0, "")
    if isinstance(value, bool):
        return (1, int(value), "")
    if isinstance(value, (int, float)):
        return (1, value, "")
    return (2, 0, str(value))


def _axis_order(family: str | None, axis: str):
    """Sort key of `axis`'s values: the family's own (its plan's ORDERS) or `_order`; None sorts first."""
    key = _declared(family, "ORDERS", {}).get(axis)
    if key is None:
        return _order
    return lambda value: (0,) if value is None else (1, key(value))


def _agree(
    a: Run,
    b: Run,
    axis: str,
    wildcard: Run | None = None,
    family: str | None = None,
    either_empty: bool = False,
    ignore: frozenset = frozenset(),
) -> bool:
    """Same value on every axis but `axis` and `ignore`; the wildcard run's empty axes match
    anything (with `either_empty`, either run's)."""
    for key in (set(a.axes) | set(b.axes)) - {axis} - _not_axes(family) - ignore:
        va, vb = a.axes.get(key), b.axes.get(key)
        if wildcard is not None and wildcard.axes.get(key) is None:
            continue
        if either_empty and (va is None or vb is None):
            continue
        if _hashable(va) != _hashable(vb):
            return False
    return True


def pairs(runs: list[Run], family: str) -> list[tuple[str, str, Run, Run]]:
    """(axis, comparison, run a, run b): neighbours along every swept axis, then each value
    against the family's baseline value (b is the non-baseline run)."""
    out = []
    seen = set()
    baseline_axis, baseline_value = _declared(family, "BASELINE", (None, None))
    for axis in sweep_axes(runs, family):
        order = _axis_order(family, axis)
        for a in runs:
            others = [
                b
                for b in runs
                if b is not a
                and _agree(a, b, axis, family=family)
                and order(b.axes.get(axis)) > order(a.axes.get(axis))
            ]
            if not others:
                continue
            nearest = min(order(b.axes.get(axis)) for b in others)
            for b in others:
                if order(b.axes.get(axis)) == nearest and (a.run_id, b.run_id) not in seen:
                    seen.add((a.run_id, b.run_id))
                    out.append((axis, "neighbours", a, b))
        if axis != baseline_axis:
            continue
        for base in (r for r in runs if r.axes.get(axis) == baseline_value):
            for b in runs:
                if (
                    b is base
                    or b.axes.get(axis) == baseline_value
                    or not _agree(base, b, axis, wildcard=base, family=family)
                ):
                    continue
                if (base.run_id, b.run_id) not in seen:
                    seen.add((base.run_id, b.run_id))
                    out.append((axis, "vs_baseline", base, b))
    return out + _reference_pairs(runs, family, seen)


def _reference_pairs(runs: list[Run], family: str, seen: set) -> list[tuple[str, str, Run, Run]]:
    """Along the family's reference axis: each run against every run of an earlier value that
    agrees where both have the axis ("vs_reference"; b the later value)."""
    reference = _declared(family, "REFERENCE_AXIS", None)
    if reference is None:
        return []
    axis, values = reference
    # the budget, and the axes that are part of each reference value's own recipe (the dual family's
    # batch size: 256 pairs of the margin, 64 sentences of the distillation), do not keep pairs apart
    ignore = frozenset({_budget_axis(family)} - {None}) | frozenset(_optional(family, "RECIPE_AXES", ()))
    out = []
    for a in runs:
        for b in runs:
            va, vb = a.axes.get(axis), b.axes.get(axis)
            if va not in values or vb not in values or values.index(va) >= values.index(vb):
                continue
            if (a.run_id, b.run_id) not in seen and _agree(a, b, axis, family=family, either_empty=True, ignore=ignore):
                seen.add((a.run_id, b.run_id))
                out.append((axis, "vs_reference", a, b))
    return out


def _describe(key: tuple) -> str:
    return ",".join(f"{k}={v}" for k, v in key[1:] if k != "metric")


def compare_sets(x: dict, y: dict, resamples: int, seed: int, confidence: float) -> dict | None:
    """One row's numbers for example sets x (run a) and y (run b), or None when they were not
    scored on the same examples."""
    kind = x["kind"]
    if kind == "perplexity":
        return _compare_perplexity(x, y, resamples, seed, confidence)
    if list(x["gold"]) != list(y["gold"]):
        return None
    if kind in ("classification", "retrieval"):
        if kind == "classification":
            correct_x = np.asarray(x["prediction"]) == np.asarray(x["gold"])
            correct_y = np.asarray(y["prediction"]) == np.asarray(y["gold"])
        else:
            correct_x, correct_y = np.asarray(x["correct"], bool), np.asarray(y["correct"], bool)
        ones = np.ones(len(correct_x), dtype=np.int64)
        paired = paired_bootstrap(
            "accuracy", correct_y.astype(np.int64), ones, correct_x.astype(np.int64), ones, resamples, seed, confidence
        )
        p = mcnemar_exact(*discordant_counts(correct_x, correct_y))
        return {
            "metric": "accuracy",
            "n": len(ones),
            "value_a": float(correct_x.mean()),
            "value_b": float(correct_y.mean()),
            "diff": paired.difference,
            "diff_ci_low": paired.low,
            "diff_ci_high": paired.high,
            "test": "mcnemar",
            "p_value": float(p),
        }
    paired = paired_bootstrap(
        "spearman", y["predicted"], y["gold"], x["predicted"], x["gold"], resamples, seed, confidence
    )
    from scipy.stats import spearmanr  # deferred: scipy: slow to import

    return {
        "metric": "spearman",
        "n": len(x["gold"]),
        "value_a": float(spearmanr(x["predicted"], x["gold"])[0]),
        "value_b": float(spearmanr(y["predicted"], y["gold"])[0]),
        "diff": paired.difference,
        "diff_ci_low": paired.low,
        "diff_ci_high": paired.high,
        "test": "paired_bootstrap",
        "p_value": paired.p_value,
    }


def _compare_perplexity(x: dict, y: dict, resamples: int, seed: int, confidence: float) -> dict | None:
    """Two models' masked-LM perplexities on the same sentences with the same masks (equal
    per-sentence mask hashes), else None; paired bootstrap over sentences."""
    if list(x["masks"]) != list(y["masks"]) or list(x["tokens"]) != list(y["tokens"]):
        return None
    loss_x, loss_y, tokens = (np.asarray(v, dtype=float) for v in (x["loss"], y["loss"], x["tokens"]))
    paired = paired_bootstrap("perplexity", loss_y, tokens, loss_x, tokens, resamples, seed, confidence)
    with np.errstate(over="ignore"):
        value_x, value_y = (float(np.exp(loss.sum() / tokens.sum())) for loss in (loss_x, loss_y))
    return {
        "metric": "perplexity",
        "n": len(tokens),
        "value_a": value_x,
        "value_b": value_y,
        "diff": paired.difference,
        "diff_ci_low": paired.low,
        "diff_ci_high": paired.high,
        "test": "paired_bootstrap",
        "p_value": paired.p_value,
    }


def paired_tests(
    runs: list[Run],
    family: str,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    confidence: float = DEFAULT_CONFIDENCE,
    alpha: float = 0.05,
    training: dict[str, dict] | None = None,
) -> pd.DataFrame:
    """Every pair's rows (`training`: read_training's records, for the budget rows' columns)."""
    rows = []
    budget = _budget_axis(family)
    named = list(_optional(family, "NAMED_AXES", ()))
    for axis, comparison, a, b in pairs(runs, family):
        budgets = (
            budget_columns(a.run_id, b.run_id, a.axes.get(budget), b.axes.get(budget), training or {}) if budget else {}
        )
        budgets |= {f"{name}_{side}": run.axes.get(name) for name in named for side, run in (("a", a), ("b", b))}
        for key in sorted(set(a.sets) & set(b.sets), key=str):
            numbers = compare_sets(a.sets[key], b.sets[key], resamples, seed, confidence)
            if numbers is None:
                continue
            rows.append(
                {
                    "family": family,
                    "axis": axis,
                    "a": a.axes.get(axis),
                    "b": b.axes.get(axis),
                    "comparison": comparison,
                    "kind": key[0],
                    "set": _describe(key),
                    **numbers,
                    "run_a": a.run_id,
                    "run_b": b.run_id,
                    **budgets,
                }
            )
    named_columns = [f"{name}_{side}" for name in named for side in "ab"]
    columns = TEST_COLUMNS + (BUDGET_COLUMNS + TRAINED_COLUMNS if budget else []) + named_columns
    table = pd.DataFrame(rows, columns=[c for c in columns if c not in ("p_holm", "significant")])
    table["p_holm"] = holm(table["p_value"].to_numpy(dtype=float)) if len(table) else []
    table["significant"] = table["p_holm"] < alpha
    return table[columns]


def seeds_table(table: pd.DataFrame) -> pd.DataFrame:
    """Per setting (every axis but seed, every dimension, metric): the mean over seeds, the
    between-seed standard deviation and the mean half-width of the runs' bootstrap intervals,
    so the two sources of uncertainty stand side by side. Empty when there is one seed."""
    if "seed" not in table.columns or table["seed"].nunique() < 2:
        return pd.DataFrame(columns=SEED_COLUMNS_TAIL)
    keys = [c for c in table.columns if c not in {"run_id", "seed", "value", "ci_low", "ci_high", "metric"}]
    keys = [c for c in keys if table[c].notna().any()]
    half = (table["ci_high"] - table["ci_low"]) / 2 if {"ci_low", "ci_high"} <= set(table.columns) else np.nan
    work = table.assign(_half=half)
    grouped = work.groupby(keys + ["metric"], dropna=False, sort=True)
    out = grouped.agg(
        n_seeds=("seed", "nunique"),
        mean=("value", "mean"),
        seed_std=("value", "std"),
        ci_halfwidth_mean=("_half", "mean"),
    ).reset_index()
    return out[out["n_seeds"] > 1].reset_index(drop=True)
