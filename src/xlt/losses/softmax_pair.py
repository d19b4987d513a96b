"""SBERT's classification objective (Reimers & Gurevych 2019): a softmax classifier over
(u, v, |u - v|) [and optionally u * v] of the two sentence vectors, trained with
cross-entropy on NLI labels. Only the encoder is kept afterwards; the classifier exists
to shape the sentence space."""

from __future__ import annotations

import torch
from torch import nn


class SoftmaxPairLoss(nn.Module):
    def __init__(self, dim: int, num_labels: int = 3, use_product: bool = False):
        super().__init__()
        self.use_product = use_product
        self.classifier = nn.Linear((4 if use_product else 3) * dim, num_labels)

    def features(self, u: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        parts = [u, v, (u - v).abs()] + ([u * v] if self.use_product else [])
        return torch.cat(parts, dim=-1)

    def forward(self, u: torch.Tensor, v: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
        return nn.functional.cross_entropy(self.classifier(self.features(u, v)), labels)
