"""How the dual family's figures label their rows: a trained run by the sweep axes that differ
between runs, the untrained baselines apart (shared by plots.py and objective_plot.py)."""

from __future__ import annotations

import pandas as pd

# start: a margin run from the pretrained model or from the distillation teacher's checkpoint
# (xlt.families.dual.comparison); named where it varies, so no line or cell averages the two
DUAL_AXES = ("objective", "margin", "scale", "pooling", "batch_size", "freeze_depth", "sentences_seen", "start")


def run_labels(table: pd.DataFrame, axes=DUAL_AXES, skip=()) -> pd.Series:
    """A short label per row from the axes that differ between runs (e.g. 'margin=0.3 scale=10')."""
    varying = [a for a in axes if a in table.columns and a not in skip and table[a].nunique(dropna=True) > 1]
    if not varying:
        return pd.Series(["all runs"] * len(table), index=table.index)
    # an axis a run does not have (a distilled run's margin) is left out of its label
    return table[varying].apply(lambda r: " ".join(f"{a}={_fmt(v)}" for a, v in zip(varying, r) if pd.notna(v)), axis=1)


def split_baselines(table: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(trained runs, untrained baselines): rows whose `trained` column is false are baselines;
    a table without that column has none."""
    if "trained" not in table.columns:
        return table, table.iloc[0:0]
    untrained = table["trained"].astype(str).str.lower().isin(["false", "0", "0.0"])
    return table[~untrained], table[untrained]


def baseline_labels(baselines: pd.DataFrame) -> pd.Series:
    """ "untrained", with the pooling when the baselines differ in it."""
    if "pooling" in baselines.columns and baselines["pooling"].nunique(dropna=True) > 1:
        return "untrained pooling=" + baselines["pooling"].astype(str)
    return pd.Series(["untrained"] * len(baselines), index=baselines.index)


def _fmt(value) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)
