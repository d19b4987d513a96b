"""Collect metrics files into one tidy table: one row per run x metric record.

Columns: family, run_id, model, every sweep axis of `meta["axes"]`, the record's
dimensions (lang, layer, step, ...), metric, value. Nothing is parsed out of file names.
"""
from __future__ import annotations

from pathlib import Path
from typing import Iterable

import pandas as pd

from xlt.core.errors import XltError
from xlt.core.io import read_json
from xlt.core.metrics import DIMENSIONS


def tidy_rows(metrics_file: dict) -> list[dict]:
    meta = metrics_file["meta"]
    base = {"family": meta.get("family"), "run_id": meta.get("run_id"), "model": meta.get("model")}
    base.update(meta.get("axes", {}))
    return [{**base, **rec} for rec in metrics_file["metrics"]]


def aggregate(paths: Iterable[str | Path]) -> pd.DataFrame:
    rows = []
    for path in paths:
        data = read_json(path)
        if "meta" not in data or "metrics" not in data:
            raise XltError(f"{path} is not an xlt metrics file (needs 'meta' and 'metrics')")
        rows.extend(tidy_rows(data))
    if not rows:
        raise XltError("no metric records to aggregate")
    table = pd.DataFrame(rows)
    dims = [d for d in DIMENSIONS if d in table.columns]
    axes = [c for c in table.columns if c not in {"family", "run_id", "model", "metric", "value", *dims}]
    order = ["family", "run_id", "model", *axes, *dims, "metric", "value"]
    return table[order].sort_values(["family", "run_id", *dims, "metric"], kind="stable").reset_index(drop=True)
