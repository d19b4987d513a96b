"""Compare every results/tables/*.csv of two runs: same columns, same rows (whatever their
order), every number within 1e-6 (timing columns excepted). A refactor must print ALL EQUAL
for the default run before and after it (`python benchmarks/bench.py --demo-keep DIR` keeps a
run's results).

    python benchmarks/compare_tables.py BEFORE/results/tables AFTER/results/tables
"""

import sys
from pathlib import Path

import numpy as np
import pandas as pd

a_dir, b_dir = Path(sys.argv[1]), Path(sys.argv[2])
TIMING = {"wall_s", "train_wall_s", "cache_s", "samples_per_s"}
ok = True
names = sorted({p.name for p in a_dir.glob("*.csv")} | {p.name for p in b_dir.glob("*.csv")})
for name in names:
    pa, pb = a_dir / name, b_dir / name
    if not (pa.exists() and pb.exists()):
        print(f"{name}: only in {'A' if pa.exists() else 'B'}")
        ok = False
        continue
    a, b = pd.read_csv(pa), pd.read_csv(pb)
    if list(a.columns) != list(b.columns):
        print(
            f"{name}: columns differ\n  A-B {sorted(set(a.columns) - set(b.columns))}"
            f"\n  B-A {sorted(set(b.columns) - set(a.columns))}"
            f"\n  order A {list(a.columns)}\n  order B {list(b.columns)}"
        )
        ok = False
        common = [c for c in a.columns if c in b.columns]
        a, b = a[common], b[common]
    if len(a) != len(b):
        print(f"{name}: {len(a)} rows vs {len(b)}")
        ok = False
        continue
    numeric = [c for c in a.columns if pd.api.types.is_float_dtype(a[c]) and c not in TIMING]
    keys = [c for c in a.columns if c not in numeric and c not in TIMING]
    a_s = a.sort_values(keys, kind="stable").reset_index(drop=True)
    b_s = b.sort_values(keys, kind="stable").reset_index(drop=True)
    same_keys = a_s[keys].astype(str).equals(b_s[keys].astype(str))
    worst = {}
    for c in numeric:
        x, y = a_s[c].to_numpy(float), b_s[c].to_numpy(float)
        both_nan = np.isnan(x) & np.isnan(y)
        diff = np.where(both_nan, 0.0, np.abs(x - y))
        worst[c] = float(np.nanmax(diff)) if len(diff) else 0.0
        if np.isnan(diff).any():
            worst[c] = float("inf")
    bad = {c: w for c, w in worst.items() if not w <= 1e-6}
    status = "OK" if same_keys and not bad else "DIFF"
    ok &= status == "OK"
    print(f"{name}: {len(a)} rows, {len(a.columns)} cols, keys equal={same_keys}, max |diff| {worst} -> {status}")
print("ALL EQUAL" if ok else "DIFFERENCES")
sys.exit(0 if ok else 1)
