"""Bidirectional additive-margin softmax over in-batch negatives (LaBSE's dual-encoder loss).

For a batch of B translation pairs with L2-normalised embeddings x_i (source) and y_i
(target), the score matrix is

    S[i, j] = scale * (cos(x_i, y_j) - margin * [i == j])

so the margin is taken off the positive pairs only, before scaling. Row i of S is a
softmax over all targets for source i (direction x->y); column j is a softmax over all
sources for target j (direction y->x). Each direction is the batch mean of
``cross_entropy(S, arange(B))`` (rows) or ``cross_entropy(S.T, arange(B))`` (columns).

``symmetric`` combines the directions:
  "sum"   L(x->y) + L(y->x)          (LaBSE's bidirectional loss)
  "mean"  (L(x->y) + L(y->x)) / 2    (sentence-transformers' symmetric MNRL convention)
  "none"  L(x->y) only               (one-directional ranking loss)

LaBSE settings: scale 10, margin 0.3; with margin 0 this is plain in-batch softmax
cross-entropy (multiple-negatives ranking loss).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from xlt.core.choices import SYMMETRIC_MODES


def additive_margin_scores(x: torch.Tensor, y: torch.Tensor, scale: float, margin: float) -> torch.Tensor:
    """scale * (x @ y.T - margin * I): (B, B) logits; rows are sources, columns targets."""
    if x.ndim != 2 or y.ndim != 2 or x.shape != y.shape:
        raise ValueError(
            f"x and y must both be (batch, dim) with the same shape, got {tuple(x.shape)} and {tuple(y.shape)}"
        )
    cosine = x @ y.T
    eye = torch.eye(cosine.shape[0], device=cosine.device, dtype=cosine.dtype)
    return scale * (cosine - margin * eye)


def additive_margin_loss(
    x: torch.Tensor, y: torch.Tensor, scale: float = 10.0, margin: float = 0.3, symmetric: str = "sum"
) -> torch.Tensor:
    """Additive-margin softmax loss for L2-normalised x (B, d) and y (B, d); x_i and y_i are a pair."""
    if symmetric not in SYMMETRIC_MODES:
        raise ValueError(f"unknown symmetric mode {symmetric!r}; choose one of {SYMMETRIC_MODES}")
    scores = additive_margin_scores(x, y, scale, margin)
    labels = torch.arange(scores.shape[0], device=scores.device)
    forward = F.cross_entropy(scores, labels)
    if symmetric == "none":
        return forward
    backward = F.cross_entropy(scores.T, labels)
    total = forward + backward
    return total if symmetric == "sum" else total / 2


class AdditiveMarginSoftmaxLoss(nn.Module):
    """Module form of `additive_margin_loss`, called as ``loss(x, y)`` on sentence embeddings.

    ``normalize=True`` L2-normalises the inputs first (LaBSE scores with cosine), so raw
    pooled encoder outputs can be passed in directly; set it False when the caller
    already normalised.
    """

    def __init__(self, scale: float = 10.0, margin: float = 0.3, symmetric: str = "sum", normalize: bool = True):
        super().__init__()
        if symmetric not in SYMMETRIC_MODES:
            raise ValueError(f"unknown symmetric mode {symmetric!r}; choose one of {SYMMETRIC_MODES}")
        if scale <= 0:
            raise ValueError(f"scale must be positive, got {scale}")
        self.scale = scale
        self.margin = margin
        self.symmetric = symmetric
        self.normalize = normalize

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        if self.normalize:
            x = F.normalize(x, p=2, dim=-1)
            y = F.normalize(y, p=2, dim=-1)
        return additive_margin_loss(x, y, scale=self.scale, margin=self.margin, symmetric=self.symmetric)

    def extra_repr(self) -> str:
        return f"scale={self.scale}, margin={self.margin}, symmetric={self.symmetric!r}, normalize={self.normalize}"
