"""Freeze the embeddings and the first N encoder layers.

Depth semantics (as in the freeze-depth experiment):
  -1      nothing frozen
   0      embeddings frozen
   1..L   embeddings and encoder layers 1..N frozen (L = number of layers of the model)
"""

from __future__ import annotations

from torch import nn

from xlt.core.models import encoder_parts

NOTHING_FROZEN = -1


def check_depth(depth: int, num_layers: int) -> None:
    if not NOTHING_FROZEN <= depth <= num_layers:
        raise ValueError(
            f"freeze depth {depth} is out of range for a model with {num_layers} layers; "
            f"use -1 (nothing frozen), 0 (embeddings only) or 1..{num_layers}"
        )


def freeze(model: nn.Module, depth: int) -> list[str]:
    """Set requires_grad=False on the frozen part; return the names of the frozen parameters."""
    parts = encoder_parts(model)
    check_depth(depth, parts.num_layers)
    frozen_modules: list[nn.Module] = []
    if depth >= 0:
        frozen_modules.append(parts.embeddings)
        frozen_modules.extend(parts.layers[:depth])
    frozen_ids = set()
    for module in frozen_modules:
        for param in module.parameters():
            param.requires_grad_(False)
            frozen_ids.add(id(param))
    return [name for name, p in model.named_parameters() if id(p) in frozen_ids]


def freeze_word_embeddings(model: nn.Module) -> None:
    """Freeze only the token embedding matrix (SBERT-style training keeps it fixed)."""
    parts = encoder_parts(model)
    word = getattr(parts.embeddings, "word_embeddings", None)
    if word is None:
        raise TypeError(f"{type(parts.embeddings).__name__} has no word_embeddings")
    word.weight.requires_grad_(False)


def trainable_parameters(model: nn.Module) -> list[nn.Parameter]:
    return [p for p in model.parameters() if p.requires_grad]


def count_parameters(model: nn.Module) -> dict:
    total = sum(p.numel() for p in model.parameters())
    trainable = sum(p.numel() for p in model.parameters() if p.requires_grad)
    return {"params_total": total, "params_trainable": trainable}
