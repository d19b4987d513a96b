"""The benchmarks are scripts in <repo>/benchmarks, not part of the `xlt` package: their
modules (loop, mfu, workflow, shapes, bench, ...) import each other as plain modules, so the
tests import them the same way, with that folder on sys.path."""
import sys
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"

if str(BENCHMARKS) not in sys.path:
    sys.path.insert(0, str(BENCHMARKS))
