"""The rehearsal's config: the paper config with the same sweep, and only what cannot run here
changed (training capped at a few steps and not compiled; hub split slices scaled to the stand-in
data; one CPU a job, no GPU); the models and datasets keep their hub ids, found in the stand-in
cache. A family changes more of its own section through its optional hook `rehearsal.py`:
`derive(section, paper, cap, steps)`, called after its `training` is capped, with the raw paper
config, the function that caps a training section and the capped runs' steps (a family with
per-step published numbers trains some runs longer, one with a large sampled pool shrinks it)."""

from __future__ import annotations

import copy

from xlt.core import registry
from xlt.rehearse.datasets import SLICE

STEPS = 4  # optimiser steps of every training job: seconds each on a CPU
SLICE_SCALE = 250  # a 10,000-row slice becomes 40 rows
REHEARSAL_MEM_MB = 2000
# one seed, two freeze depths, the first value of other axes: the fewest jobs that still run
# every rule (a test compares the rule set with the paper config's)
CUT_AXES = {
    "seeds": 1,
    "depths": 2,
    "freeze_depths": 2,
    "layers": 1,
    "poolings": 1,
    "margins": 1,
    "scales": 1,
    "sizes": 2,
    "temperatures": 2,
    "tasks": 2,
    "langs": 2,
}


def _cap(training: dict) -> None:
    training.update(max_steps=STEPS, eval_every=STEPS // 2, log_every=1)
    # a warm-up counted in steps (the dual distillation's 10,000) would outlast the capped run: its
    # warmup_ratio applies instead
    training.pop("warmup_steps", None)
    if training.get("compile"):  # inductor's C++ build takes minutes a job on a CPU: a few steps run eager
        training["compile"] = False
    if "checkpoint_every" in training:
        training["checkpoint_every"] = STEPS // 2


def _scaled_slice(split: str) -> str:
    match = SLICE.match(split)
    if not match:
        return split
    low, high = (str(int(bound) // SLICE_SCALE) if bound else "" for bound in match.group(2, 3))
    return f"{match.group(1)}[{low}:{high}]"


def _families(config: dict) -> list[tuple[str, dict]]:
    """(name, section) of every registered family the config has a section of."""
    return [(name, config[name]) for name in registry.names() if isinstance(config.get(name), dict)]


def derive(paper: dict, cut_down: bool = False) -> dict:
    """The rehearsal config of `paper` (its raw YAML mapping, not the validated one, so the
    derived file reads like the paper's)."""
    config = copy.deepcopy(paper)
    config.setdefault("report", {})["rehearsal"] = True
    _cap(config.setdefault("training", {}))
    for name, family in _families(config):
        # this machine's resources: jobs of seconds on tiny models, run side by side (Snakemake caps
        # a job's mem_mb at the machine's memory, so 32 GB jobs would run one at a time)
        family.setdefault("resources", {}).update(gpus=0, cpus=1, mem_mb=REHEARSAL_MEM_MB)
        if "training" in family:
            _cap(family["training"])
        own = registry.hook(name, "rehearsal", "derive")
        if own is not None:
            own(family, paper, _cap, STEPS)
    for spec in config.get("datasets", {}).values():
        if "split_names" in spec:
            spec["split_names"] = {split: _scaled_slice(name) for split, name in spec["split_names"].items()}
        if "sentences" in spec:  # fewer articles, and as many fewer sentences drawn from them
            sentences = spec["sentences"]
            sentences["pool"] = _scaled_slice(sentences.get("pool", "train"))
            sentences["sizes"] = {split: max(1, size // SLICE_SCALE) for split, size in sentences["sizes"].items()}
    if cut_down:
        for _, family in _families(config):
            _cut(family)
    return config


def _cut(node) -> None:
    """Shorten every swept axis list in `node` (a family, its tasks) to CUT_AXES's length."""
    if isinstance(node, list):
        for item in node:
            _cut(item)
        return
    if not isinstance(node, dict):
        return
    for key, value in node.items():
        keep = CUT_AXES.get(key)
        if keep and isinstance(value, list) and len(value) > keep:
            node[key] = value[:keep]
            _cut(node[key])
        elif key == "depths" and value == "all":
            node[key] = [-1, 0]
        else:
            _cut(value)
