"""Cluster resources of a job, from the config to the names Snakemake's SLURM executor reads.

A family's `resources:` block in the config ({gpus, runtime_min, mem_mb, cpus}) says what one
of its training jobs needs at that config's scale (the paper sweep needs a GPU for hours,
the tiny test sweep a few minutes). The rules pass it on as Snakemake resources; the SLURM
executor turns `gpu` into `--gpus`, `runtime` into `-t`, `mem_mb` into `--mem` and
`cpus_per_task` into `--cpus-per-task`. Site settings (partition, account, GPU model) and
defaults for jobs without such a block live in profiles/cluster/config.yaml.
"""

from __future__ import annotations

import os

from xlt.core.errors import XltError

CONFIG_TO_SLURM = {"gpus": "gpu", "runtime_min": "runtime", "mem_mb": "mem_mb", "cpus": "cpus_per_task"}


def slurm_resources(config: dict, family: str) -> dict:
    """Snakemake resources for `family`'s jobs; {} without a resources block. Zero GPUs is
    left out rather than passed on: the executor treats any `gpu` key as a GPU request."""
    spec = config.get(family, {}).get("resources", {}) or {}
    unknown = set(spec) - set(CONFIG_TO_SLURM)
    if unknown:
        raise ValueError(f"{family}.resources: unknown keys {sorted(unknown)}; allowed: {sorted(CONFIG_TO_SLURM)}")
    return {CONFIG_TO_SLURM[key]: value for key, value in spec.items() if not (key == "gpus" and value == 0)}


def gpu_job_resources(config: dict, family: str, slots: int) -> dict:
    """slurm_resources plus `gpu_slots`, the slots of one GPU the job takes (config gpu_sharing,
    xlt.cost.sharing), which `snakemake --resources gpu_slots=N` caps locally. With
    slots_per_gpu > 1 and gpu_sharing.slurm: shard, a one-GPU job asks SLURM for that many GPU
    shards (--gres=shard:N) instead of a whole GPU."""
    out = {**slurm_resources(config, family), "gpu_slots": int(slots)}
    sharing = config.get("gpu_sharing") or {}
    if out.get("gpu") == 1 and sharing.get("slots_per_gpu", 1) > 1 and sharing.get("slurm") == "shard":
        if os.environ.get("XLT_SLURM_GPU_MODEL"):
            raise XltError(
                "XLT_SLURM_GPU_MODEL asks for whole GPUs of a model, but gpu_sharing.slurm: shard asks for "
                "GPU shards (--gres=shard:N); unset XLT_SLURM_GPU_MODEL, or set gpu_sharing.slurm: gpu"
            )
        del out["gpu"]
        out["gres"] = f"shard:{int(slots)}"
    return out
