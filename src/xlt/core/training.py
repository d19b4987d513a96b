"""One training loop for every family, in the manner of the Hugging Face examples.

AdamW with warm-up and a linear, constant or cosine schedule, gradient clipping and accumulation, a seeded data
order, evaluation every K optimiser steps with best-checkpoint selection, bf16 autocast on
CUDA devices that support it (fp16 with a gradient scaler on those that do not, fp32 on CPU), a NaN/inf guard, and a progress line (loss, learning rate, samples/s,
elapsed, ETA) every `log_every` steps on stderr, with a progress bar at a terminal. A family supplies the
model, its examples, a collate function, a loss function and (optionally) an evaluator.
Gradient accumulation splits each batch of `batch_size` examples into `grad_accum` micro-batches
and weights each micro-batch's loss by its share of the batch's examples, so for a loss that is a
mean over examples an optimiser step sees the unsplit batch's gradient (up to float rounding;
dropout aside): only memory changes. A loss that is not a mean over the batch's examples (in-batch
negatives, a mean over tokens) is not the same split; the dual encoder refuses grad_accum > 1.
The last batch of an epoch is trained even when it is short (transformers.Trainer's default,
dataloader_drop_last=False); its loss is the mean over the examples it has, like any batch's.
Optional: length bucketing (`length_bucketing`: batches of similar length, so the collate's
dynamic padding pads less; see xlt.core.bucketing) and torch.compile of the model (`compile`).

With a `checkpoint_dir`, the loop is resumable (xlt.core.checkpoint): it saves every
`checkpoint_every` steps and when SLURM signals (SIGTERM/SIGUSR1), then exits with
EXIT_PREEMPTED; a rerun continues from the checkpoint to the same result as an
uninterrupted run. Only a rerun of the same run: the checkpoint is keyed on the caller's
`identity` (its model, loss settings and input files: xlt.core.checkpoint.run_identity) plus
every TrainArgs setting but `device` and `checkpoint_every` and the loop's own counts; a
checkpoint with another key is discarded (one log line says what changed) and training starts
over.
"""

from __future__ import annotations

import contextlib
import logging
import math
import random
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable, Sequence

import numpy as np
import torch

from xlt.core import console, faults
from xlt.core.bucketing import bucketed_order, example_lengths
from xlt.core.checkpoint import GracefulStop, load_checkpoint, restore, save_checkpoint, with_settings
from xlt.core.errors import XltError
from xlt.core.models import pick_device
from xlt.core.schedules import linear_schedule, lr_factor, lr_schedule  # noqa: F401  (re-exported)

# the settings live in a torch-free module so the Snakefile can build flags without importing torch
from xlt.core.train_args import (  # noqa: F401  (re-exported)
    PRECISIONS,
    SCHEDULES,
    TrainArgs,
    add_train_arguments,
    parse_bool,
    precision_label,
    train_args_from,
    train_flags,
)

log = logging.getLogger("xlt.core.training")

# where a run computes and how often it saves do not change what it computes, so they may differ
# on a resume (a retried job may land on another GPU); every other TrainArgs field keys the checkpoint
NOT_IN_RUN_KEY = ("device", "checkpoint_every")
# bumped when the loop computes something else for the same settings, so an older checkpoint is
# not resumed under new rules (2: a batch is split into micro-batches; transformers' warm-up)
LOOP_VERSION = 2


def seed_everything(seed: int) -> None:
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


@dataclass
class TrainResult:
    steps: int
    best_step: int
    best_score: float | None
    history: list = field(default_factory=list)  # [{"step", "loss", **eval metrics}]
    wall_s: float = 0.0
    device: str = "cpu"
    samples_per_s: float = 0.0
    precision: str = "fp32"  # what autocast computed in: fp32, bfloat16 or float16
    # the training curve: one row per logged or evaluated step, {"step", "loss", "lr", "dev_score"}
    curve: list = field(default_factory=list)


class TrainingDiverged(XltError):
    pass


def _optimizer(
    model: torch.nn.Module, params: Sequence[torch.nn.Parameter], args: TrainArgs, device
) -> torch.optim.Optimizer:
    wanted = {id(p) for p in params}
    decay, no_decay = [], []
    for name, p in model.named_parameters():
        if id(p) not in wanted:
            continue
        # biases and LayerNorm weights are not decayed, as in BERT's original recipe
        (no_decay if p.ndim < 2 else decay).append(p)
    groups = [{"params": decay, "weight_decay": args.weight_decay}, {"params": no_decay, "weight_decay": 0.0}]
    # The fused kernel (CUDA; CPU since torch 2.4) is several times faster than the default foreach
    # one: 3.4x for the demo model's optimiser step on a CPU (BENCHMARKS.md), as transformers.Trainer
    # uses by default. A device or torch build without it gets the default implementation.
    try:
        return torch.optim.AdamW(groups, lr=args.lr, eps=args.adam_epsilon, fused=True)
    except (RuntimeError, ValueError):
        log.info("no fused AdamW for %s in this torch build; using the default implementation", device)
        return torch.optim.AdamW(groups, lr=args.lr, eps=args.adam_epsilon)


def warmup_steps(args: TrainArgs, total: int) -> int:
    """Warm-up steps: `warmup_steps` when set (> 0), else `warmup_ratio` of the run's steps."""
    return args.warmup_steps if args.warmup_steps > 0 else int(args.warmup_ratio * total)


def autocast_dtype(precision: str, device: torch.device) -> tuple[torch.dtype | None, str]:
    """The autocast dtype for `precision` on `device` (None: fp32) and why, for the log.
    auto: bf16 on a CUDA device that supports it, else fp16 with a gradient scaler; fp32 on CPU."""
    if precision not in PRECISIONS:
        raise XltError(f"unknown precision {precision!r}; choose one of {', '.join(PRECISIONS)}")
    if precision == "fp32":
        return None, "fp32 as asked"
    if precision == "bf16":
        return torch.bfloat16, "bf16 autocast as asked"
    if precision == "fp16":
        return torch.float16, "fp16 autocast with a gradient scaler as asked"
    if device.type != "cuda":
        return None, f"auto: fp32 on {device.type}"
    if torch.cuda.is_bf16_supported():
        return torch.bfloat16, f"auto: bf16 autocast ({device} supports bf16)"
    return torch.float16, f"auto: fp16 autocast with a gradient scaler ({device} does not support bf16)"


def epoch_order(n: int, seed: int, epoch: int) -> list[int]:
    """The data order of one epoch: a permutation that depends only on (seed, epoch), so a
    resumed run sees exactly the batches an uninterrupted run would."""
    g = torch.Generator().manual_seed(seed * 1_000_003 + epoch)
    return torch.randperm(n, generator=g).tolist()


def compiled_loss(loss_fn: Callable, model: torch.nn.Module) -> Callable:
    """`loss_fn` with `model` replaced by torch.compile(model): the compiled module shares the
    parameters, so the optimiser, evaluation and saving keep using the plain `model`.
    dynamic=True: every collate pads to its batch's longest example, so the sequence length (and
    the short last batch's size) changes from batch to batch; one graph with symbolic shapes
    serves them all, where static shapes would recompile per length until torch's recompile
    limit and then fall back to eager. (The other way, padding to a few fixed lengths, would
    change the inputs a compiled run sees against an eager one.) A ModuleDict (sbert's encoder and
    head) has no forward of its own: each of its modules is compiled, and the loss indexes them."""
    if isinstance(model, torch.nn.ModuleDict):
        compiled = torch.nn.ModuleDict({name: torch.compile(module, dynamic=True) for name, module in model.items()})
    else:
        compiled = torch.compile(model, dynamic=True)
    return lambda m, batch: loss_fn(compiled if m is model else m, batch)


def micro_batches(chunk: list, parts: int) -> list[list]:
    """`chunk` cut into `parts` consecutive micro-batches as even as possible (the first
    len % parts one longer); a chunk shorter than `parts` (an epoch's short last batch) gives
    fewer, none empty."""
    size, extra = divmod(len(chunk), parts)
    out, start = [], 0
    for i in range(parts):
        end = start + size + (i < extra)
        if end > start:
            out.append(chunk[start:end])
        start = end
    return out


def steps_per_epoch(n_examples: int, args: TrainArgs) -> int:
    # one batch of batch_size examples per optimiser step, however grad_accum splits it
    return math.ceil(n_examples / args.batch_size)


def total_optimizer_steps(n_examples: int, args: TrainArgs) -> int:
    if args.max_steps > 0:
        return args.max_steps
    return max(1, math.ceil(steps_per_epoch(n_examples, args) * args.epochs))


def effective_batch(args: TrainArgs) -> dict:
    """The batch an optimiser step sees and how it is split (the run manifest records it)."""
    return {
        "batch_size": args.batch_size,
        "grad_accum": args.grad_accum,
        "micro_batch_size": math.ceil(args.batch_size / args.grad_accum),
    }


def train(
    model: torch.nn.Module,
    examples: Sequence,
    collate: Callable[[list], dict],
    loss_fn: Callable[[torch.nn.Module, dict], torch.Tensor],
    args: TrainArgs,
    evaluate: Callable[[torch.nn.Module], dict] | None = None,
    parameters: Sequence[torch.nn.Parameter] | None = None,
    on_step: Callable[[int, int], None] | None = None,
    checkpoint_dir: str | Path | None = None,
    identity: dict | None = None,
    initial_score: float | None = None,
) -> TrainResult:
    """Train `model` in place; with `evaluate`, restore the parameters of the best
    evaluation (its "score", higher is better) at the end.

    `collate(list_of_examples) -> batch dict of tensors`; `loss_fn(model, batch) -> scalar`;
    `evaluate(model) -> {"score": float, ...}`; `on_step(step, epoch)` runs before each
    optimiser step's forward passes (layer schedules use it). `parameters` defaults to the
    parameters that require grad when training starts. `checkpoint_dir` (outside the job's
    outputs) makes the run resumable; the caller removes it once its outputs are written.
    `identity` (xlt.core.checkpoint.run_identity: the caller's model, loss settings and input
    files) keys the checkpoint together with `args`: a checkpoint of another run is discarded.
    `initial_score`: the caller's evaluation of the parameters before training (its step 0); they
    then compete for best as step 0, so a run whose evaluations only get worse keeps them.
    """
    if not examples:
        raise XltError("no training examples: check the training dataset and its language/split")
    if args.batch_size < 1 or not 1 <= args.grad_accum <= args.batch_size:
        raise XltError(
            f"batch_size {args.batch_size}, grad_accum {args.grad_accum}: grad_accum splits each batch "
            "into micro-batches, so use 1 <= grad_accum <= batch_size"
        )
    seed_everything(args.seed)
    device = pick_device(args.device)
    model.to(device)
    params = list(parameters) if parameters is not None else [p for p in model.parameters() if p.requires_grad]
    if not params:
        raise XltError("nothing to train: every parameter is frozen")
    optimizer = _optimizer(model, params, args, device)
    total = total_optimizer_steps(len(examples), args)
    scheduler = lr_schedule(optimizer, args.schedule, warmup_steps(args, total), total)
    amp_dtype, why = autocast_dtype(args.precision, device)
    log.info("precision: %s", why)
    # fp16 needs loss scaling against underflowing gradients; disabled, the scaler passes everything through
    scaler = torch.amp.GradScaler(device.type, enabled=amp_dtype is torch.float16)
    eval_every = args.eval_every or steps_per_epoch(len(examples), args)
    lengths = example_lengths(examples) if args.length_bucketing else None
    if args.compile:
        loss_fn = compiled_loss(loss_fn, model)

    result = TrainResult(
        steps=0, best_step=0, best_score=None, device=str(device), precision=precision_label(amp_dtype)
    )
    best_state: dict | None = None
    started = time.time()
    seen = 0
    step, epoch, position, running, running_n = 0, 0, 0, 0.0, 0
    elapsed_before = 0.0
    # the run a checkpoint belongs to: resuming another run's state would silently mix the two
    if checkpoint_dir is not None:
        identity = with_settings(
            identity,
            train_args={k: v for k, v in asdict(args).items() if k not in NOT_IN_RUN_KEY},
            loop={
                "version": LOOP_VERSION,
                "examples": len(examples),
                "total_steps": total,
                "parameters": len(params),
                "parameter_elements": sum(p.numel() for p in params),
                "precision": result.precision,
            },
        )
    state = load_checkpoint(checkpoint_dir, identity=identity) if checkpoint_dir is not None else None
    if state is not None:
        restore(state, model, optimizer, scheduler)
        step, epoch, position = state["step"], state["epoch"], state["position"]
        extra = state["extra"]
        result.history, result.best_score, result.best_step = extra["history"], extra["best_score"], extra["best_step"]
        if extra["best_params"] is not None:
            best_state = {id(p): t for p, t in zip(params, extra["best_params"])}
        seen, running, running_n, elapsed_before = (
            extra["seen"],
            extra["running"],
            extra["running_n"],
            extra["elapsed_s"],
        )
        result.curve = extra.get("curve", [])
        if extra.get("scaler"):
            scaler.load_state_dict(extra["scaler"])
    elif initial_score is not None:
        # (a resumed run's best, step 0 included, came with its checkpoint)
        result.best_score, result.best_step = initial_score, 0
        best_state = {id(p): p.detach().to("cpu", copy=True) for p in params}
    model.train()

    def batches():
        # (epoch, position) is where the next batch starts, so a checkpoint can resume mid-epoch
        nonlocal epoch, position
        while True:
            order = epoch_order(len(examples), args.seed, epoch)
            if lengths is not None:
                # bucketed batches are consecutive batch_size slices of this order, so resuming at
                # `position` works as without bucketing
                order = bucketed_order(order, lengths, args.batch_size, args.seed, epoch)
            while position < len(order):
                chunk = order[position : position + args.batch_size]
                position += len(chunk)
                yield [examples[i] for i in chunk]
            epoch, position = epoch + 1, 0

    def checkpoint() -> None:
        save_checkpoint(
            checkpoint_dir,
            step,
            model,
            optimizer,
            scheduler,
            epoch=epoch,
            position=position,
            order_seed=args.seed,
            identity=identity,
            extra={
                "history": result.history,
                "best_score": result.best_score,
                "best_step": result.best_step,
                "best_params": [best_state[id(p)] for p in params] if best_state is not None else None,
                "seen": seen,
                "running": running,
                "running_n": running_n,
                "curve": result.curve,
                "elapsed_s": elapsed_before + time.time() - started,
                "scaler": scaler.state_dict() if scaler.is_enabled() else None,
            },
        )

    stream = batches()
    bar = console.progress_bar(total, initial=step, desc="train")
    step_at_start, seen_at_start = step, seen
    # SIGTERM/SIGUSR1 (SLURM's time limit, preemption) become a checkpoint and a clean exit
    with GracefulStop() if checkpoint_dir is not None else contextlib.nullcontext() as stop:
        while step < total:
            if on_step is not None:
                # the generator moves to the next epoch only when that epoch's first batch is
                # drawn; on_step gets the epoch of the batches this step is about to consume
                on_step(step, epoch + (position >= len(examples)))
            chunk = next(stream)
            step_loss = 0.0
            for part in micro_batches(chunk, args.grad_accum):
                # a micro-batch's mean loss weighs its share of the batch's examples: the sum is
                # the whole batch's mean loss (also for a short last batch, whose parts are shorter)
                share = len(part) / len(chunk)
                batch = {k: v.to(device) if torch.is_tensor(v) else v for k, v in collate(part).items()}
                with torch.autocast(
                    device_type=device.type, dtype=amp_dtype or torch.bfloat16, enabled=amp_dtype is not None
                ):
                    loss = loss_fn(model, batch)
                if not torch.isfinite(loss):
                    raise TrainingDiverged(
                        f"loss is {loss.item()} at step {step} (epoch {epoch}); lower the learning rate "
                        f"(now {args.lr}) or check the data; no outputs were written for this run"
                    )
                scaler.scale(loss * share).backward()
                step_loss += loss.item() * share
                seen += len(part)
            running += step_loss
            running_n += 1
            if args.max_grad_norm > 0:
                scaler.unscale_(optimizer)  # clip the true gradient, not the scaled one
                torch.nn.utils.clip_grad_norm_(params, args.max_grad_norm)
            scaler.step(optimizer)  # skips the step when fp16 gradients overflowed
            scaler.update()
            scheduler.step()
            optimizer.zero_grad(set_to_none=True)
            step += 1
            faults.reached("step")  # the kill sweep's hook; nothing without XLT_FAULT

            bar.update(1)
            logged = step % args.log_every == 0 or step == total
            evaluated = evaluate is not None and (step % eval_every == 0 or step == total)
            if logged or evaluated:
                result.curve.append(
                    {
                        "step": step,
                        "loss": running / max(1, running_n),
                        "lr": scheduler.get_last_lr()[0],
                        "dev_score": None,
                    }
                )
            if logged:
                # rates over this process's steps: a resumed run's earlier time says nothing about this device
                session_s = max(time.time() - started, 1e-9)
                log.info(
                    console.progress_line(
                        step,
                        total,
                        running / running_n,
                        scheduler.get_last_lr()[0],
                        (seen - seen_at_start) / session_s,
                        elapsed_before + session_s,
                        (total - step) * session_s / (step - step_at_start),
                    )
                )
            if evaluated:
                metrics = evaluate(model)
                result.curve[-1]["dev_score"] = metrics["score"]
                model.train()
                entry = {"step": step, "loss": running / max(1, running_n), **metrics}
                result.history.append(entry)
                log.info(
                    "eval step %d: %s",
                    step,
                    {
                        k: round(v, 4) if isinstance(v, float) else v
                        for k, v in metrics.items()
                        if not isinstance(v, (list, dict))
                    },
                )  # scalars; records stay in history
                if result.best_score is None or metrics["score"] > result.best_score:
                    result.best_score, result.best_step = metrics["score"], step
                    # frozen parameters never change, so only the trainable ones need a copy
                    best_state = {id(p): p.detach().to("cpu", copy=True) for p in params}
            if step % args.log_every == 0:
                running, running_n = 0.0, 0
            # (a signal after the last step lets the run finish: its outputs come next)
            if checkpoint_dir is not None and step < total:
                if stop.requested or (args.checkpoint_every and step % args.checkpoint_every == 0):
                    checkpoint()
                if stop.requested:
                    log.warning(
                        "stopped at step %d/%d on a signal; rerun to resume from %s", step, total, checkpoint_dir
                    )
                    stop.exit()

    bar.close()
    if best_state is not None and result.best_step != step:
        with torch.no_grad():
            for p in params:
                p.copy_(best_state[id(p)].to(p.device))
        log.info("restored best evaluation from step %d (score %.4f)", result.best_step, result.best_score)
    result.steps = step
    result.wall_s = elapsed_before + time.time() - started
    result.samples_per_s = seen / max(result.wall_s, 1e-9)
    return result


def result_meta(result: TrainResult, args: TrainArgs) -> dict:
    return {
        "train": asdict(args),
        "effective_batch": effective_batch(args),
        "steps": result.steps,
        "best_step": result.best_step,
        "best_dev_score": result.best_score,
        "train_wall_s": round(result.wall_s, 3),
        "samples_per_s": round(result.samples_per_s, 2),
        "device": result.device,
        "precision": result.precision,
    }
