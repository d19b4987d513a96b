"""The training loop's state (xlt.core.training.train) and how it is checkpointed and restored.

`LoopState` holds everything the loop changes as it runs: where it is (step, epoch, position in
the epoch's order), the running loss since the last progress line, the examples seen, the
evaluations so far and the best parameters. A checkpoint (xlt.core.checkpoint) stores it with the
model, optimiser, scheduler and gradient-scaler states, so a resumed run goes on from the same
state; `run_key` is what a checkpoint must match to be resumed.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Sequence

import torch

from xlt.core.checkpoint import load_checkpoint, restore, save_checkpoint, with_settings
from xlt.core.train_args import TrainArgs

# where a run computes and how often it saves do not change what it computes, so they may differ
# on a resume (a retried job may land on another GPU); every other TrainArgs field keys the checkpoint
NOT_IN_RUN_KEY = ("device", "checkpoint_every")
# bumped when the loop computes something else for the same settings, so an older checkpoint is
# not resumed under new rules (2: a batch is split into micro-batches; transformers' warm-up)
LOOP_VERSION = 2


@dataclass
class LoopState:
    """What the loop changes as it runs; `step` counts optimiser steps done."""

    step: int = 0
    epoch: int = 0
    position: int = 0  # where the next batch starts in the epoch's order
    seen: int = 0  # training examples consumed, over every session of the run
    running: float = 0.0  # summed step losses since the last progress line
    running_n: int = 0
    unread: list = field(default_factory=list)  # [(step, epoch, [(loss on the device, share)])] not yet in running
    grad_norms: list = field(default_factory=list)  # gradient norms (on the device) since the last progress line
    elapsed_before: float = 0.0  # seconds spent by the run's earlier sessions (a resumed run)
    best_score: float | None = None
    best_step: int = 0
    best_params: list | None = None  # CPU copies of the trainable parameters at the best evaluation
    history: list = field(default_factory=list)  # [{"step", "loss", **eval metrics}]
    curve: list = field(default_factory=list)  # [{"step", "loss", "lr", "dev_score"}]
    started: float = field(default_factory=time.time)  # this session's start

    @property
    def mean_loss(self) -> float:
        """The mean step loss since the last progress line."""
        return self.running / max(1, self.running_n)

    def keep_best(self, params: Sequence[torch.nn.Parameter]) -> None:
        # frozen parameters never change, so only the trainable ones need a copy
        self.best_params = [p.detach().to("cpu", copy=True) for p in params]

    def elapsed(self) -> float:
        return self.elapsed_before + time.time() - self.started


def run_key(identity: dict | None, args: TrainArgs, examples: int, total: int, params: list, precision: str) -> dict:
    """The caller's `identity` plus every setting of the loop that changes what it computes: a
    checkpoint with another key belongs to another run (resuming it would mix the two)."""
    return with_settings(
        identity,
        train_args={k: v for k, v in asdict(args).items() if k not in NOT_IN_RUN_KEY},
        loop={
            "version": LOOP_VERSION,
            "examples": examples,
            "total_steps": total,
            "parameters": len(params),
            "parameter_elements": sum(p.numel() for p in params),
            "precision": precision,
        },
    )


def restore_state(checkpoint_dir: str | Path, identity: dict, model, optimizer, scheduler, scaler) -> LoopState | None:
    """The state of the run's checkpoint, with model, optimiser, scheduler and scaler restored
    from it; None when there is none of this run (training starts over)."""
    saved = load_checkpoint(checkpoint_dir, identity=identity)
    if saved is None:
        return None
    restore(saved, model, optimizer, scheduler)
    extra = saved["extra"]
    if extra.get("scaler"):
        scaler.load_state_dict(extra["scaler"])
    return LoopState(
        step=saved["step"],
        epoch=saved["epoch"],
        position=saved["position"],
        seen=extra["seen"],
        running=extra["running"],
        running_n=extra["running_n"],
        elapsed_before=extra["elapsed_s"],
        best_score=extra["best_score"],
        best_step=extra["best_step"],
        best_params=extra["best_params"],
        history=extra["history"],
        curve=extra.get("curve", []),
    )


def save_state(
    checkpoint_dir: str | Path, state: LoopState, identity: dict, seed: int, model, optimizer, scheduler, scaler
) -> None:
    save_checkpoint(
        checkpoint_dir,
        state.step,
        model,
        optimizer,
        scheduler,
        epoch=state.epoch,
        position=state.position,
        order_seed=seed,
        identity=identity,
        extra={
            "history": state.history,
            "best_score": state.best_score,
            "best_step": state.best_step,
            "best_params": state.best_params,
            "seen": state.seen,
            "running": state.running,
            "running_n": state.running_n,
            "curve": state.curve,
            "elapsed_s": state.elapsed(),
            "scaler": scaler.state_dict() if scaler.is_enabled() else None,
        },
    )
