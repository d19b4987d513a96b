"""Sentence vectors from token states: cls, mean or max over non-padding tokens."""

from __future__ import annotations

import torch

from xlt.core.choices import POOLING_MODES


def pool(hidden: torch.Tensor, attention_mask: torch.Tensor, mode: str) -> torch.Tensor:
    """hidden: (batch, seq, dim); attention_mask: (batch, seq) with 1 for real tokens."""
    if mode == "cls":
        return hidden[:, 0]
    mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
    if mode == "mean":
        return (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
    if mode == "max":
        # padding must never win the max, so it gets the most negative value of the dtype
        filled = hidden.masked_fill(mask == 0, torch.finfo(hidden.dtype).min)
        return filled.max(1).values
    raise ValueError(f"unknown pooling {mode!r}; choose one of {POOLING_MODES}")


class Pooling(torch.nn.Module):
    """Module form of `pool`, choosing the hidden-state layer as well.

    `layer` indexes `output.hidden_states`: 0 = embeddings, L = last layer; negative
    values count from the end (-1 last, -2 second-to-last).
    """

    def __init__(self, mode: str = "mean", layer: int = -1):
        super().__init__()
        if mode not in POOLING_MODES:
            raise ValueError(f"unknown pooling {mode!r}; choose one of {POOLING_MODES}")
        self.mode = mode
        self.layer = layer

    def forward(self, hidden_states: tuple[torch.Tensor, ...], attention_mask: torch.Tensor) -> torch.Tensor:
        return pool(hidden_states[self.layer], attention_mask, self.mode)
