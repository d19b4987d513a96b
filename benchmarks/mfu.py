"""Benchmark: tokens/s and MFU of an mBERT-config model (GPU; tiny sizes on CPU).

    PYTHONPATH=src python benchmarks/mfu.py [xlt bench options]    (same as: xlt bench --mfu ...)
"""
import sys

from xlt.cli import main

if __name__ == "__main__":
    sys.exit(main(["bench", "--mfu", *sys.argv[1:]]))
