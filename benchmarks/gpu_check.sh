#!/usr/bin/env bash
# The plan's assumed GPU inputs in one short run (benchmarks/gpu_check.py; BENCHMARKS.md, docs/performance.md):
#   bash benchmarks/gpu_check.sh OUT [--smoke] [--budget-s SECONDS]
set -euo pipefail
out="${1:?usage: bash benchmarks/gpu_check.sh OUT [gpu_check.py options]}"
shift
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
mkdir -p "$out"
PYTHONPATH="$repo/src${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1 \
  "${PYTHON:-python3}" "$repo/benchmarks/gpu_check.py" --out "$out" "$@" 2>&1 | tee "$out/gpu_check.log"
