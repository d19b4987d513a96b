"""A family's tidy table on disk: `<family>.csv` with one row per run x per-language record,
and `<family>_summary.csv` beside it with the records over several languages (xlt aggregate
writes both). Every reader (figures, checks, paired tests) reads them joined, here."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from xlt.core.metrics import DIMENSIONS


def summary_path(table_path: str | Path) -> Path:
    """results/tables/dual.csv -> results/tables/dual_summary.csv"""
    path = Path(table_path)
    return path.with_name(f"{path.stem}_summary{path.suffix}")


def read_table(path: str | Path) -> pd.DataFrame:
    """A family's table with its summary rows back in, in the aggregated order: what the
    plots and checks read, so moving averages to the summary changes none of their numbers."""
    table = pd.read_csv(path)
    summary = summary_path(path)
    if not summary.is_file():
        return table
    extra = pd.read_csv(summary)
    if extra.empty:
        return table
    joined = pd.concat([table, extra], ignore_index=True)
    dims = [d for d in DIMENSIONS if d in joined.columns]
    return joined.sort_values(["family", "run_id", *dims, "metric"], kind="stable").reset_index(drop=True)
