"""Tolerances of the `numerics` tests, which compare two code paths whose float sums may run in another
order (another padding, batching, kernel or compiled graph): first-order bounds from the arithmetic.

The derivations are in the docstrings; the measured differences are in the tests' comments."""

from __future__ import annotations

import torch

FP32_UNIT_ROUNDOFF = 2.0**-24  # a rounded fp32 operation is within this of its exact result, relatively
BF16_SPACING = 2.0**-8  # relative distance of neighbouring bf16 numbers (8 significant bits)


def summation_order_bound(stages: int, longest_sum: int, bf16: bool = False) -> float:
    """How far two summation orders of a network's forward pass may leave an activation, relative to the
    activations' scale (the largest |value| LayerNorm leaves, or the largest |input| of a stage).

    A sum of n terms is within n*u of the exact sum relative to its terms (Higham's gamma_n), so two
    orders differ by at most 2*n*u; LayerNorm renormalises after each layer, so each stage (a layer, a
    pooling, a head) adds at most that, to first order. Under bf16 autocast a sum is rounded to bf16 after
    it, so an fp32 difference can move it by one bf16 spacing: each stage adds up to BF16_SPACING."""
    per_stage = BF16_SPACING if bf16 else 2 * longest_sum * FP32_UNIT_ROUNDOFF
    return stages * per_stage


def forward_bound(config, stages: int | None = None, tokens: int = 0) -> float:
    """summation_order_bound for a transformers BERT-like or DistilBERT config: every layer (or the first
    `stages`) and the classifier head as stages; the longest sum is the feed-forward's inner size, the
    hidden size or the `tokens` attention sums over, whichever is longest."""
    layers = config.num_hidden_layers if hasattr(config, "num_hidden_layers") else config.n_layers
    inner = config.intermediate_size if hasattr(config, "intermediate_size") else config.hidden_dim
    hidden = config.hidden_size if hasattr(config, "hidden_size") else config.dim
    return summation_order_bound(layers + 1 if stages is None else stages, max(inner, hidden, tokens))


def head_gain(model) -> float:
    """How much a classification head can grow an error of its input hidden states, elementwise: the
    product of its linear layers' infinity norms (largest sum of |w| over a row); tanh and means do not
    grow it. A head of 0.02-scale weights over 32 inputs shrinks it (about 0.5 per linear layer)."""
    gain = 1.0
    for name, module in model.named_modules():
        if isinstance(module, torch.nn.Linear) and ("pooler" in name or "classifier" in name):
            gain *= module.weight.detach().abs().sum(dim=1).max().item()
    return gain


def adamw_drift(steps: int, lr: float, gradient_error: float) -> tuple[float, float]:
    """(atol, rtol) for parameters two AdamW runs reach whose gradients differ relatively by
    `gradient_error` (e.g. summation_order_bound over the forward and backward stages).

    An AdamW step moves a weight by lr * m/(sqrt(v) + eps), a ratio with |m/sqrt(v)| <~ 1 over a few
    steps; m moves relatively by the gradient's error and sqrt(v) by half of it, so the step moves by at
    most lr * 2 * gradient_error, for gradients far above their own rounding and Adam's eps. Each step
    also rounds the weight (decay, then the update: 2 operations, u each, in each run): atol sums the
    first over the steps, rtol the second."""
    return steps * lr * 2 * gradient_error, steps * 2 * 2 * FP32_UNIT_ROUNDOFF
