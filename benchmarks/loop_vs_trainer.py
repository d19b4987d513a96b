"""Benchmark: our training loop vs transformers.Trainer (samples/s, peak memory).

    PYTHONPATH=src python benchmarks/loop_vs_trainer.py [xlt bench options]    (same as: xlt bench --loop ...)
"""
import sys

from xlt.cli import main

if __name__ == "__main__":
    sys.exit(main(["bench", "--loop", *sys.argv[1:]]))
