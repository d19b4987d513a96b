"""What each input of a plan carries (`xlt plan --levers`): the plan again without that input, and
the hours it moves, beside whether the input was measured or assumed.

A plan's total rests on a handful of inputs (its profile's rates and overheads, the compile
figures, the GPU sharing gain). Taken out one at a time (an overhead set to 0, a rate made
infinite, a ratio or a share set to 1, sharing off), the total moves by what that input carries:
positive for a cost it adds, negative for a saving it claims. An assumed input that carries a large
share of the total is where a measurement is worth most (issue 39 asks that none carry over
MAX_ASSUMED_SHARE). Whether an input is measured is read from its source text in
xlt.cost.constants (the h100 and cpu profiles' inputs, and those every profile shares) or the
profile's own source (a100, v100, a calibration): measured when it starts "measured" and says
nothing is assumed.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass

from xlt.cost import sweep
from xlt.cost.constants import TABLE

MAX_ASSUMED_SHARE = 0.2  # no assumed input should carry more than this share of the total
EVAL_DERIVED = (
    "derived, not measured: an evaluation batch is planned as a forward pass, 1/3 of a training step's FLOPs "
    "and per-step overhead (xlt.cost.profile.two_point_fit)"
)
_SOURCES = {c.name: c.source for c in TABLE}
ANY = "*"  # a lever's source for every profile


@dataclass(frozen=True)
class Lever:
    name: str
    without: Callable[[dict, dict], tuple[dict, dict]]  # (config, profile) -> the same without this input
    # profile name (or ANY) -> the constant whose source says how that profile's input was found
    # (None: EVAL_DERIVED); a profile not named says in its own source (a100, v100, a calibration)
    sources: dict[str, str | None]


def _profile_without(**values) -> Callable[[dict, dict], tuple[dict, dict]]:
    return lambda config, profile: (config, {**profile, **values})


def _no_sharing(config: dict, profile: dict) -> tuple[dict, dict]:
    config = copy.copy(config)
    config["gpu_sharing"] = {**(config.get("gpu_sharing") or {}), "slots_per_gpu": 1}
    return config, profile


LEVERS = (
    Lever("job start-up", _profile_without(overhead_s=0.0), {"h100": "gpu_overhead_s", "cpu": "cpu_overhead_s"}),
    Lever(
        "training FLOP rate",
        _profile_without(train_flops=float("inf")),
        {"h100": "h100_tokens_per_s", "cpu": "cpu_flops"},
    ),
    Lever(
        "per-step overhead",
        _profile_without(step_s=0.0, step_layer_s=0.0, step_example_layer_s=0.0),
        {"h100": "h200_eager_step_s", "cpu": "cpu_loop"},
    ),
    Lever(
        "evaluation rate and overhead",
        _profile_without(eval_flops=float("inf"), eval_batch_s=0.0, eval_batch_layer_s=0.0),
        {"h100": None, "cpu": "cpu_loop"},
    ),
    Lever(
        "frozen layer's share of a step", _profile_without(frozen_layer_share=1.0), {ANY: "prefix_cache_steps_per_s"}
    ),
    Lever("torch.compile step ratio", _profile_without(compile_step_ratio=1.0), {ANY: "h200_compiled_step_s"}),
    Lever("torch.compile time", _profile_without(compile_s=0.0), {ANY: "compile_s"}),
    Lever("GPU sharing gain", _no_sharing, {ANY: "sharing_speedups"}),
)


def source(lever: Lever, profile: dict) -> str:
    """How this input of `profile` was found: the constants table's source where the lever names
    one for the profile (or for every profile), else the profile's own source."""
    for name in (profile.get("name"), ANY):
        if name in lever.sources:
            constant = lever.sources[name]
            return _SOURCES[constant] if constant else EVAL_DERIVED
    return profile.get("source", "")


def measured(text: str) -> bool:
    return text.startswith("measured") and "assumed" not in text and "not measured" not in text


def levers(config: dict, profile: dict, planned: dict | None = None) -> list[dict]:
    """Each lever: the hours the plan's total moves by without it (GPU-hours on a GPU profile, the
    jobs' hours otherwise), its share of the total, measured or assumed, and its source."""
    key = "gpu_hours" if profile.get("gpu") else "hours"
    total = (planned or sweep.plan(config, profile))["total"][key]
    rows = []
    for lever in LEVERS:
        without = sweep.plan(*lever.without(config, profile))["total"][key]
        text = source(lever, profile)
        rows.append(
            {
                "lever": lever.name,
                "status": "measured" if measured(text) else "assumed",
                "hours": total - without,
                "share": abs(total - without) / total if total else 0.0,
                "source": text,
            }
        )
    return rows


def format_levers(rows: list[dict], gpu: bool) -> str:
    unit = "GPU-h" if gpu else "CPU-h"
    lines = [
        f"levers: what each input carries (the total {unit} without it, less the plan's), measured or assumed",
        f"{'lever':<34}{'status':<10}{unit:>9}{'share':>8}",
    ]
    lines += [f"{r['lever']:<34}{r['status']:<10}{r['hours']:>+9.2f}{r['share']:>8.0%}" for r in rows]
    heavy = [r for r in rows if r["status"] == "assumed" and r["share"] > MAX_ASSUMED_SHARE]
    lines.append(
        f"assumed inputs carrying over {MAX_ASSUMED_SHARE:.0%} of the total: "
        + (", ".join(f"{r['lever']} ({r['share']:.0%})" for r in heavy) if heavy else "none")
    )
    return "\n".join(lines)
