"""Applying a layer scheme (xlt.families.adapt.schemes) to a model: which parameters train.

The MLM head (BERT's cls.predictions transform + output bias, RoBERTa's lm_head, DistilBERT's
vocab_transform/vocab_layer_norm/vocab_projector bias) is trained by default, as the seed
always trains the part on top of the encoder. The decoder *weight* is normally tied to the
word-embedding matrix (the same Parameter), so it stays frozen with the embeddings; the
decoder bias is a separate Parameter and is trained. With untied weights
(tie_word_embeddings=False) the decoder weight is a head parameter and is trained.

Optimiser note: layers are only ever unfrozen, and torch's AdamW skips parameters whose
grad is None, so build the optimiser over `schedulable_parameters(model)` once (with
`zero_grad(set_to_none=True)`) and call `apply_scheme` every step.
"""

from __future__ import annotations

from torch import nn

from xlt.core.models import encoder_parts
from xlt.families.adapt.schemes import Scheme, trainable_layers


def _ids(module: nn.Module) -> set[int]:
    return {id(p) for p in module.parameters()}


def head_parameters(model: nn.Module) -> list[nn.Parameter]:
    """Parameters outside the embeddings and encoder layers (MLM head, pooler).

    Identity-based: a decoder weight tied to the word embeddings *is* an embedding parameter
    and is therefore not part of the head.
    """
    parts = encoder_parts(model)
    inside = _ids(parts.embeddings) | _ids(parts.layers)
    return [p for p in model.parameters() if id(p) not in inside]


def schedulable_parameters(model: nn.Module, train_head: bool = True) -> list[nn.Parameter]:
    """Every parameter a scheme may ever train: encoder layers (+ head). Give these to the optimiser."""
    params = list(encoder_parts(model).layers.parameters())
    if train_head:
        params += head_parameters(model)
    return params


def apply_scheme(model: nn.Module, scheme: Scheme, step: int, epoch: int, train_head: bool = True) -> set[int]:
    """Set requires_grad for `step`/`epoch`: embeddings frozen, scheme layers trainable, others
    frozen, head trainable iff `train_head`. Cheap enough to call every step. Returns the
    trainable 1-based layer numbers."""
    parts = encoder_parts(model)
    active = trainable_layers(scheme, step, epoch, parts.num_layers)
    for param in parts.embeddings.parameters():
        param.requires_grad_(False)
    for number, layer in enumerate(parts.layers, start=1):
        for param in layer.parameters():
            param.requires_grad_(number in active)
    # after the embeddings, so a tied decoder weight (an embedding parameter) is never touched here
    for param in head_parameters(model):
        param.requires_grad_(train_head)
    return active
