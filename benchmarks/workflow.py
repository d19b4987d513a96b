"""Benchmark: workflow wall times (add --demo and --tests for the demo run and the test suite).

    PYTHONPATH=src python benchmarks/workflow.py [xlt bench options]    (same as: xlt bench --dry-run ...)
"""
import sys

from xlt.cli import main

if __name__ == "__main__":
    sys.exit(main(["bench", "--dry-run", *sys.argv[1:]]))
