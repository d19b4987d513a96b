"""Several small jobs on one GPU: how many slots a job takes, and what the GPU is then occupied for.

Measured on an H100 (xlt.cost.profile.H100_MEASURED, mBERT shape, bf16, eager): a batch of
32 x 128 tokens trains at 126,783 tokens/s, a batch of 128 x 128 at 364,289. The batch-32 job
spends most of its step launching kernels and leaves the GPU idle in between; jobs of the
seeds' batch sizes (8-32) fill it only when several run at once. A GPU holds
`gpu_sharing.slots_per_gpu` slots; a job takes as many as the work of one of its steps needs,
a step as large as the measured batch of 128 x 128 (SATURATING_STEP_FLOPS) taking all of them,
and at least as many as its planned peak memory needs of `gpu_sharing.memory_gib`.

What sharing gains is measured (H200, benchmarks/gpu_check.py at f3310b3, two calls): N eager
processes of the paper's shape started together ran N = 2, 4, 8 times 1.90-2.07, 3.24-3.78 and
4.41-6.32 as fast as one, at batch 32 and 8 alike (the steps are host-bound: each process's own
Python and launches, the GPU idle between them). k jobs of a kind on one GPU then take it for 1 /
SPEEDUP(k) of their seconds each (the measured speed-ups' geometric mean at k, interpolated
between the measured N, the largest measured beyond it), and never less than their own FLOP rate's
share of the saturating throughput (the batch-128 rate; compiled steps the measured compiled one):
a phase of a job (its start-up, its training steps, its evaluations) occupies the GPU for its
seconds x max(1 / SPEEDUP(k), its own FLOP rate / the saturating rate), never more than its
seconds: for a batch-32 mBERT step with 4 slots a GPU, 1 / 3.56 = 0.28 of its seconds.
Phases are charged apart because one job mixes both kinds: an MLM adaptation's batch-8 training
steps leave the GPU idle between kernels while its evaluations in batches of 128 fill it; at the
job's average rate the evaluations' FLOPs would hide the idle steps.
"""

from __future__ import annotations

import math

from xlt.core import settings
from xlt.cost.constants import value as constant
from xlt.cost.estimate import job_cost
from xlt.cost.profile import COMPILE_STEP_RATIO, H100_MEASURED, KNOWN, MBERT_TOKEN_FLOPS

# the measured batch of 128 x 128 tokens at mBERT's shape: the step that fills an H100 on its own
SATURATING_STEP_FLOPS = MBERT_TOKEN_FLOPS * H100_MEASURED["tokens_per_step"][1]
SATURATING_LAYERS = 12
# N -> the measured speed-ups of N processes sharing a GPU over one (xlt.cost.constants)
SHARING_SPEEDUPS = constant("sharing_speedups")


def speedup(peers: int, measured: dict = SHARING_SPEEDUPS) -> float:
    """How much faster `peers` jobs sharing a GPU run together than one alone: the geometric mean of
    the measured speed-ups at that N, linear between measured N (1 at N = 1), the largest measured N's
    beyond it (no gain measured past it)."""
    means = {1: 1.0, **{n: math.exp(sum(map(math.log, v)) / len(v)) for n, v in measured.items()}}
    known = sorted(means)
    if peers >= known[-1]:
        return means[known[-1]]
    upper = next(n for n in known if n >= peers)
    lower = max(n for n in known if n <= peers)
    if upper == lower:
        return means[upper]
    return means[lower] + (means[upper] - means[lower]) * (peers - lower) / (upper - lower)


def job_slots(step_flops: float, peak_memory_gib: float, sharing: dict) -> int:
    """Slots of one GPU a job takes (config `gpu_sharing`): by the work of one of its steps, and
    by its planned peak memory; 1 to slots_per_gpu."""
    capacity = int(sharing["slots_per_gpu"])
    if capacity <= 1:
        return 1
    by_work = math.ceil(capacity * step_flops / SATURATING_STEP_FLOPS - 1e-9)
    by_memory = math.ceil(capacity * peak_memory_gib / sharing["memory_gib"] - 1e-9)
    return min(capacity, max(1, by_work, by_memory))


def saturated_rate(profile: dict, compiled: bool = False) -> float:
    """FLOP/s of one saturating step on the profile's accelerator: its FLOPs over the step time the
    profile plans for it (for h100: the measured batch-128 rate, 364,289 tokens/s at mBERT's shape;
    compiled, 451,301 tokens/s, also measured). A profile with a host range (`host_low`) plans that
    GPU-bound step with the fastest host's overheads, where it was measured, and compiled at the
    ratio measured at that shape (COMPILE_STEP_RATIO): its own overheads and compile ratio are fitted
    to host-bound small steps."""
    tokens = H100_MEASURED["tokens_per_step"][1]
    ratio = profile.get("compile_step_ratio", 1.0)
    if "host_low" in profile:
        profile, ratio = {**profile, **profile["host_low"]}, COMPILE_STEP_RATIO
    step = (
        profile.get("step_s", 0.0)
        + SATURATING_LAYERS
        * (profile.get("step_layer_s", 0.0) + profile.get("step_example_layer_s", 0.0) * tokens / 128)
        + SATURATING_STEP_FLOPS / profile["train_flops"]
    )
    if compiled:
        step *= ratio
    return SATURATING_STEP_FLOPS / step


def gpu_seconds(
    seconds: float, flops: float, slots: int, capacity: int, profile: dict, compiled: bool = False
) -> float:
    """Seconds of a GPU one phase of a job (`seconds` of work, `flops` in them, `compiled` or eager)
    occupies when the job shares one with capacity // slots jobs of its kind: its own seconds when
    alone or on a CPU profile, else (module docstring) at most its seconds and at least its share 1/k."""
    peers = capacity // max(slots, 1)
    if not profile.get("gpu") or peers <= 1 or seconds <= 0:
        return max(seconds, 0.0)
    own_rate = flops / seconds
    gain = speedup(peers, profile.get("sharing_speedups", SHARING_SPEEDUPS))
    return seconds * min(1.0, max(1.0 / gain, own_rate / saturated_rate(profile, compiled)))


def phases(job, profile: dict) -> list[tuple[float, float, bool]]:
    """(seconds, FLOPs, compiled) of a job's start-up (no FLOPs), training steps (compiled when the
    job is) and evaluations (the rest; always eager)."""
    startup = min(profile.get("overhead_s", 0.0), job.seconds)
    evaluation = max(job.seconds - startup - job.train_seconds, 0.0)
    return [
        (startup, 0.0, False),
        (job.train_seconds, job.train_flops, job.compiled),
        (evaluation, job.flops - job.train_flops, False),
    ]


def apply(jobs: list, config: dict, profile: dict) -> None:
    """Set each JobCost's slots and gpu_seconds from the config's gpu_sharing, phase by phase. A job
    that loads no model (data preparation, splits) asks for no GPU: no GPU seconds on a GPU
    profile (on a CPU profile every job's seconds count)."""
    sharing = config.get("gpu_sharing") or {"slots_per_gpu": 1}
    capacity = int(sharing["slots_per_gpu"])
    for job in jobs:
        if not job.loads_model:
            job.slots, job.gpu_seconds = 1, (0.0 if profile.get("gpu") else job.seconds)
            continue
        job.slots = job_slots(job.step_flops, job.peak_memory_gib, sharing)
        job.gpu_seconds = sum(
            gpu_seconds(s, f, job.slots, capacity, profile, compiled) for s, f, compiled in phases(job, profile)
        )


def rule_slots(config: dict, family: str, rule: str) -> dict[str, int]:
    """Job key -> slots, for every job of `rule` (the workflow's `gpu_slots` resource)."""
    sharing = config.get("gpu_sharing") or {"slots_per_gpu": 1}
    jobs = settings.plan_module(family).jobs(config).get(rule, {})
    out = {}
    for key, job in jobs.items():
        cost = job_cost(config, family, rule, key, job.spec, profile={"name": "cpu", **KNOWN["cpu"]})
        out[key] = job_slots(cost.step_flops, cost.peak_memory_gib, sharing) if cost.loads_model else 1
    return out
