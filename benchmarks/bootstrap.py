"""Time the percentile bootstrap of one metric (1,000 resamples, one core) on 5,000 examples.
Target: under 2 s per metric (issue 15). Set OMP_NUM_THREADS=1 for the one-core figure.

    OMP_NUM_THREADS=1 python benchmarks/bootstrap.py [--n 5000] [--resamples 1000]
"""

import argparse
import time

import numpy as np

from xlt.analysis.bootstrap import bootstrap_interval, paired_bootstrap

parser = argparse.ArgumentParser()
parser.add_argument("--n", type=int, default=5000)
parser.add_argument("--resamples", type=int, default=1000)
args = parser.parse_args()
rng = np.random.default_rng(0)
gold = rng.integers(0, 3, args.n)
pred = np.where(rng.random(args.n) < 0.7, gold, (gold + 1) % 3)
x = rng.normal(size=args.n)
y = x + rng.normal(size=args.n)
print(f"n={args.n} resamples={args.resamples}")
for metric, a, b in [("accuracy", pred, gold), ("error_rate", pred, gold), ("pearson", x, y), ("spearman", x, y)]:
    start = time.perf_counter()
    interval = bootstrap_interval(metric, a, b, resamples=args.resamples)
    print(
        f"{metric:10s} {time.perf_counter() - start:6.3f} s  "
        f"[{interval.low:.4f}, {interval.high:.4f}] around {interval.estimate:.4f}"
    )
start = time.perf_counter()
paired_bootstrap("accuracy", pred, gold, gold, gold, resamples=args.resamples)
print(f"paired accuracy {time.perf_counter() - start:6.3f} s")
