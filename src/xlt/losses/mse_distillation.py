"""Multilingual knowledge distillation (Reimers & Gurevych 2020, "Making Monolingual Sentence
Embeddings Multilingual using Knowledge Distillation").

A fixed teacher M embeds the source (English) side s_i of each translation pair (s_i, t_i);
the student M^ is trained so that both sides land on the teacher's vector:

    loss = MSE(M^(s_i), M(s_i)) + MSE(M^(t_i), M(s_i))

each MSE the mean over the batch and the vector's dimensions (torch's mean squared error, as
sentence-transformers' MSELoss). Vectors are not normalised: the student learns the teacher's
space as it is. When the student's width differs from the teacher's, a linear projection of the
student's vectors (trained with it) makes them comparable; `projection` is that module or None.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn


def mse_distillation_loss(source: torch.Tensor, target: torch.Tensor, teacher: torch.Tensor) -> torch.Tensor:
    """MSE(source, teacher) + MSE(target, teacher): student vectors of both sides of B pairs,
    (B, dim) each, against the teacher's (B, dim) vectors of the source side."""
    if source.ndim != 2 or source.shape != target.shape or source.shape != teacher.shape:
        raise ValueError(
            f"source, target and teacher must all be (batch, dim) with one shape, got "
            f"{tuple(source.shape)}, {tuple(target.shape)} and {tuple(teacher.shape)}"
        )
    teacher = teacher.to(source.dtype)
    return F.mse_loss(source, teacher) + F.mse_loss(target, teacher)


class MSEDistillationLoss(nn.Module):
    """The loss with the optional trained projection of the student's vectors to the teacher's width."""

    def __init__(self, projection: nn.Module | None = None):
        super().__init__()
        self.projection = projection

    def forward(self, source: torch.Tensor, target: torch.Tensor, teacher: torch.Tensor) -> torch.Tensor:
        if self.projection is not None:
            source, target = self.projection(source), self.projection(target)
        return mse_distillation_loss(source, target, teacher)
