"""Benchmark: our training loop vs transformers.Trainer (samples/s, peak memory).

python benchmarks/loop_vs_trainer.py [benchmarks/bench.py options]    (same as: benchmarks/bench.py --loop ...)
"""

import sys

from bench import main

if __name__ == "__main__":
    sys.exit(main(["--loop", *sys.argv[1:]]))
