"""A family's tidy table on disk: `<family>.csv` with one row per run x per-language record,
and `<family>_summary.csv` beside it with the records over several languages (xlt aggregate
writes both). Every reader (figures, checks, paired tests) reads them joined, here, and with
the one typing of their columns (COLUMN_TYPES): a CSV column that is empty in every row (an
optional axis a sweep leaves out) or holds strings reads as the same dtype whatever pandas
infers (its pyarrow-backed `str` since pandas 3, `future.infer_string`)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from xlt.core.errors import XltError
from xlt.core.metrics import DIMENSIONS

TEXT, NUMBER, INTEGER, FLAG = "text", "number", "integer", "flag"

# Every column a family's table has: the run's keys, the metric record's dimensions
# (xlt.core.metrics.DIMENSIONS) and the sweep axes the plans and jobs write into meta.axes.
# TEXT: strings (NaN where empty); NUMBER: float64; INTEGER: int64 where every row has one, else
# float64 with NaN (an untrained baseline has no seed); FLAG: bool where every row has one, else
# object True/False/NaN. A column not listed keeps what pandas infers
# (tests/report/test_any_config.py checks that every column the six families write is listed).
COLUMN_TYPES = {
    # a run and its record
    "family": TEXT,
    "run_id": TEXT,
    "model": TEXT,
    "metric": TEXT,
    "value": NUMBER,
    "ci_low": NUMBER,
    "ci_high": NUMBER,
    # record dimensions
    "lang": TEXT,
    "layer": INTEGER,
    "step": INTEGER,
    "direction": TEXT,
    "similarity": TEXT,
    "split": TEXT,
    "model_role": TEXT,
    "level": TEXT,
    "dataset": TEXT,
    "checkpoint": TEXT,
    # sweep axes
    "seed": INTEGER,
    "freeze_depth": INTEGER,
    "batch_size": INTEGER,
    "warmup_ratio": NUMBER,
    "pooling": TEXT,
    "normalize": FLAG,
    "trained": FLAG,
    "objective": TEXT,
    "margin": NUMBER,
    "scale": NUMBER,
    "sentences_seen": NUMBER,
    "start": TEXT,  # dual: the pretrained model or the distillation teacher's checkpoint
    "match": TEXT,
    "pair": TEXT,
    "cache_frozen_prefix": FLAG,
    "prefix_precision": TEXT,
    "scheme": TEXT,
    "role": TEXT,
    "text_unit": TEXT,
    "task": TEXT,
    "mode": TEXT,
    "student": TEXT,
    "teacher": TEXT,
    "size": TEXT,  # a training size or "all"
    "temperature": NUMBER,
    "headline": FLAG,
    "source": TEXT,
    "source_run": TEXT,
}

_READ_AS = {TEXT: str, NUMBER: "float64", INTEGER: "float64", FLAG: str}
_FLAGS = {"True": True, "False": False, "true": True, "false": False}


def summary_path(table_path: str | Path) -> Path:
    """results/tables/dual.csv -> results/tables/dual_summary.csv"""
    path = Path(table_path)
    return path.with_name(f"{path.stem}_summary{path.suffix}")


def typed(table: pd.DataFrame, where: str = "the table") -> pd.DataFrame:
    """The table's listed columns in their COLUMN_TYPES (after a read or a concat); a value that
    is not of its column's type is an XltError naming `where`, the column and the value."""
    out = table.copy()
    for column in out.columns:
        kind = COLUMN_TYPES.get(column)
        if kind == TEXT:
            out[column] = _text(out[column])
        elif kind in (NUMBER, INTEGER):
            numbers = pd.to_numeric(out[column], errors="coerce").astype("float64")
            _refuse(where, column, out[column][numbers.isna() & out[column].notna()], "a number")
            integral = numbers.notna().all() and (numbers % 1 == 0).all()
            out[column] = numbers.astype("int64") if kind == INTEGER and integral else numbers
        elif kind == FLAG:
            flags = out[column].map(lambda v: _FLAGS.get(v, v) if isinstance(v, str) else v)
            _refuse(where, column, flags[flags.notna() & ~flags.isin([True, False])], "True or False")
            out[column] = flags.astype(bool) if flags.notna().all() else flags.astype(object)
    return out


def _refuse(where: str, column: str, bad: pd.Series, wanted: str) -> None:
    if not bad.empty:
        raise XltError(
            f"{where}: column {column} holds {bad.iloc[0]!r} where {wanted} belongs "
            f"(xlt.core.tables.COLUMN_TYPES); rewrite the table with xlt aggregate"
        )


def _text(column: pd.Series) -> pd.Series:
    """Strings and NaN, in the dtype `pd.read_csv(dtype=str)` gives (`str` or object by the
    string mode): after a concat, a column one part lacks is float NaN there."""
    text = pd.Series(dtype=str).dtype
    if column.dtype == text and not pd.api.types.is_object_dtype(text):
        return column
    return column.astype(str).where(column.notna(), np.nan).astype(text)


def read_csv(path: str | Path) -> pd.DataFrame:
    """One table file with its columns typed (COLUMN_TYPES)."""
    header = pd.read_csv(path, nrows=0).columns
    kinds = {c: _READ_AS[COLUMN_TYPES[c]] for c in header if c in COLUMN_TYPES}
    try:
        return typed(pd.read_csv(path, dtype=kinds), str(path))
    except ValueError:
        # a number column holds something else: read it as text, so typed() names the value
        typed(pd.read_csv(path, dtype={c: str for c in kinds}), str(path))
        raise


def read_table(path: str | Path) -> pd.DataFrame:
    """A family's table with its summary rows back in, in the aggregated order: what the
    plots and checks read, so moving averages to the summary changes none of their numbers."""
    table = read_csv(path)
    summary = summary_path(path)
    if not summary.is_file():
        return table
    extra = read_csv(summary)
    if extra.empty:
        return table
    joined = typed(pd.concat([table, extra], ignore_index=True), f"{path} with {summary}")
    dims = [d for d in DIMENSIONS if d in joined.columns]
    return joined.sort_values(["family", "run_id", *dims, "metric"], kind="stable").reset_index(drop=True)
