"""Throughput profiles: how many FLOP/s a machine delivers for training and for inference, and
what a job pays besides its FLOPs.

`xlt calibrate` measures one on this machine and saves it (DEFAULT_PROFILE); without a saved
profile `xlt plan --gpu NAME` reads KNOWN: h100 fitted to throughput measured on an H100 (a100
scaled from it by the datasheet ratio), the others datasheet peaks times an assumed utilisation
(each entry says which in its `source`).

Besides the FLOP rates a profile holds the costs the FLOP model does not see (OVERHEADS): a
job's start-up, and per optimiser step and per evaluation batch the work outside the matrix
products (optimiser update, gradient clipping, collate and tokenisation, Python and kernel
dispatch per layer). On a small model they dominate: the demo's 64-wide encoder spends most of
a training step there (BENCHMARKS.md, session 7).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from xlt.core.errors import XltError
from xlt.cost import formulas
from xlt.cost.constants import value as constant

DEFAULT_PROFILE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "xlt" / "throughput.json"

# What a job pays besides its FLOPs (seconds; xlt.cost.estimate.job_cost adds them up):
#   overhead_s          once per job (interpreter, torch and transformers imports);
#   step_s + (step_layer_s + step_example_layer_s x examples) x layers   once per optimiser step
#     (the per-example part: the elementwise work of every layer, layer norms, activations, softmax;
#     a frozen layer, forward only, counts FROZEN_LAYER_SHARE of a layer);
#   eval_batch_s + eval_batch_layer_s x layers                   once per evaluation batch.
OVERHEADS = ("overhead_s", "step_s", "step_layer_s", "step_example_layer_s", "eval_batch_s", "eval_batch_layer_s")
# the overheads of the CPU profile (measured) and of a GPU without a measurement (assumed: kernel
# launches); sources in xlt.cost.constants. Run `xlt calibrate` on the machine that runs the jobs.
CPU_LOOP = constant("cpu_loop")
GPU_LOOP = constant("gpu_loop")
GPU_LOOP_SOURCE = "; per-step and per-batch overheads assumed (kernel launches), not measured"


def two_point_fit(
    flops_per_token: float,
    tokens_per_step: tuple[int, int],
    tokens_per_s: tuple[float, float],
    fixed_step_s: float,
    layers: int,
) -> dict:
    """Effective FLOP rate and per-step overhead from two measured training throughputs of one model
    at two batch sizes: seconds/step = overhead + flops_per_token x tokens/step / rate, two equations
    in the two unknowns. The overhead is split into `fixed_step_s` (measured with no encoder layer
    trained) and the rest per layer (eager kernel dispatch grows with depth). An evaluation batch is a
    forward pass: 1/3 of a step's FLOPs at the same rate (2 vs 6 x params a token) and, derived not
    measured, 1/3 of its overhead. The per-example elementwise work (step_example_layer_s) cannot be
    told apart from the FLOP time with two batch sizes, so it is in the rate and set to 0 here."""
    (small, large), (rate_small, rate_large) = tokens_per_step, tokens_per_s
    seconds_small, seconds_large = small / rate_small, large / rate_large
    rate = flops_per_token * (large - small) / (seconds_large - seconds_small)
    overhead = seconds_small - flops_per_token * small / rate
    per_layer = (overhead - fixed_step_s) / layers
    return {
        "train_flops": rate,
        "eval_flops": rate,
        "step_s": fixed_step_s,
        "step_layer_s": per_layer,
        "step_example_layer_s": 0.0,
        "eval_batch_s": fixed_step_s / 3,
        "eval_batch_layer_s": per_layer / 3,
    }


# H100 80GB HBM3, torch 2.11+cu130, bf16 autocast, fused AdamW, xlt.core.training.train at mBERT's
# shape (12 x 768), 128 tokens an example (/work/shared/measurements, benchmarks/mfu.py, 2026-11-26):
# eager batch 32: 126,783 tokens/s (32.31 ms a step); eager batch 128: 364,289 tokens/s (44.98 ms).
# FLOPs as estimate.job_cost counts them: 6 x 12 x 768^2 x 12 = 509.6 MFLOP a token (no embedding
# lookup, no attention scores), so rate = 509.6e6 x (16384 - 4096) / (44.98 - 32.31) ms = 494 TFLOP/s
# (50 % of the 989 peak: the marginal rate once launches are paid) and overhead = 32.31 ms - 4.23 ms
# = 28.08 ms a step. Of it, 4.73 ms is fixed: the frozen-prefix benchmark's depth-12 cached step
# (211.46 steps/s, no encoder layer trained; fp32, same H100); the other 23.35 ms over 12 layers is
# 1.95 ms a layer. Cross-check: the plan's 32 x 128 step gives 990 samples/s; the project's loop was
# measured at 1,035 (transformers.Trainer 903). torch.compile: COMPILE_STEP_RATIO below.
MBERT_TOKEN_FLOPS = formulas.training_flops(formulas.encoder_params(768, 12), formulas.encoder_params(768, 12), 1)
H100_MEASURED = {
    "tokens_per_step": constant("h100_tokens_per_step"),
    "tokens_per_s": constant("h100_tokens_per_s"),
    "fixed_step_s": 1 / constant("prefix_cache_steps_per_s")["no_layer"],
}
H100_LOOP = two_point_fit(
    MBERT_TOKEN_FLOPS,
    H100_MEASURED["tokens_per_step"],
    H100_MEASURED["tokens_per_s"],
    H100_MEASURED["fixed_step_s"],
    12,
)
H100_SOURCE = (
    "measured: FLOP rate on an H100 80GB HBM3 (bf16 autocast, eager, fused AdamW; benchmarks/mfu.py at mBERT "
    "shape, batch 32 and 128 x 128 tokens: 126,783 and 364,289 tokens/s; two-point fit, 494 TFLOP/s effective); "
    "per-step overheads fitted (minimax) to 9 measured eager steps of the paper's shapes on an H200 "
    "(benchmarks/gpu_check.py at f3310b3: depth -1 and 8, batch 8-32, XNLI-like lengths bucketed and padded to "
    "x8; each within 1.23x); evaluation derived (forward = 1/3 of a step); range: the H100 host's overheads "
    "(28.1 ms a step) as the fastest host"
)


def minimax_fit(
    measured: dict, flops_rate: float, tokens_per_example: float, hidden: int = 768, layers: int = 12
) -> dict:
    """The per-step overheads (step_s, step_layer_s, step_example_layer_s: OVERHEADS, as
    xlt.cost.estimate.overhead_seconds adds them) that plan measured step times best: the fit that
    makes the largest |log(planned / measured)| smallest, over every measured step of `measured`
    ((freeze depth, batch) -> step seconds), the FLOPs at `flops_rate` as the plan counts them.
    Minimax, not least squares: the plan must hold each measured shape within a factor, and the
    repeats of one shape on one host spread by up to 1.5x (BENCHMARKS.md, "GPU check on an H200").
    A grid over the three, refined around its best point: deterministic, a few tens of ms."""
    import numpy as np

    params = formulas.encoder_params(hidden, layers)
    flop_s, stepped, batch, seconds = [], [], [], []
    for (depth, size), steps in sorted(measured.items()):
        frozen = min(max(depth, 0), layers)
        flops = formulas.training_flops(params, params * (layers - frozen) / layers, size, tokens_per_example)
        for step in steps:
            flop_s.append(flops / flops_rate)
            stepped.append(layers - frozen * (1 - FROZEN_LAYER_SHARE))
            batch.append(size)
            seconds.append(step)
    flop_s, stepped, batch, seconds = (np.array(v, dtype=float) for v in (flop_s, stepped, batch, seconds))
    low, high = np.zeros(3), np.array([1.0, 1.0 / layers, 1.0 / (layers * batch.max())]) * seconds.max()
    for _ in range(10):
        grid = [np.linspace(a, b, 17) for a, b in zip(low, high)]
        s, per_layer, per_example = np.meshgrid(*grid, indexing="ij")
        planned = s[..., None] + stepped * (per_layer[..., None] + batch * per_example[..., None]) + flop_s
        worst = np.abs(np.log(planned / seconds)).max(axis=-1)
        index = np.unravel_index(worst.argmin(), worst.shape)
        best = np.array([grid[i][index[i]] for i in range(3)])
        span = (high - low) / 6
        low, high = np.maximum(best - span, 0.0), best + span
    step_s, step_layer_s, step_example_layer_s = (float(v) for v in best)
    return {
        "step_s": step_s,
        "step_layer_s": step_layer_s,
        "step_example_layer_s": step_example_layer_s,
        "eval_batch_s": step_s / 3,
        "eval_batch_layer_s": step_layer_s / 3,
        "worst_ratio": float(np.exp(worst.min())),
    }


# torch.compile (--compile True, xlt.core.training.compiled_loss). Speed-up measured on the same H100
# at batch 128 x 128 tokens (benchmarks/mfu.py --mfu-compile, static shapes): 451,301 against 364,289
# tokens/s eager, a step 36.30 ms instead of 44.98 (x0.807). The plan applies that ratio to a whole
# training step (FLOPs and per-step overhead) at every batch shape and for dynamic shapes
# (dynamic=True): assumed, not measured (a step of a small batch is mostly kernel launches, which
# compiling fuses, but that was not timed). Evaluation stays eager. Compiling itself: not
# measured; assumed COMPILE_S a job (dynamo and inductor on the forward and backward graphs of a
# 12-layer encoder, commonly 30-60 s on a 16-core host; doubled for symbolic shapes and a margin).
COMPILE_STEP_RATIO = H100_MEASURED["tokens_per_s"][1] / constant("h100_compiled_tokens_per_s")
COMPILE_S = constant("compile_s")  # measured on an H200 (constants)
# A frozen layer below the trained ones runs forward only (no backward pass, no optimiser update).
# Measured on the same H100 (benchmarks/prefix_cache.py --mbert --device cuda, fp32, batch 32 x 128
# tokens; /work/shared/measurements/h100-prefix-cache.md), uncached steps a second by freeze depth,
# and the step with no encoder layer run (depth 12, cached). Per layer, a frozen one costs
# (depth-12 step - no-layer step) / (depth-0 step - no-layer step) = 0.287 of a trained one; that
# linear model puts depth 6 at 40.48 ms, measured 40.54. The share is measured with FLOPs included
# (a forward is 1/3 of a step's FLOPs), so for the per-step overhead alone it errs high. Every
# profile uses it: the ratio is one of launches and work, forward against forward and backward.
PREFIX_CACHE_STEPS_PER_S = constant("prefix_cache_steps_per_s")


def frozen_layer_share(steps_per_s: dict = PREFIX_CACHE_STEPS_PER_S, layers: int = 12) -> float:
    """What a frozen (forward-only) layer adds to a training step, as a share of a trained layer."""
    bare = 1 / steps_per_s["no_layer"]
    return (1 / steps_per_s[layers] - bare) / (1 / steps_per_s[0] - bare)


FROZEN_LAYER_SHARE = frozen_layer_share()
# The per-step overheads of the paper's own steps, measured on an H200 (benchmarks/gpu_check.py at
# f3310b3, benchmarks/measurements/h200-gpu-check-f3310b3-call{1,2}.json): mBERT shape, XNLI-like
# lengths, length-bucketed, padded to a multiple of 8, eager, at (depth, batch) (-1, 32), (8, 32),
# (-1, 16), (-1, 8), 9 step times in all. A step at batch 8 costs about what one at batch 32 does:
# the host (Python, launches, per-shape set-up) bounds it, and the H100's fit above (fixed 128-token
# batches, another host) plans it 1.4-2.1x short. Fitted minimax (minimax_fit) with the H100's FLOP
# rate (the same GH100 compute): every measured step within H200_FIT["worst_ratio"] (1.23) of the
# plan. Host-bound steps vary with the host: the same shape took 34.5 ms a step on another H200
# (benchmarks/measurements/h200-gpu-check-2-bda09e8.json) against 63.9 here, and the H100 host's
# fixed-length steps fit 28.1 ms of overhead. So the plan is a range (xlt.cost.sweep.host_range):
# this fit, the slowest measured host, and the H100 fit's overheads, the fastest (HOST_LOW).
H200_FIT = minimax_fit(
    constant("h200_eager_step_s"), H100_LOOP["train_flops"], constant("h200_padded_tokens_per_example")
)
H200_LOOP = {**H100_LOOP, **{key: H200_FIT[key] for key in OVERHEADS[1:]}}
HOST_LOW = {key: H100_LOOP[key] for key in OVERHEADS[1:]}
# torch.compile(dynamic=True) against eager, the same H200 call, depth -1, batch 32 (measured; the
# H100's batch-128 static-shape ratio above, 0.807, is the rate at a GPU-bound shape)
H200_COMPILE_STEP_RATIO = constant("h200_compiled_step_s")[0] / constant("h200_compiled_step_s")[1]
# A100: not measured; the H100's fit with its FLOP rate scaled by the datasheet ratio 312/989 (dense
# bf16). The overheads are host-side launches and stay the H100's.
A100_TFLOPS, H100_TFLOPS = constant("dense_bf16_tflops")
A100_LOOP = {
    **H200_LOOP,
    "train_flops": H100_LOOP["train_flops"] * A100_TFLOPS / H100_TFLOPS,
    "eval_flops": H100_LOOP["eval_flops"] * A100_TFLOPS / H100_TFLOPS,
}
GPU_OVERHEAD_S, CPU_OVERHEAD_S, MEMORY_GIB = (
    constant("gpu_overhead_s"),
    constant("cpu_overhead_s"),
    constant("memory_gib"),
)
V100_TRAIN_UTILISATION, V100_EVAL_UTILISATION = constant("v100_utilisation")
CPU_TRAIN_FLOPS, CPU_EVAL_FLOPS = constant("cpu_flops")
# train/eval: effective FLOP/s; memory_gib: accelerator memory; the rest: OVERHEADS
KNOWN = {
    "h100": {
        "memory_gib": MEMORY_GIB["h100"],
        "overhead_s": GPU_OVERHEAD_S,
        "gpu": True,
        "source": H100_SOURCE,
        **H200_LOOP,
        "compile_step_ratio": H200_COMPILE_STEP_RATIO,
        "compile_s": COMPILE_S,
        "host_low": HOST_LOW,
    },
    "a100": {
        "memory_gib": MEMORY_GIB["a100"],
        "overhead_s": GPU_OVERHEAD_S,
        "gpu": True,
        **A100_LOOP,
        "compile_step_ratio": H200_COMPILE_STEP_RATIO,
        "compile_s": COMPILE_S,
        "host_low": HOST_LOW,
        "source": "not measured: the h100 profile (bf16, eager) with the FLOP rate scaled by the datasheet "
        "ratio 312/989 TFLOP/s dense bf16 (156 TFLOP/s effective); per-step overheads (host-bound) and "
        "torch.compile's step ratio the h100 profile's",
    },
    "v100": {
        "train_flops": V100_TRAIN_UTILISATION * constant("v100_peak_flops"),
        "eval_flops": V100_EVAL_UTILISATION * constant("v100_peak_flops"),
        "memory_gib": MEMORY_GIB["v100"],
        "overhead_s": GPU_OVERHEAD_S,
        "gpu": True,
        "source": "NVIDIA V100 datasheet, 125 TFLOP/s fp16 tensor cores; 20 % / 30 % utilisation assumed"
        + GPU_LOOP_SOURCE,
        **GPU_LOOP,
    },
    "cpu": {
        "train_flops": CPU_TRAIN_FLOPS,
        "eval_flops": CPU_EVAL_FLOPS,
        "memory_gib": MEMORY_GIB["cpu"],
        "overhead_s": CPU_OVERHEAD_S,
        "gpu": False,
        "source": "one x86 core with AVX2, fp32, measured order of magnitude; per-step and per-batch overheads "
        "from `xlt calibrate --threads 1` on a 2-core machine; run `xlt calibrate` for this machine",
        **CPU_LOOP,
    },
}


def add_profile_arguments(parser, *, gpu_note: str = "") -> None:
    """--gpu and --profile, the arguments of `load`, on the parser of a verb that prices a config's
    jobs (`xlt plan`, `xlt cost-table`, `xlt status`); `gpu_note` ends --gpu's help."""
    parser.add_argument(
        "--gpu",
        default=None,
        help=f"plan with a known accelerator ({', '.join(KNOWN)}) instead of the saved calibration{gpu_note}",
    )
    parser.add_argument("--profile", default=None, help="calibration file (default: ~/.cache/xlt/throughput.json)")


def load(gpu: str | None = None, path: str | Path | None = None) -> dict:
    """The profile to plan with: --gpu NAME from KNOWN, else a saved calibration, else KNOWN['cpu']."""
    if gpu is not None:
        if gpu not in KNOWN:
            raise XltError(
                f"--gpu {gpu!r} is not a known accelerator; use one of {', '.join(KNOWN)} "
                f"or run `xlt calibrate` on the machine and plan with --profile"
            )
        return {"name": gpu, **KNOWN[gpu]}
    path = Path(path) if path is not None else DEFAULT_PROFILE
    if path.is_file():
        profile = json.loads(path.read_text())
        missing = {"train_flops", "eval_flops", "overhead_s"} - set(profile)
        if missing:
            raise XltError(f"{path} lacks {sorted(missing)}; rerun `xlt calibrate --out {path}`")
        loop = [key for key in OVERHEADS if key not in profile]
        if loop:  # a calibration from before the loop overheads were measured: FLOPs and start-up only
            profile = {
                **profile,
                **dict.fromkeys(loop, 0.0),
                "source": f"{profile.get('source', path)} (without {', '.join(loop)}: "
                f"rerun `xlt calibrate --out {path}`)",
            }
        return profile
    return {"name": "cpu", **KNOWN["cpu"], "source": KNOWN["cpu"]["source"] + f" (no calibration at {path})"}
