"""One training loop for every family, in the manner of the Hugging Face examples.

AdamW with warm-up and a linear, constant or cosine schedule, gradient clipping and accumulation, a
seeded data order, evaluation every K optimiser steps with best-checkpoint selection, bf16 autocast
on CUDA devices that support it (fp16 with a gradient scaler on those that do not, fp32 on CPU), a
NaN/inf guard (on losses read every 32 steps: xlt.core.train_step), and a progress line (loss,
learning rate, samples/s, elapsed, ETA) every `log_every` steps on stderr, with a progress bar at
a terminal. A family supplies the model, its objective (examples, a
collate function, a loss function) and (optionally) an evaluator. `train` sets the loop up, then
runs one optimiser step at a time (xlt.core.train_step) on a `LoopState` (xlt.core.train_state),
evaluating and checkpointing between steps.
Gradient accumulation splits each batch of `batch_size` examples into `grad_accum` micro-batches
and weights each micro-batch's loss by its share of the batch's examples, so for a loss that is a
mean over examples an optimiser step sees the unsplit batch's gradient (up to float rounding;
dropout aside): only memory changes. A loss that is not a mean over the batch's examples (in-batch
negatives, a mean over tokens) is not the same split; the dual encoder refuses grad_accum > 1.
The last batch of an epoch is trained even when it is short (transformers.Trainer's default,
dataloader_drop_last=False); its loss is the mean over the examples it has, like any batch's.
Optional: length bucketing (`length_bucketing`: batches of similar length, so the collate's
dynamic padding pads less; see xlt.core.bucketing), torch.compile of the model (`compile`) and, on
CUDA, steps as CUDA graphs (`graphs`: xlt.core.cuda_graphs).

With a `Resumable` checkpoint directory, the loop is resumable (xlt.core.checkpoint): it saves every
`checkpoint_every` steps and when SLURM signals (SIGTERM/SIGUSR1), then exits with
EXIT_PREEMPTED; a rerun continues from the checkpoint to the same result as an
uninterrupted run. Only a rerun of the same run: the checkpoint is keyed on the caller's
`identity` (its model, loss settings and input files: xlt.core.checkpoint.run_identity) plus
every TrainArgs setting but `device` and `checkpoint_every` and the loop's own counts; a
checkpoint with another key is discarded (one log line says what changed) and training starts
over. What `train` takes besides the model and its TrainArgs comes in small groups
(xlt.core.train_inputs): the objective, the dev set's selection, the checkpoint, a layer schedule.
"""

from __future__ import annotations

import contextlib
import logging
import math
import random
import time
from dataclasses import asdict, dataclass, field
from typing import Callable, Sequence

import numpy as np
import torch

from xlt.core import console, cuda_graphs, faults, monitor
from xlt.core.bucketing import bucketed_order, example_lengths
from xlt.core.checkpoint import GracefulStop
from xlt.core.errors import XltError
from xlt.core.models import pick_device
from xlt.core.schedules import lr_schedule
from xlt.core.train_args import PRECISIONS, TrainArgs, precision_label
from xlt.core.train_inputs import DevSelection, LayerSchedule, Objective, Resumable
from xlt.core.train_state import LoopState, restore_state, run_key, save_state
from xlt.core.train_step import Loop, build_optimizer, compile_options, compiled_loss, optimiser_step, read_losses

log = logging.getLogger("xlt.core.training")


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


def warmup_steps(args: TrainArgs, total: int) -> int:
    """Warm-up steps: `warmup_steps` when set (> 0), else `warmup_ratio` of the run's steps. A
    warm-up in steps as long as the run or longer (the peak never reached) is refused here, where
    a run counted in epochs first knows its length (xlt.core.config_numbers checks max_steps)."""
    if args.warmup_steps >= total > 0:
        raise XltError(
            f"--warmup-steps {args.warmup_steps} is not below the run's {total} optimiser steps "
            f"(--epochs {args.epochs:g}, --max-steps {args.max_steps}); set it within [0, {total - 1}] "
            f"(0: --warmup-ratio applies)"
        )
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


def batches(examples: Sequence, lengths: list | None, args: TrainArgs, state: LoopState):
    """The batches from (state.epoch, state.position) on, moving both along, so a checkpoint can
    resume mid-epoch."""
    while True:
        order = epoch_order(len(examples), args.seed, state.epoch)
        if lengths is not None:
            # bucketed batches are consecutive batch_size slices of this order, so resuming at
            # `position` works as without bucketing
            order = bucketed_order(order, lengths, args.batch_size, args.seed, state.epoch)
        while state.position < len(order):
            chunk = order[state.position : state.position + args.batch_size]
            state.position += len(chunk)
            yield [examples[i] for i in chunk]
        state.epoch, state.position = state.epoch + 1, 0


def current_lr(loop: Loop) -> float:
    """The learning rate of the last step, a float (graphs: capture keeps it in a device tensor,
    which the scheduler then reports: read here, at a progress line or an evaluation)."""
    return float(loop.scheduler.get_last_lr()[0])


def log_progress(loop: Loop, state: LoopState, session_start: tuple[int, int]) -> tuple[float, float, float]:
    """The progress line; rates count this process's steps only: a resumed run's earlier time says
    nothing about this device. `session_start`: (step, seen) when this process started. Returns the
    line's loss, learning rate and samples/s."""
    step, seen = session_start
    session_s = max(time.time() - state.started, 1e-9)
    loss, lr, rate = state.running / state.running_n, current_lr(loop), (state.seen - seen) / session_s
    eta = (loop.total - state.step) * session_s / (state.step - step)
    log.info(console.progress_line(state.step, loop.total, loss, lr, rate, state.elapsed_before + session_s, eta))
    return loss, lr, rate


def run_evaluation(loop: Loop, state: LoopState, evaluate: Callable[[torch.nn.Module], dict]) -> dict:
    """Evaluate at this step, record it in the history and the curve, and keep the parameters when
    they score best so far."""
    metrics = evaluate(loop.model)
    state.curve[-1]["dev_score"] = metrics["score"]
    loop.model.train()
    state.history.append({"step": state.step, "loss": state.mean_loss, **metrics})
    scalars = {
        k: round(v, 4) if isinstance(v, float) else v for k, v in metrics.items() if not isinstance(v, (list, dict))
    }
    log.info("eval step %d: %s", state.step, scalars)  # scalars; records stay in history
    if state.best_score is None or metrics["score"] > state.best_score:
        state.best_score, state.best_step = metrics["score"], state.step
        state.keep_best(loop.params)
    return metrics


def mean_grad_norm(state: LoopState) -> float | None:
    """The mean gradient norm of the steps since the last progress line (None: the run does not clip,
    so nothing computed it)."""
    if not state.grad_norms:
        return None
    return torch.stack([norm.float() for norm in state.grad_norms]).mean().item()


def dev_loss(loop: Loop, examples: Sequence) -> float:
    """The training loss on `examples` (a mean over them), in eval mode without gradients; the
    random generators are restored after it (an MLM collate masks at random), so a run that
    measures it computes the same numbers as one that does not."""
    loop.model.eval()
    total, size = 0.0, loop.args.batch_size
    devices = [loop.device] if loop.device.type == "cuda" else []
    with torch.no_grad(), torch.random.fork_rng(devices=devices):
        for start in range(0, len(examples), size):
            chunk = [examples[i] for i in range(start, min(start + size, len(examples)))]  # (a Dataset too)
            batch = {k: v.to(loop.device) if torch.is_tensor(v) else v for k, v in loop.collate(chunk).items()}
            with torch.autocast(
                device_type=loop.device.type, dtype=loop.amp_dtype or torch.bfloat16, enabled=loop.amp_dtype is not None
            ):
                total += loop.loss_fn(loop.model, batch).float().item() * len(chunk)
    loop.model.train()
    return total / len(examples)


def train(
    model: torch.nn.Module,
    objective: Objective,
    args: TrainArgs,
    dev: DevSelection | None = None,
    checkpoint: Resumable | None = None,
    layers: LayerSchedule | None = None,
) -> TrainResult:
    """Train `model` in place on `objective` under `args`. With `dev`, evaluate and restore the
    parameters of the best evaluation at the end; with `checkpoint`, resumable; with `layers`, the
    optimiser's parameters and a hook before every step (xlt.core.train_inputs says what each means).
    """
    examples = objective.examples
    evaluate = dev.evaluate if dev is not None else None
    checkpoint_dir = checkpoint.directory if checkpoint is not None else None
    on_step = layers.on_step if layers is not None else None
    if not examples:
        raise XltError("no training examples: check the training dataset and its language/split")
    if args.batch_size < 1 or not 1 <= args.grad_accum <= args.batch_size:
        raise XltError(
            f"batch_size {args.batch_size}, grad_accum {args.grad_accum}: grad_accum splits each batch "
            "into micro-batches, so use 1 <= grad_accum <= batch_size"
        )
    loop = _setup(model, objective, args, layers.parameters if layers is not None else None)
    eval_every = args.eval_every or steps_per_epoch(len(examples), args)
    lengths = example_lengths(examples) if args.length_bucketing else None
    precision = precision_label(loop.amp_dtype)
    state = None
    if checkpoint_dir is not None:
        key = run_key(checkpoint.identity, args, len(examples), loop.total, loop.params, precision)
        state = restore_state(checkpoint_dir, key, model, loop.optimizer, loop.scheduler, loop.scaler)
    if state is None:
        state = LoopState()
        if dev is not None and dev.initial_score is not None:
            # (a resumed run's best, step 0 included, came with its checkpoint)
            state.best_score, state.best_step = dev.initial_score, 0
            state.keep_best(loop.params)
    model.train()

    stream = batches(examples, lengths, args, state)
    board = monitor.board(state.step)  # None unless the verb turned monitoring on (xlt.core.monitor)
    bar = console.progress_bar(loop.total, initial=state.step, desc="train")
    session_start = (state.step, state.seen)
    # SIGTERM/SIGUSR1 (SLURM's time limit, preemption) become a checkpoint and a clean exit
    with GracefulStop() if checkpoint_dir is not None else contextlib.nullcontext() as stop:
        while state.step < loop.total:
            if on_step is not None:
                # the generator moves to the next epoch only when that epoch's first batch is
                # drawn; on_step gets the epoch of the batches this step is about to consume
                on_step(state.step, state.epoch + (state.position >= len(examples)))
            optimiser_step(loop, state, next(stream))
            faults.reached("step")  # the kill sweep's hook; nothing without XLT_FAULT

            bar.update(1)
            step = state.step
            logged = step % args.log_every == 0 or step == loop.total
            evaluated = evaluate is not None and (step % eval_every == 0 or step == loop.total)
            if logged or evaluated:
                read_losses(state, args.lr)
            if logged or evaluated:
                lr = current_lr(loop)
                state.curve.append({"step": step, "loss": state.mean_loss, "lr": lr, "dev_score": None})
            if logged:
                progress = log_progress(loop, state, session_start)
                if board is not None:
                    board.progress(step, *progress, grad_norm=mean_grad_norm(state))
            if evaluated:
                metrics = run_evaluation(loop, state, evaluate)
                if board is not None:
                    loss = dev_loss(loop, dev.loss_examples) if dev.loss_examples else None
                    board.evaluation(step, metrics, best_score=state.best_score, loss=loss)
            if step % args.log_every == 0:
                state.running, state.running_n = 0.0, 0
                state.grad_norms.clear()
            # (a signal after the last step lets the run finish: its outputs come next)
            if checkpoint_dir is not None and step < loop.total:
                if stop.requested or (args.checkpoint_every and step % args.checkpoint_every == 0):
                    read_losses(state, args.lr)
                    save_state(
                        checkpoint_dir, state, key, args.seed, model, loop.optimizer, loop.scheduler, loop.scaler
                    )
                if stop.requested:
                    log.warning(
                        "stopped at step %d/%d on a signal; rerun to resume from %s", step, loop.total, checkpoint_dir
                    )
                    stop.exit()

    bar.close()
    if board is not None:
        board.close(state.step)
    if state.best_params is not None and state.best_step != state.step:
        with torch.no_grad():
            for p, best in zip(loop.params, state.best_params):
                p.copy_(best.to(p.device))
        log.info("restored best evaluation from step %d (score %.4f)", state.best_step, state.best_score)
    wall_s = state.elapsed()
    return TrainResult(
        steps=state.step,
        best_step=state.best_step,
        best_score=state.best_score,
        history=state.history,
        wall_s=wall_s,
        device=str(loop.device),
        samples_per_s=state.seen / max(wall_s, 1e-9),
        precision=precision,
        curve=state.curve,
    )


def _setup(model, objective: Objective, args: TrainArgs, parameters) -> Loop:
    """Seed, place the model and build its optimiser, schedule and gradient scaler (in this order:
    the seeded random draws a run makes do not move)."""
    seed_everything(args.seed)
    device = pick_device(args.device)
    model.to(device)
    params = list(parameters) if parameters is not None else [p for p in model.parameters() if p.requires_grad]
    if not params:
        raise XltError("nothing to train: every parameter is frozen")
    amp_dtype, why = autocast_dtype(args.precision, device)
    cuda_graphs.check(args.graphs, args.compile, device, args.grad_accum, amp_dtype)
    optimizer = build_optimizer(model, params, args, device, capturable=args.graphs == "capture")
    total = total_optimizer_steps(len(objective.examples), args)
    scheduler = lr_schedule(optimizer, args.schedule, warmup_steps(args, total), total)
    log.info("precision: %s", why)
    # fp16 needs loss scaling against underflowing gradients; disabled, the scaler passes everything through
    scaler = torch.amp.GradScaler(device.type, enabled=amp_dtype is torch.float16)
    loss_fn = objective.loss_fn
    if args.compile or args.graphs == "compile":
        loss_fn = compiled_loss(loss_fn, model, compile_options(args.graphs))
    loop = Loop(model, params, optimizer, scheduler, scaler, device, amp_dtype, objective.collate, loss_fn, args, total)
    if args.graphs == "capture":
        loop.graphs = cuda_graphs.StepGraphs(model, params, optimizer, loss_fn, amp_dtype, args)
        cuda_graphs.register_forward(model)  # its classification evaluations too
        log.info("graphs: capture: a CUDA graph per batch shape, steps and evaluations (xlt.core.cuda_graphs)")
    return loop


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
