"""The cost of a config's whole sweep: every job the workflow runs (xlt.core.plan.shared_jobs and
each family's plan.jobs), priced one by one (xlt.cost.estimate), its share of a GPU with
gpu_sharing (xlt.cost.sharing), and the sums by family and in total (`xlt plan`)."""

from __future__ import annotations

import re
from dataclasses import asdict

from xlt.core import settings
from xlt.core.plan import RESULTS, shared_jobs
from xlt.cost import sharing
from xlt.cost.constants import value as constant
from xlt.cost.estimate import DATA_RULE, job_cost
from xlt.cost.profile import COMPILE_S
from xlt.cost.shapes import hub_cache_gib

PREPARED = re.compile(rf"{RESULTS}/data/([^/\s]+)/")  # a prepared dataset's folder, anywhere in a string


def all_jobs(config: dict):
    """(family, rule, run id, spec) for every job the workflow runs, from the planning code the rules
    read. A declared dataset no job reads is never prepared (the workflow runs what its targets
    need): its prepare_data job is left out."""
    family_jobs = [
        (family, rule, run_id, job)
        for family in settings.FAMILIES
        if settings.family(config, family)
        for rule, jobs in settings.plan_module(family).jobs(config).items()
        for run_id, job in jobs.items()
    ]
    read = {
        match
        for *_, job in family_jobs
        for text in _strings([job.args, job.inputs])
        for match in PREPARED.findall(text)
    }
    for rule, jobs in shared_jobs(config).items():
        for run_id, job in jobs.items():
            if rule != DATA_RULE or run_id in read:
                yield "shared", rule, run_id, job.spec
    for family, rule, run_id, job in family_jobs:
        yield family, rule, run_id, job.spec


def _strings(value) -> list[str]:
    """Every string inside nested lists, tuples and dicts (a job's arguments and inputs)."""
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, (list, tuple)):
        return [s for v in value for s in _strings(v)]
    return [str(value)]


def plan(config: dict, profile: dict) -> dict:
    """Every job's cost, its GPU share (gpu_sharing), and the sums by family and in total."""
    jobs = [job_cost(config, *job, profile=profile) for job in all_jobs(config)]
    sharing.apply(jobs, config, profile)
    families = {}
    for job in jobs:
        f = families.setdefault(
            job.family,
            {"jobs": 0, "hours": 0.0, "gpu_hours": 0.0, "peak_memory_gib": 0.0, "disk_gib": 0.0, "temp_gib": 0.0},
        )
        f["jobs"] += 1
        f["hours"] += job.seconds / 3600
        f["gpu_hours"] += job.gpu_seconds / 3600
        f["peak_memory_gib"] = max(f["peak_memory_gib"], job.peak_memory_gib)
        f["disk_gib"] += job.disk_gib
        f["temp_gib"] += job.temp_gib
    hub = hub_cache_gib(config)
    total = {
        "jobs": len(jobs),
        "hours": sum(f["hours"] for f in families.values()),
        "gpu_hours": sum(f["gpu_hours"] for f in families.values()),
        "peak_memory_gib": max((f["peak_memory_gib"] for f in families.values()), default=0.0),
        "disk_gib": sum(f["disk_gib"] for f in families.values()) + hub,
        "hub_cache_gib": hub,
        "temp_gib": sum(f["temp_gib"] for f in families.values()),
        "scratch_gib": max((j.scratch_gib for j in jobs), default=0.0),
    }
    return {
        "profile": {k: v for k, v in profile.items() if k != "measured"},
        "families": families,
        "total": total,
        "gpu_sharing": dict(config.get("gpu_sharing") or {"slots_per_gpu": 1}),
        "jobs": [asdict(j) for j in jobs],
    }


def host_range(config: dict, profile: dict) -> dict | None:
    """The plan's totals on the fastest measured host: the profile with its `host_low` overheads
    (xlt.cost.profile: host-bound steps vary with the host); None for a profile without a range."""
    if "host_low" not in profile:
        return None
    total = plan(config, {**profile, **profile["host_low"]})["total"]
    return {"hours": total["hours"], "gpu_hours": total["gpu_hours"]}


def format_table(result: dict) -> str:
    """Per family: jobs, the jobs' own hours, accelerator hours with gpu_sharing (the same without
    it, or on a CPU profile), one job's peak memory, and the disk the sweep leaves."""
    gpu = bool(result["profile"].get("gpu"))
    slots = int(result.get("gpu_sharing", {}).get("slots_per_gpu", 1))
    lines = [
        f"profile: {result['profile']['name']} ({result['profile']['source']})",
        f"{'family':<14}{'jobs':>6}{'job-h' if gpu else 'CPU-h':>10}"
        + (f"{'GPU-h':>10}" if gpu else "")
        + f"{'peak mem GiB':>14}{'disk GiB':>11}",
    ]
    for name, f in [*result["families"].items(), ("total", result["total"])]:
        lines.append(
            f"{name:<14}{f['jobs']:>6}{f['hours']:>10.2f}"
            + (f"{f['gpu_hours']:>10.2f}" if gpu else "")
            + f"{f['peak_memory_gib']:>14.2f}{f['disk_gib']:>11.2f}"
        )
    if gpu:
        lines.append(
            f"(job-h: each job's own hours, summed; GPU-h: what the jobs occupy a GPU for with {slots} "
            f"slot(s) a GPU (config gpu_sharing; xlt.cost.sharing: the gain measured on an H200))"
        )
    low = result.get("host_low")
    if low:
        lines.append(
            f"range: {low['hours']:.2f}-{result['total']['hours']:.2f} job-h, {low['gpu_hours']:.2f}-"
            f"{result['total']['gpu_hours']:.2f} GPU-h: steps are host-bound and vary with the host; the table "
            "plans the slowest measured (an H200's), the low end the fastest (the H100 fit's overheads)"
        )
    lines.append(
        f"(disk: what the sweep leaves, {result['total']['hub_cache_gib']:.2f} GiB of hub cache included; "
        f"temp() model directories, {result['total']['temp_gib']:.2f} GiB in all, go once their readers ran; "
        f"a running training job also needs up to {result['total']['scratch_gib']:.2f} GiB for its checkpoint; "
        "peak memory is one job's, accelerator when it has one)"
    )
    lines.append("tokens: each batch padded to its longest example, from the data's token lengths (xlt.cost.tokens)")
    if "compile_step_ratio" in result["profile"]:
        lines.append(
            f"torch.compile (jobs with compile: true): a training step x{result['profile']['compile_step_ratio']:.3f} "
            f"+ {result['profile'].get('compile_s', COMPILE_S):.0f} s a job (xlt.cost.constants says where measured)"
        )
    if result["profile"].get("gpu"):
        lines.append(
            "frozen-prefix cache: not a GPU saving to count on; on an H100 it saved "
            f"{constant('prefix_cache_gpu_saving')} % over the whole freeze-depth sweep at mBERT's shape (measured)"
        )
    return "\n".join(lines)
