"""Collect metrics files into one tidy table: one row per run x metric record.

Columns: family, run_id, model, every sweep axis of `meta["axes"]`, the record's
dimensions (lang, layer, step, ...), metric, value, and ci_low / ci_high: the 95 % percentile
bootstrap interval from the metrics file's per-example outputs (empty where it has none).
Nothing is parsed out of file names.
`model` is the config's model name (the sweep axis `model`; the path or hub id the job
loaded is in the run's manifest.json). `lang` holds language codes only: records over
several languages (lang `avg`, adapt's pooled `multilingual` set) go to the family's
summary table, `<table>_summary.csv` beside it; `read_table` joins the two again for the
plots and checks that read both.
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterable

import pandas as pd

from xlt.analysis.intervals import record_interval
from xlt.core.errors import XltError
from xlt.core.io import read_json
from xlt.core.metrics import DIMENSIONS, examples_path, read_examples

# `lang` values that name a set of languages, not one: their rows belong in the summary table
SUMMARY_LANGS = ("avg", "multilingual")


def tidy_rows(metrics_file: dict) -> list[dict]:
    meta = metrics_file["meta"]
    base = {"family": meta.get("family"), "run_id": meta.get("run_id"), "model": meta.get("model")}
    base.update(meta.get("axes", {}))  # the axis `model` (the config's name) wins over the loaded path
    return [{**base, **rec} for rec in metrics_file["metrics"]]


def with_intervals(metrics_file: dict, path: str | Path, **statistics) -> dict:
    """The metrics file with ci_low / ci_high on every record its examples file backs; a record
    that brings its own bounds (adapt's per-step curves, whose job computed them where it had
    the per-sentence losses) keeps them."""
    examples = Path(examples_path(path))
    if not examples.is_file():
        return metrics_file
    sets = read_examples(examples)
    records = []
    for rec in metrics_file["metrics"]:
        interval = None if "ci_low" in rec else record_interval(rec, sets, **statistics)
        records.append(rec if interval is None else {**rec, "ci_low": interval[0], "ci_high": interval[1]})
    return {**metrics_file, "metrics": records}


def aggregate(
    paths: Iterable[str | Path], resamples: int = 1000, seed: int = 0, confidence: float = 0.95
) -> pd.DataFrame:
    """The tidy table; resamples, seed and confidence are the bootstrap's (config statistics:)."""
    rows = []
    for path in paths:
        data = read_json(path)
        if "meta" not in data or "metrics" not in data:
            raise XltError(f"{path} is not an xlt metrics file (needs 'meta' and 'metrics')")
        rows.extend(tidy_rows(with_intervals(data, path, resamples=resamples, seed=seed, confidence=confidence)))
    if not rows:
        raise XltError("no metric records to aggregate")
    table = pd.DataFrame(rows)
    dims = [d for d in DIMENSIONS if d in table.columns]
    intervals = ["ci_low", "ci_high"] if "ci_low" in table.columns else []
    axes = [c for c in table.columns if c not in {"family", "run_id", "model", "metric", "value", *dims, *intervals}]
    order = ["family", "run_id", "model", *axes, *dims, "metric", "value", *intervals]
    return table[order].sort_values(["family", "run_id", *dims, "metric"], kind="stable").reset_index(drop=True)


def is_summary(table: pd.DataFrame) -> pd.Series:
    """Rows whose `lang` names a set of languages (an average, a pooled set)."""
    if "lang" not in table.columns:
        return pd.Series(False, index=table.index)
    return table["lang"].isin(SUMMARY_LANGS)


def split_summary(table: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(per-language rows, summary rows), each in the table's order and columns."""
    summary = is_summary(table)
    return table[~summary].reset_index(drop=True), table[summary].reset_index(drop=True)
