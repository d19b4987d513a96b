"""The rehearsal's config: the paper config with the same sweep, and only what cannot run here
changed (training capped at a few steps and not compiled, but adapt's curve runs trained to the
last published checkpoint; hub split slices scaled to the stand-in data, MonoX's unlabelled pool
and the t-SNE pictures' sample scaled down, one CPU a job, no GPU); the models and datasets keep
their hub ids, found in the stand-in cache."""

from __future__ import annotations

import copy

from xlt.core.errors import XltError
from xlt.rehearse.datasets import SLICE

STEPS = 4  # optimiser steps of every training job: seconds each on a CPU
SLICE_SCALE = 250  # a 10,000-row slice becomes 40 rows
REHEARSAL_MEM_MB = 2000
# MonoX's unlabelled pool: the paper's is 80% of XNLI's train set, which with a training size of
# 10,000 labelled examples would be 40,000 sentences for every teacher (24 layers) to label
POOL_ROWS = 200
# the alignment family's t-SNE pictures: pairs a language (paper: 200 of Tatoeba's 1,000; the stand-in
# has 60). At 200 every picture is t-SNE on 960 points, 1,000 iterations: 20 CPU-s of each align job
TSNE_SAMPLE = 10
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


def published_steps(family: str) -> list[int]:
    """The checkpoints, in our step numbering (xlt.report.paper_match), of the family's published
    per-step numbers (its paper_results.csv rows with a `step=` setting); [] when it has none."""
    from xlt.report import paper, paper_match

    steps = {
        paper_match.ours(family, "step", setting["step"])[0]
        for setting in map(paper.parse_setting, paper.load(family).setting)
        if "step" in setting
    }
    return sorted(int(step) for step in steps)


def _curve_training(adapt: dict, paper_training: dict) -> None:
    """adapt's curve runs (adapt.curve.schemes) train to the family's last published checkpoint and
    evaluate every eval_every steps of the paper's curve runs (`paper_training`: the paper config's
    shared, adapt and adapt.curve training), so every published step is one of their checkpoints
    and its published row is matched. Set in adapt.curve.training, the setting of the curve runs
    alone: the other adapt runs keep the cap."""
    steps = published_steps("adapt")
    every = paper_training.get("eval_every") or 0
    if not steps or max(steps) < 1 or every < 1:
        return
    off_schedule = [step for step in steps if step % every]
    if off_schedule:
        raise XltError(
            f"adapt's published steps {off_schedule} (ours) are no checkpoints of the paper's "
            f"eval_every {every}: the rehearsal cannot evaluate them as the paper config would"
        )
    curve = adapt.setdefault("curve", {})
    training = curve.setdefault("training", {})
    training.update(max_steps=max(steps), eval_every=every, log_every=every)
    if "checkpoint_every" in paper_training:  # one resumable save half way, as the capped jobs make one
        training["checkpoint_every"] = max(steps) // 2


def _scaled_slice(split: str) -> str:
    match = SLICE.match(split)
    if not match:
        return split
    low, high = (str(int(bound) // SLICE_SCALE) if bound else "" for bound in match.group(2, 3))
    return f"{match.group(1)}[{low}:{high}]"


def _small_pool(monox: dict) -> None:
    """Each MonoX task's `labelled_fraction` such that its largest training size leaves POOL_ROWS
    unlabelled examples (the stand-in train split is sized to fit, xlt.rehearse.datasets): the
    sizes, and with them the job graph, stay the paper's."""
    for task in monox.get("tasks", []):
        sizes = [size for size in (monox.get("size"), *task.get("sizes", [])) if isinstance(size, int)]
        if "labelled_fraction" in task and sizes:
            task["labelled_fraction"] = round(max(sizes) / (max(sizes) + POOL_ROWS), 4)


def _families(config: dict) -> list[dict]:
    from xlt.core.settings import FAMILIES

    return [config[name] for name in FAMILIES if isinstance(config.get(name), dict)]


def derive(paper: dict, cut_down: bool = False) -> dict:
    """The rehearsal config of `paper` (its raw YAML mapping, not the validated one, so the
    derived file reads like the paper's)."""
    config = copy.deepcopy(paper)
    config.setdefault("report", {})["rehearsal"] = True
    _cap(config.setdefault("training", {}))
    for family in _families(config):
        # this machine's resources: jobs of seconds on tiny models, run side by side (Snakemake caps
        # a job's mem_mb at the machine's memory, so 32 GB jobs would run one at a time)
        family.setdefault("resources", {}).update(gpus=0, cpus=1, mem_mb=REHEARSAL_MEM_MB)
        if "training" in family:
            _cap(family["training"])
        if "training" in family.get("distill", {}):  # the dual family's distilled runs override the family's
            _cap(family["distill"]["training"])
        if "training" in family.get("curve", {}):  # adapt's curve runs' own (_curve_training extends them)
            _cap(family["curve"]["training"])
        # adapt's other schemes checkpoint less often than its curve runs (scheme_eval), as in the paper
        if isinstance(family.get("scheme_eval"), dict) and family["scheme_eval"].get("eval_every"):
            family["scheme_eval"]["eval_every"] = STEPS
        for task in family.get("tasks", []):
            for key in ("training", "teacher_training"):
                if key in task:
                    _cap(task[key])
    adapt = paper.get("adapt")
    if isinstance(adapt, dict) and adapt.get("enabled", True):
        _curve_training(
            config["adapt"],
            {**paper.get("training", {}), **adapt.get("training", {}), **adapt.get("curve", {}).get("training", {})},
        )
    if isinstance(config.get("monox"), dict):
        _small_pool(config["monox"])
    if isinstance(config.get("alignment"), dict):
        config["alignment"]["tsne_sample"] = min(config["alignment"].get("tsne_sample", TSNE_SAMPLE), TSNE_SAMPLE)
    for spec in config.get("datasets", {}).values():
        if "split_names" in spec:
            spec["split_names"] = {split: _scaled_slice(name) for split, name in spec["split_names"].items()}
        if "sentences" in spec:  # fewer articles, and as many fewer sentences drawn from them
            sentences = spec["sentences"]
            sentences["pool"] = _scaled_slice(sentences.get("pool", "train"))
            sentences["sizes"] = {split: max(1, size // SLICE_SCALE) for split, size in sentences["sizes"].items()}
    if cut_down:
        for family in _families(config):
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
