"""Compare the numbers of two runs' family tables when their layout changed but their
numbers must not: every (family, run_id, dimensions, metric) -> value, with each table's
`<family>_summary.csv` joined back in (averages moved there) and the columns a newer layout
adds (ci_low, ci_high, model names) left out. Prints one line per family and ALL EQUAL when
every value of A is in B within 1e-6 and the keys are the same.

    python benchmarks/compare_values.py BEFORE/results/tables AFTER/results/tables
"""

import sys
from pathlib import Path

import numpy as np
import pandas as pd

FAMILIES = ("freeze_depth", "sbert", "adapt", "monox", "dual", "alignment")
DIMENSIONS = (
    "lang",
    "layer",
    "step",
    "direction",
    "similarity",
    "split",
    "model_role",
    "level",
    "dataset",
    "checkpoint",
)
TIMING = {"wall_s", "train_wall_s", "cache_s", "samples_per_s"}


def values(tables: Path, family: str) -> pd.Series:
    frames = [pd.read_csv(p) for p in (tables / f"{family}.csv", tables / f"{family}_summary.csv") if p.is_file()]
    table = pd.concat(frames, ignore_index=True)
    table = table[~table["metric"].isin(TIMING)]
    keys = ["family", "run_id", *[d for d in DIMENSIONS if d in table.columns], "metric"]
    table[keys] = table[keys].astype(str)
    return table.set_index(keys)["value"].sort_index()


def main(a_dir: Path, b_dir: Path) -> int:
    ok = True
    for family in FAMILIES:
        if not (a_dir / f"{family}.csv").is_file():
            continue
        a, b = values(a_dir, family), values(b_dir, family)
        a.index = a.index.droplevel([n for n in a.index.names if n not in b.index.names])
        b.index = b.index.droplevel([n for n in b.index.names if n not in a.index.names])
        missing, extra = a.index.difference(b.index), b.index.difference(a.index)
        common = a.index.intersection(b.index)
        x, y = a.loc[common].to_numpy(float), b.loc[common].to_numpy(float)
        diff = np.where(np.isnan(x) & np.isnan(y), 0.0, np.abs(x - y))
        worst = float(np.nanmax(diff)) if len(diff) else 0.0
        status = "OK" if not len(missing) and not len(extra) and worst <= 1e-6 else "DIFF"
        ok &= status == "OK"
        print(
            f"{family}: {len(common)} values, {len(missing)} only in A, {len(extra)} only in B, "
            f"max |diff| {worst:.3g} -> {status}"
        )
    print("ALL EQUAL" if ok else "DIFFERENCES")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]), Path(sys.argv[2])))
