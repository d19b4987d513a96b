"""Sparse prediction: a masked LM's vocabulary head applied only at the positions that are scored.

A masked LM's forward projects every position onto the vocabulary (mBERT: 768 x 119,547 multiply-adds
a token, more than its 12 encoder layers), yet the loss reads only the masked ~15 %. As ModernBERT's
`sparse_prediction` and MosaicML's BERT do, `masked_logits` runs the encoder (the model's
`base_model`), gathers the hidden states of the positions whose label is not IGNORE_INDEX and
applies the head to those rows alone. The head works row by row (transform, layer norm,
projection), so the logits of the scored rows, and any loss over them, are those of the full
forward; only the rounding of the matrix products may differ in the last bits.

The head is found generically: the one child module of the model besides its `base_model` that
holds the model's output embeddings (BERT's `cls`, RoBERTa's and XLM-R's `lm_head`, ALBERT's
`predictions`). A model laid out otherwise (DistilBERT's four head modules, a torch.compile'd
model, whose graph is the whole forward) gets the full forward, with the reason logged once.
"""

from __future__ import annotations

import logging

import torch
from torch import nn

log = logging.getLogger(__name__)

IGNORE_INDEX = -100  # label of a position that is not scored (cross_entropy's default ignore_index)

_warned: set[str] = set()


def split_masked_lm(model: nn.Module) -> tuple[nn.Module, nn.Module] | str:
    """(encoder, head) of a masked LM, or the reason it cannot be split (a string)."""
    if hasattr(model, "_orig_mod"):  # torch.compile's wrapper: splitting would leave the compiled graph
        return "a torch.compile'd model runs its compiled forward whole"
    base = getattr(model, "base_model", None)
    if not isinstance(base, nn.Module) or base is model:
        return f"{type(model).__name__} has no base_model under its head"
    others = [(name, child) for name, child in model.named_children() if child is not base]
    if len(others) != 1:
        return (
            f"{type(model).__name__} has {len(others)} modules besides its base model "
            f"({', '.join(name for name, _ in others) or 'none'}), not one head"
        )
    name, head = others[0]
    get_output = getattr(model, "get_output_embeddings", None)
    output = get_output() if callable(get_output) else None
    if output is None or not any(module is output for module in head.modules()):
        return f"{type(model).__name__}.{name} does not hold the model's output embeddings (not a vocabulary head)"
    return base, head


def _log_once(model: nn.Module, reason: str) -> None:
    key = f"{type(model).__name__}: {reason}"
    if key not in _warned:
        _warned.add(key)
        log.info("full logits at every position (no sparse prediction): %s", reason)


def masked_logits(
    model: nn.Module, input_ids: torch.Tensor, attention_mask: torch.Tensor, labels: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """(logits, targets) of the positions whose label is not IGNORE_INDEX, in row-major order
    (the order of `logits[labels != IGNORE_INDEX]` of the full forward): logits (n, vocab), targets
    (n,). The head sees only those n rows; gradients flow to the encoder through the gathered rows
    exactly as through the full logits."""
    selected = labels != IGNORE_INDEX
    parts = split_masked_lm(model)
    if isinstance(parts, str):
        _log_once(model, parts)
        logits = model(input_ids=input_ids, attention_mask=attention_mask).logits
        return logits[selected], labels[selected]
    base, head = parts
    hidden = base(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state
    return head(hidden[selected]), labels[selected]
