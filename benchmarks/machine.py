"""What a benchmark figure was measured on: CPU, memory, library versions and the load average.

The development machine is shared, so every figure is printed next to the load average at the
time it was taken (`load_average()`): a figure measured at load 12 on 2 cores is not comparable
with one measured on an idle machine.
"""

from __future__ import annotations

import os
import platform
from pathlib import Path


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def memory_gib() -> float | None:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return int(line.split()[1]) / 2**20
    except OSError:
        pass
    return None


def load_average() -> str:
    """1/5/15-minute load averages, e.g. '11.1/12.4/12.6'."""
    try:
        return "/".join(f"{x:.1f}" for x in os.getloadavg())
    except OSError:
        return "n/a"


def cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def machine_info() -> dict:
    import torch
    import transformers

    info = {
        "nproc": cpus(),
        "cpu": cpu_model(),
        "memory_gib": round(memory_gib() or 0.0, 1),
        "python": platform.python_version(),
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "gpu": torch.cuda.get_device_name(0) if torch.cuda.is_available() else "none",
        "load_average": load_average(),
    }
    try:
        import accelerate

        info["accelerate"] = accelerate.__version__
    except ImportError:
        info["accelerate"] = "not installed"
    return info


def describe() -> str:
    m = machine_info()
    return (
        f"# machine: nproc={m['nproc']} cpu={m['cpu']!r} memory={m['memory_gib']} GiB gpu={m['gpu']} "
        f"python={m['python']} torch={m['torch']} transformers={m['transformers']} "
        f"accelerate={m['accelerate']} load(1/5/15 min)={m['load_average']}"
    )
