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
import time
from pathlib import Path

from xlt.core.errors import XltError

DEFAULT_PROFILE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "xlt" / "throughput.json"

# What a job pays besides its FLOPs (seconds; xlt.cost.estimate.job_cost adds them up):
#   overhead_s          once per job (interpreter, torch and transformers imports);
#   step_s + (step_layer_s + step_example_layer_s x examples) x layers   once per optimiser step
#     (the per-example part: the elementwise work of every layer, layer norms, activations, softmax;
#     a frozen layer, forward only, counts FROZEN_LAYER_SHARE of a layer);
#   eval_batch_s + eval_batch_layer_s x layers                   once per evaluation batch.
OVERHEADS = ("overhead_s", "step_s", "step_layer_s", "step_example_layer_s", "eval_batch_s", "eval_batch_layer_s")
# CPU: `xlt calibrate --threads 1` on the 2-core development machine (2026-11-24, one torch thread as
# the workflow's jobs run, load average 0.9-1.3; BENCHMARKS.md session 8), rounded: a step 6.9 ms +
# 1.48 ms a layer + 0.080 ms an example a layer, an evaluation batch 7.8 ms + 1.75 ms a layer.
CPU_LOOP = {
    "step_s": 0.007,
    "step_layer_s": 0.0015,
    "step_example_layer_s": 0.00008,
    "eval_batch_s": 0.008,
    "eval_batch_layer_s": 0.0018,
}
# GPUs without a measurement (v100): an eager PyTorch step launches a few dozen kernels per layer
# forward and backward at ~10 us each, plus the optimiser and the Python loop; assumed 10 ms + 1 ms a
# layer a step, 5 ms + 0.3 ms a layer an evaluation batch. Run `xlt calibrate` on the accelerator.
GPU_LOOP = {
    "step_s": 0.01,
    "step_layer_s": 0.001,
    "step_example_layer_s": 0.0002,
    "eval_batch_s": 0.005,
    "eval_batch_layer_s": 0.0003,
}
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
MBERT_TOKEN_FLOPS = 6 * 12 * 768**2 * 12
H100_MEASURED = {
    "tokens_per_step": (32 * 128, 128 * 128),
    "tokens_per_s": (126783.0, 364288.6),
    "fixed_step_s": 1 / 211.46,
}
H100_LOOP = two_point_fit(
    MBERT_TOKEN_FLOPS,
    H100_MEASURED["tokens_per_step"],
    H100_MEASURED["tokens_per_s"],
    H100_MEASURED["fixed_step_s"],
    12,
)
H100_SOURCE = (
    "measured on an H100 80GB HBM3 (bf16 autocast, eager, fused AdamW; benchmarks/mfu.py at mBERT shape, "
    "batch 32 and 128 x 128 tokens: 126,783 and 364,289 tokens/s): two-point fit, 494 TFLOP/s effective train "
    "rate + 28.1 ms a step (4.7 ms fixed + 1.95 ms a layer); evaluation derived (forward = 1/3 of a step)"
)
# torch.compile (--compile True, xlt.core.training.compiled_loss). Speed-up measured on the same H100
# at batch 128 x 128 tokens (benchmarks/mfu.py --mfu-compile, static shapes): 451,301 against 364,289
# tokens/s eager, a step 36.30 ms instead of 44.98 (x0.807). The plan applies that ratio to a whole
# training step (FLOPs and per-step overhead) at every batch shape and for dynamic shapes
# (dynamic=True): assumed, not measured (a step of a small batch is mostly kernel launches, which
# compiling fuses, but that was not timed). Evaluation stays eager. Compiling itself: not
# measured; assumed COMPILE_S a job (dynamo and inductor on the forward and backward graphs of a
# 12-layer encoder, commonly 30-60 s on a 16-core host; doubled for symbolic shapes and a margin).
COMPILE_STEP_RATIO = H100_MEASURED["tokens_per_s"][1] / 451300.8
COMPILE_S = 120.0
# A frozen layer below the trained ones runs forward only (no backward pass, no optimiser update).
# Measured on the same H100 (benchmarks/prefix_cache.py --mbert --device cuda, fp32, batch 32 x 128
# tokens; /work/shared/measurements/h100-prefix-cache.md), uncached steps a second by freeze depth,
# and the step with no encoder layer run (depth 12, cached). Per layer, a frozen one costs
# (depth-12 step - no-layer step) / (depth-0 step - no-layer step) = 0.287 of a trained one; that
# linear model puts depth 6 at 40.48 ms, measured 40.54. The share is measured with FLOPs included
# (a forward is 1/3 of a step's FLOPs), so for the per-step overhead alone it errs high. Every
# profile uses it: the ratio is one of launches and work, forward against forward and backward.
PREFIX_CACHE_STEPS_PER_S = {0: 16.59, 6: 24.67, 12: 48.33, "no_layer": 211.46}


def frozen_layer_share(steps_per_s: dict = PREFIX_CACHE_STEPS_PER_S, layers: int = 12) -> float:
    """What a frozen (forward-only) layer adds to a training step, as a share of a trained layer."""
    bare = 1 / steps_per_s["no_layer"]
    return (1 / steps_per_s[layers] - bare) / (1 / steps_per_s[0] - bare)


FROZEN_LAYER_SHARE = frozen_layer_share()
# A100: not measured; the H100's fit with its FLOP rate scaled by the datasheet ratio 312/989 (dense
# bf16). The overheads are host-side launches and stay the H100's.
A100_LOOP = {
    **H100_LOOP,
    "train_flops": H100_LOOP["train_flops"] * 312 / 989,
    "eval_flops": H100_LOOP["eval_flops"] * 312 / 989,
}
# train/eval: effective FLOP/s; memory_gib: accelerator memory; the rest: OVERHEADS
KNOWN = {
    "h100": {
        "memory_gib": 80,
        "overhead_s": 30,
        "gpu": True,
        "source": H100_SOURCE,
        **H100_LOOP,
        "compile_step_ratio": COMPILE_STEP_RATIO,
        "compile_s": COMPILE_S,
    },
    "a100": {
        "memory_gib": 80,
        "overhead_s": 30,
        "gpu": True,
        **A100_LOOP,
        "compile_step_ratio": COMPILE_STEP_RATIO,
        "compile_s": COMPILE_S,
        "source": "not measured: the H100 measurement's fit (bf16, eager) with the FLOP rate scaled by the datasheet "
        "ratio 312/989 TFLOP/s dense bf16 (156 TFLOP/s effective); per-step overheads and torch.compile's "
        "step ratio the H100's",
    },
    "v100": {
        "train_flops": 0.2 * 125e12,
        "eval_flops": 0.3 * 125e12,
        "memory_gib": 32,
        "overhead_s": 30,
        "gpu": True,
        "source": "NVIDIA V100 datasheet, 125 TFLOP/s fp16 tensor cores; 20 % / 30 % utilisation assumed"
        + GPU_LOOP_SOURCE,
        **GPU_LOOP,
    },
    "cpu": {
        "train_flops": 2e10,
        "eval_flops": 3e10,
        "memory_gib": 16,
        "overhead_s": 6,
        "gpu": False,
        "source": "one x86 core with AVX2, fp32, measured order of magnitude; per-step and per-batch overheads "
        "from `xlt calibrate --threads 1` on a 2-core machine; run `xlt calibrate` for this machine",
        **CPU_LOOP,
    },
}


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
                "source": f"{profile.get('source', path)} (without {', '.join(loop)}: rerun `xlt calibrate --out {path}`)",
            }
        return profile
    return {"name": "cpu", **KNOWN["cpu"], "source": KNOWN["cpu"]["source"] + f" (no calibration at {path})"}


def _startup_seconds(threads: int | None = None) -> float:
    """What every job pays before its first batch: a fresh interpreter importing torch, transformers'
    BERT and xlt's model loading and training code (every model-running `xlt` verb imports them)."""
    import subprocess
    import sys

    env = {**os.environ, "OMP_NUM_THREADS": str(threads)} if threads else None
    started = time.perf_counter()
    subprocess.run(
        [
            sys.executable,
            "-c",
            "import torch, transformers.models.bert.modeling_bert, xlt.core.models, xlt.core.training",
        ],
        check=True,
        env=env,
    )
    return time.perf_counter() - started


def _least_squares(rows: list[list[float]], values: list[float]) -> list[float]:
    """Coefficients of values ~ rows (one column per coefficient), each clamped at 0: an overhead
    cannot be negative, and on a busy machine a noisy slope can come out below 0."""
    import numpy as np

    solution = np.linalg.lstsq(np.asarray(rows, dtype=float), np.asarray(values, dtype=float), rcond=None)[0]
    return [max(float(c), 0.0) for c in solution]


def loop_overheads(
    train_flops: float,
    eval_flops: float,
    device: str = "cpu",
    hidden_size: int = 16,
    layers: tuple[int, int] = (1, 8),
    batch_sizes: tuple[int, int] = (8, 32),
    steps: int = 16,
    eval_batches: int = 8,
    max_length: int = 48,
) -> dict:
    """What a training step and an evaluation batch cost besides their FLOPs, on a BERT classifier
    so narrow (`hidden_size`) that its FLOPs hardly count: xlt's own training loop
    (xlt.core.training.train: AdamW, clipping, schedule) over demo NLI pairs tokenised in the
    collate as `xlt finetune` does, at two depths and two batch sizes; evaluation batches of 64
    in eval mode without gradients at the two depths. Each timing less its FLOP time (at the
    measured rates, over the batches' padded tokens) is fitted to step_s + step_layer_s x layers
    + step_example_layer_s x examples x layers, and eval_batch_s + eval_batch_layer_s x layers."""
    import torch
    from transformers import BertConfig, BertForSequenceClassification

    from xlt.core.classification import classification_loss, make_collate
    from xlt.core.train_args import TrainArgs
    from xlt.core.training import train
    from xlt.data import demo
    from xlt.data.demo_model import build_tokenizer

    records = demo.generate("nli", "en", "train", 64 * eval_batches, 1)
    tokenizer = build_tokenizer([r["text"] for r in records[:200]], 120)
    collate = make_collate(tokenizer, max_length)
    train_rows, train_values, eval_rows, eval_values, measured = [], [], [], [], []
    for depth in layers:
        torch.manual_seed(0)
        model = BertForSequenceClassification(
            BertConfig(
                vocab_size=len(tokenizer),
                hidden_size=hidden_size,
                num_hidden_layers=depth,
                num_attention_heads=1,
                intermediate_size=4 * hidden_size,
                max_position_embeddings=max_length + 2,
                num_labels=3,
            )
        )
        params = 12 * hidden_size**2 * depth
        for batch_size in batch_sizes:
            marks, tokens = [], []

            def counted(examples):
                batch = collate(examples)
                tokens.append(batch["input_ids"].numel())
                return batch

            def on_step(step, epoch):
                marks.append(time.perf_counter())

            train(
                model,
                records,
                counted,
                classification_loss,
                TrainArgs(
                    max_steps=steps,
                    batch_size=batch_size,
                    lr=1e-3,
                    max_length=max_length,
                    device=device,
                    precision="fp32",
                    log_every=10**9,
                ),
                on_step=on_step,
            )
            warm = 2  # the first steps allocate and warm kernels up: not timed
            per_step = (marks[-1] - marks[warm]) / (len(marks) - 1 - warm)
            flop_s = 6 * params * sum(tokens[warm:-1]) / (len(tokens) - 1 - warm) / train_flops
            train_rows.append([1.0, depth, batch_size * depth])
            train_values.append(per_step - flop_s)
            measured.append(
                {
                    "mode": "train",
                    "layers": depth,
                    "batch_size": batch_size,
                    "seconds_per_step": per_step,
                    "flop_seconds": flop_s,
                }
            )
        model.eval()
        device_model = model.to(device)
        batches = [records[i : i + 64] for i in range(0, len(records), 64)]
        with torch.no_grad():
            for i, chunk in enumerate(batches):
                if i == 1:  # the first batch warms up: not timed
                    started, tokens = time.perf_counter(), 0
                batch = {k: v.to(device) for k, v in collate(chunk).items()}
                device_model(**batch).logits.float().cpu()
                if i >= 1:
                    tokens += batch["input_ids"].numel()
        per_batch = (time.perf_counter() - started) / (len(batches) - 1)
        flop_s = 2 * params * tokens / (len(batches) - 1) / eval_flops
        eval_rows.append([1.0, depth])
        eval_values.append(per_batch - flop_s)
        measured.append(
            {"mode": "eval", "layers": depth, "batch_size": 64, "seconds_per_batch": per_batch, "flop_seconds": flop_s}
        )
    step_s, step_layer_s, step_example_layer_s = _least_squares(train_rows, train_values)
    eval_batch_s, eval_batch_layer_s = _least_squares(eval_rows, eval_values)
    return {
        "step_s": step_s,
        "step_layer_s": step_layer_s,
        "step_example_layer_s": step_example_layer_s,
        "eval_batch_s": eval_batch_s,
        "eval_batch_layer_s": eval_batch_layer_s,
        "measured": measured,
        "probe": {
            "hidden_size": hidden_size,
            "layers": list(layers),
            "batch_sizes": list(batch_sizes),
            "steps": steps,
            "max_length": max_length,
        },
    }


def calibrate(
    seq_lengths=(32, 64, 128),
    hidden_size: int = 256,
    layers: int = 4,
    batch_size: int = 16,
    budget_s: float = 30.0,
    device: str = "auto",
    threads: int | None = None,
    loop_steps: int = 16,
) -> dict:
    """Time forward and forward+backward of a small BERT at a few sequence lengths; FLOP/s from
    2 x params x tokens (forward) and 6 x params x tokens (forward+backward). Then the per-step
    and per-batch overheads (loop_overheads, `loop_steps` steps a setting) and a job's start-up.
    `threads`: torch's CPU threads (the workflow's jobs use their rule's `threads:`)."""
    import torch
    from transformers import BertConfig, BertModel

    if threads:
        torch.set_num_threads(threads)
    if device == "auto":
        device = "cuda" if torch.cuda.is_available() else "cpu"
    torch.manual_seed(0)
    model = BertModel(
        BertConfig(
            vocab_size=1000,
            hidden_size=hidden_size,
            num_hidden_layers=layers,
            num_attention_heads=max(1, hidden_size // 64),
            intermediate_size=4 * hidden_size,
            max_position_embeddings=max(seq_lengths),
        )
    ).to(device)
    params = sum(p.numel() for name, p in model.named_parameters() if "embeddings" not in name)
    per_length = budget_s / (2 * len(seq_lengths))
    rows = []
    for seq in seq_lengths:
        ids = torch.randint(0, 1000, (batch_size, seq), device=device)
        row = {"seq_length": seq}
        for mode in ("forward", "train"):
            model.train(mode == "train")
            tokens, started, steps = 0, time.perf_counter(), 0
            while steps < 2 or time.perf_counter() - started < per_length:
                if mode == "train":
                    model(ids).last_hidden_state.float().pow(2).mean().backward()
                else:
                    with torch.no_grad():
                        model(ids)
                if device == "cuda":
                    torch.cuda.synchronize()
                tokens += ids.numel()
                steps += 1
                if steps == 1:  # the first step warms kernels and allocators up: not timed
                    tokens, started = 0, time.perf_counter()
            seconds = time.perf_counter() - started
            row[f"{mode}_tokens_per_s"] = tokens / seconds
        rows.append(row)
    train = sum(6 * params * r["train_tokens_per_s"] for r in rows) / len(rows)
    forward = sum(2 * params * r["forward_tokens_per_s"] for r in rows) / len(rows)
    loop = loop_overheads(train, forward, device=device, steps=loop_steps)
    return {
        "name": f"calibrated-{device}",
        "gpu": device != "cpu",
        "train_flops": train,
        "eval_flops": forward,
        "overhead_s": _startup_seconds(threads),
        "threads": torch.get_num_threads(),
        **{key: loop[key] for key in OVERHEADS[1:]},
        "loop_measured": loop["measured"],
        "loop_probe": loop["probe"],
        "memory_gib": (torch.cuda.get_device_properties(0).total_memory / 2**30 if device == "cuda" else None),
        "measured": rows,
        "probe": {
            "hidden_size": hidden_size,
            "layers": layers,
            "batch_size": batch_size,
            "non_embedding_params": params,
        },
        "source": f"xlt calibrate on this machine ({device}, {torch.get_num_threads()} threads), {time.strftime('%Y-%m-%d')}",
    }
