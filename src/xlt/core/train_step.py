"""One optimiser step of xlt.core.training.train: what the loop works with (`Loop`), the AdamW it
builds, the micro-batches a batch is split into for gradient accumulation, the compiled loss and the
guard against a loss that is not finite."""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass
from typing import Callable, Sequence

import torch

from xlt.core.cuda_graphs import StepGraphs
from xlt.core.errors import XltError
from xlt.core.train_args import TrainArgs
from xlt.core.train_state import LoopState

log = logging.getLogger(__name__)


@dataclass
class Loop:
    """What the loop works with and does not change: the model, what trains it and the settings."""

    model: torch.nn.Module
    params: list
    optimizer: torch.optim.Optimizer
    scheduler: torch.optim.lr_scheduler.LRScheduler
    scaler: torch.amp.GradScaler
    device: torch.device
    amp_dtype: torch.dtype | None
    collate: Callable[[list], dict]
    loss_fn: Callable[[torch.nn.Module, dict], torch.Tensor]
    args: TrainArgs
    total: int  # optimiser steps of the whole run
    graphs: StepGraphs | None = None  # graphs: capture's recorded steps (xlt.core.cuda_graphs)


class TrainingDiverged(XltError):
    pass


def build_optimizer(
    model: torch.nn.Module, params: Sequence[torch.nn.Parameter], args: TrainArgs, device, capturable: bool = False
) -> torch.optim.Optimizer:
    wanted = {id(p) for p in params}
    decay, no_decay = [], []
    for p in model.parameters():
        if id(p) not in wanted:
            continue
        # biases and LayerNorm weights are not decayed, as in BERT's original recipe
        (no_decay if p.ndim < 2 else decay).append(p)
    groups = [{"params": decay, "weight_decay": args.weight_decay}, {"params": no_decay, "weight_decay": 0.0}]
    # The fused kernel (CUDA; CPU since torch 2.4) is several times faster than the default foreach
    # one: 3.4x for the demo model's optimiser step on a CPU (BENCHMARKS.md), as transformers.Trainer
    # uses by default. A device or torch build without it gets the default implementation.
    # `capturable`: its step keeps its counters on the device, so a CUDA graph can record it.
    if capturable:
        return torch.optim.AdamW(groups, lr=args.lr, eps=args.adam_epsilon, fused=True, capturable=True)
    try:
        return torch.optim.AdamW(groups, lr=args.lr, eps=args.adam_epsilon, fused=True)
    except (RuntimeError, ValueError):
        log.info("no fused AdamW for %s in this torch build; using the default implementation", device)
        return torch.optim.AdamW(groups, lr=args.lr, eps=args.adam_epsilon)


def compile_options(graphs: str) -> dict:
    """torch.compile's arguments for a run's `graphs` setting (xlt.core.cuda_graphs). dynamic=True:
    every collate pads to its batch's longest example, so the sequence length (and the short last
    batch's size) changes from batch to batch; one graph with symbolic shapes serves them all, where
    static shapes would recompile per length (on a CUDA run padded to a multiple of 8 up to
    max_length / 8 compiles, each minutes cold: 124 s measured for one on an H200). (The other way,
    padding to a few fixed lengths, would change the inputs a compiled run sees against an eager one.)
    graphs: compile adds mode "reduce-overhead": CUDA graph trees record one graph per concrete
    shape of that one compiled graph."""
    if graphs == "compile":
        return {"dynamic": True, "mode": "reduce-overhead"}
    return {"dynamic": True}


def compiled_loss(loss_fn: Callable, model: torch.nn.Module, options: dict | None = None) -> Callable:
    """`loss_fn` with `model` replaced by torch.compile(model, **options) (compile_options): the
    compiled module shares the parameters, so the optimiser, evaluation and saving keep using the
    plain `model`. A ModuleDict (sbert's encoder and head) has no forward of its own: each of its
    modules is compiled, and the loss indexes them."""
    options = options or {"dynamic": True}
    if isinstance(model, torch.nn.ModuleDict):
        compiled = torch.nn.ModuleDict({name: torch.compile(module, **options) for name, module in model.items()})
    else:
        compiled = torch.compile(model, **options)
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


# Steps whose losses may wait on the device before they are read: reading one waits for the GPU
# to finish, which stops the host from queueing the next step's kernels meanwhile.
UNREAD_STEPS = 32


def optimiser_step(loop: Loop, state: LoopState, chunk: list) -> None:
    """One optimiser step on the batch `chunk`, split into `grad_accum` micro-batches. Nothing here
    waits for the device: batches are copied without a stream sync and the losses stay on the
    device until `read_losses` (at progress lines, evaluations, checkpoints, the end, and every
    UNREAD_STEPS steps)."""
    args, device = loop.args, loop.device
    if loop.graphs is not None:  # graphs: capture: forward, backward, clipping and AdamW in one replay
        batch = loop.collate(chunk)
        batch = {k: v.to(device, non_blocking=True) if torch.is_tensor(v) else v for k, v in batch.items()}
        state.unread.append((state.step, state.epoch, [(loop.graphs.step(batch), 1.0)]))
        state.seen += len(chunk)
        loop.scheduler.step()  # fills the learning rate tensor the graphs read
        state.step += 1
        if len(state.unread) >= UNREAD_STEPS:
            read_losses(state, args.lr)
        return
    if args.graphs == "compile":  # CUDA graph trees: a new step may reuse the last one's outputs
        torch.compiler.cudagraph_mark_step_begin()
    losses = []
    for part in micro_batches(chunk, args.grad_accum):
        # a micro-batch's mean loss weighs its share of the batch's examples: the sum is
        # the whole batch's mean loss (also for a short last batch, whose parts are shorter)
        share = len(part) / len(chunk)
        # host-to-device copies with non_blocking are safe from pageable memory (staged at once)
        batch = {k: v.to(device, non_blocking=True) if torch.is_tensor(v) else v for k, v in loop.collate(part).items()}
        with torch.autocast(
            device_type=device.type, dtype=loop.amp_dtype or torch.bfloat16, enabled=loop.amp_dtype is not None
        ):
            loss = loop.loss_fn(loop.model, batch)
        loop.scaler.scale(loss * share).backward()
        # a copy: a compiled model run through CUDA graphs reuses its output's memory at the next step
        losses.append((loss.detach().clone(), share))
        state.seen += len(part)
    state.unread.append((state.step, state.epoch, losses))
    if args.max_grad_norm > 0:
        loop.scaler.unscale_(loop.optimizer)  # clip the true gradient, not the scaled one
        # the norm before clipping, kept on the device until a progress line reads it (monitoring)
        state.grad_norms.append(torch.nn.utils.clip_grad_norm_(loop.params, args.max_grad_norm).detach())
    loop.scaler.step(loop.optimizer)  # skips the step when fp16 gradients overflowed
    loop.scaler.update()
    loop.scheduler.step()
    loop.optimizer.zero_grad(set_to_none=True)
    state.step += 1
    if len(state.unread) >= UNREAD_STEPS:
        read_losses(state, args.lr)


def read_losses(state: LoopState, lr: float) -> None:
    """Add the unread steps' losses to the running loss (one wait for the device), in step order
    and with the same float arithmetic as reading each at once; a loss that is not finite stops
    the run, naming its step."""
    if not state.unread:
        return
    values = iter(torch.stack([loss.float() for _, _, parts in state.unread for loss, _ in parts]).tolist())
    for step, epoch, parts in state.unread:
        step_loss = 0.0
        for _, share in parts:
            value = next(values)
            if not math.isfinite(value):
                raise TrainingDiverged(
                    f"loss is {value} at step {step} (epoch {epoch}); lower the learning rate (now {lr}) "
                    "or check the data; no outputs were written for this run"
                )
            step_loss += value * share
        state.running += step_loss
        state.running_n += 1
    state.unread.clear()
