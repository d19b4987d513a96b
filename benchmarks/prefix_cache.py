"""Frozen-prefix caching benchmark (uncached vs cached steps/s per depth, whole-sweep saving).

    PYTHONPATH=src python benchmarks/prefix_cache.py --help
The code lives in xlt.bench.prefix_cache so that `xlt bench --prefix-cache` runs the same thing.
"""
from xlt.bench.prefix_cache import main

if __name__ == "__main__":
    main()
