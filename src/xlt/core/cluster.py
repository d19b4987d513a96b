"""Cluster resources of a job, from the config to the names Snakemake's SLURM executor reads.

A family's `resources:` block in the config ({gpus, runtime_min, mem_mb, cpus}) says what one
of its training jobs needs at that config's scale (the paper sweep needs a GPU for hours,
the tiny test sweep a few minutes). The rules pass it on as Snakemake resources; the SLURM
executor turns `gpu` into `--gpus`, `runtime` into `-t`, `mem_mb` into `--mem` and
`cpus_per_task` into `--cpus-per-task`. Site settings (partition, account, GPU model) and
defaults for jobs without such a block live in profiles/cluster/config.yaml.
"""
from __future__ import annotations

CONFIG_TO_SLURM = {"gpus": "gpu", "runtime_min": "runtime", "mem_mb": "mem_mb", "cpus": "cpus_per_task"}


def slurm_resources(config: dict, family: str) -> dict:
    """Snakemake resources for `family`'s jobs; {} without a resources block. Zero GPUs is
    left out rather than passed on: the executor treats any `gpu` key as a GPU request."""
    spec = config.get(family, {}).get("resources", {}) or {}
    unknown = set(spec) - set(CONFIG_TO_SLURM)
    if unknown:
        raise ValueError(f"{family}.resources: unknown keys {sorted(unknown)}; allowed: {sorted(CONFIG_TO_SLURM)}")
    return {CONFIG_TO_SLURM[key]: value for key, value in spec.items() if not (key == "gpus" and value == 0)}
