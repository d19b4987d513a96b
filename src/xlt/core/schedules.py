"""The learning-rate schedules of xlt.core.training: warm-up, then linear decay, constant or cosine,
exactly as transformers' schedulers compute them (tests compare every step)."""

from __future__ import annotations

import math

import torch

from xlt.core.errors import XltError
from xlt.core.train_args import SCHEDULES


def lr_factor(kind: str, step: int, warmup_steps: int, total_steps: int) -> float:
    """The learning rate of optimiser step `step` (from 0) as a share of the peak: linear warm-up
    from 0 over `warmup_steps`, then linear decay to 0 (BERT's recipe), constant (LaBSE and many
    sentence-embedding recipes) or a half cosine down to 0. Exactly transformers'
    get_linear_schedule_with_warmup, get_constant_schedule_with_warmup and
    get_cosine_schedule_with_warmup: with warm-up, the first step's rate is 0 (step / warmup_steps),
    and the peak is reached at step `warmup_steps`."""
    if kind not in SCHEDULES:
        raise XltError(f"unknown learning-rate schedule {kind!r}; choose one of {', '.join(SCHEDULES)}")
    if step < warmup_steps:
        return step / max(1, warmup_steps)
    if kind == "constant":
        return 1.0
    if kind == "linear":
        return max(0.0, (total_steps - step) / max(1, total_steps - warmup_steps))
    progress = min(1.0, (step - warmup_steps) / max(1, total_steps - warmup_steps))
    return max(0.0, 0.5 * (1.0 + math.cos(math.pi * progress)))


def lr_schedule(optimizer, kind: str, warmup_steps: int, total_steps: int):
    return torch.optim.lr_scheduler.LambdaLR(optimizer, lambda step: lr_factor(kind, step, warmup_steps, total_steps))


def linear_schedule(optimizer, warmup_steps: int, total_steps: int):
    return lr_schedule(optimizer, "linear", warmup_steps, total_steps)
