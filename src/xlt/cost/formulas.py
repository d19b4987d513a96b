"""The plan's formulas, each written once (xlt.cost.estimate prices a job with them, xlt.cost.profile
fits its rates with them, a family may plan its budgets with `optimizer_steps`). Their
constants and where those come from: xlt.cost.constants."""

from __future__ import annotations

import math

from xlt.cost.constants import value

FORWARD = value("forward_flops_per_param_token")
BACKWARD = value("backward_flops_per_param_token")


def encoder_params(hidden: int, layers: float) -> float:
    """Parameters of `layers` encoder layers of width `hidden` that run as matrix products (the
    embedding lookup is none)."""
    return value("layer_params_per_hidden_squared") * hidden * hidden * layers


def vocabulary_head_params(vocab: int, hidden: int) -> int:
    """A masked LM's head: the transform (hidden x hidden) and the projection onto the vocabulary."""
    return vocab * hidden + hidden * hidden


def training_flops(params: float, trainable: float, *tokens: float, frozen_forward: bool = True) -> float:
    """FLOPs of training the tokens that `tokens` multiply to (steps x examples, tokens an example):
    the forward through `params` and the backward through the `trainable` ones (frozen layers get
    no backward pass). Without `frozen_forward` the frozen layers do not run at all (their states
    come from a frozen-prefix cache): forward and backward of the trainable ones only."""
    flops = FORWARD * params + BACKWARD * trainable if frozen_forward else (FORWARD + BACKWARD) * trainable
    for count in tokens:
        flops *= count
    return flops


def forward_flops(params: float, *tokens: float) -> float:
    """FLOPs of a forward pass through `params` of the tokens that `tokens` multiply to (examples,
    tokens an example: evaluation, a cache pass)."""
    flops = FORWARD * params
    for count in tokens:
        flops *= count
    return flops


def head_training_flops(head_params: float, share: float, tokens: float, weight_gradient: bool) -> float:
    """FLOPs of a masked LM's vocabulary head over `tokens` training tokens, at the `share` of the
    positions it projects: forward and the backward to its input, and its (tied) weight's own
    gradient only where the embedding trains (`weight_gradient`)."""
    to_input = BACKWARD // 2
    passes = FORWARD + to_input + (BACKWARD - to_input if weight_gradient else 0)
    return passes * head_params * share * tokens


def optimizer_steps(train_rows: int, epochs: float, max_steps: int, batch_size: int) -> int:
    """Optimiser steps of a training run, as xlt.core.training.total_optimizer_steps counts them
    (not imported: planning stays free of torch): one batch of `batch_size` per step, however
    --grad-accum splits it."""
    if max_steps > 0:
        return max_steps
    return max(1, math.ceil(math.ceil(train_rows / batch_size) * epochs))


def evaluations(steps: int, eval_every: int, train_rows: int, batch_size: int) -> int:
    """How often xlt.core.training.train evaluates: every `eval_every` steps (0: once an epoch) and after the last."""
    every = eval_every or math.ceil(max(train_rows, 1) / batch_size)
    return steps // every + (1 if steps % every else 0)


def batches(rows: int, batch_size: int) -> int:
    return math.ceil(rows / batch_size)


def memory_bytes(
    all_params: float, held: float, batch: int, max_length: int, hidden: int, layers: int, trains: bool
) -> float:
    """Peak accelerator memory of a job: fp32 weights of `all_params`, a gradient and AdamW's two
    moments for the `held` trained parameters, and the activations of a batch (a share of them
    where nothing trains)."""
    heads = max(hidden // value("head_width"), 1)
    activations = (
        value("activation_bytes_per_token_hidden") * batch * max_length * hidden
        + value("attention_bytes_per_head_token_squared") * heads * max_length**2 * batch
    ) * layers
    share = 1 if trains else value("eval_activation_share")
    return value("weight_bytes") * all_params + value("trained_param_bytes") * held + activations * share
