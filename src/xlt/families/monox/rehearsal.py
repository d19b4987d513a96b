"""The MonoX family's part of `xlt rehearse` (a hook, xlt.rehearse): its tasks' training capped,
a small unlabelled pool, and train splits large enough for its largest training size."""

from __future__ import annotations

import math
from typing import Callable

from xlt.core import settings

FAMILY = "monox"
# the unlabelled pool: the paper's is 80% of XNLI's train set, which with a training size of
# 10,000 labelled examples would be 40,000 sentences for every teacher (24 layers) to label
POOL_ROWS = 200


def derive(section: dict, paper: dict, cap: Callable[[dict], None], steps: int) -> None:
    """Cap each task's own training settings (the rehearsal caps `training` itself), and set each
    task's `labelled_fraction` such that its largest training size leaves POOL_ROWS unlabelled
    examples (the stand-in train split is sized to fit, required_rows): the sizes, and with them
    the job graph, stay the paper's."""
    for task in section.get("tasks", []):
        for key in ("training", "teacher_training"):
            if key in task:
                cap(task[key])
        sizes = [size for size in (section.get("size"), *task.get("sizes", [])) if isinstance(size, int)]
        if "labelled_fraction" in task and sizes:
            task["labelled_fraction"] = round(max(sizes) / (max(sizes) + POOL_ROWS), 4)


def required_rows(config: dict) -> dict[tuple[str, str], int]:
    """(dataset, split) -> rows the stand-in needs: the largest numeric training size must fit in the
    labelled part of its task's train split (labelled_fraction of it, or all but dev_fraction), as
    it does at paper scale; a smaller stand-in fails that job."""
    section = settings.family(config, FAMILY)
    need: dict[tuple[str, str], int] = {}
    for spec in (section or {}).get("tasks", []):
        sizes = [size for size in (section["size"], *spec.get("sizes", [])) if isinstance(size, int)]
        if not sizes:
            continue
        share = spec.get("labelled_fraction") or 1 - spec.get("dev_fraction", 0)
        key = (spec["dataset"], "train")
        need[key] = max(need.get(key, 0), math.ceil(max(sizes) / share) + 1)
    return need
