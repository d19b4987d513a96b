"""The trainable top over frozen-prefix states (xlt.frozen_prefix.prefix_cache computes and stores them).

`CachedTopModel` runs layers N+1..L of a classifier plus the model's own task head (BERT's pooler,
RoBERTa's and DistilBERT's classification heads, or xlt's mean-pool head) on the stored layer-N
states; `CachedSentenceTop` does the same for a sentence encoder's pooling (the dual family).
Both share their parameters with the full model, so saving either saves the same weights.
`prepare_cached_training` caches a dataset and builds the top in one call, or says why a depth
trains uncached.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import Callable, Mapping, Sequence

import torch
from torch import nn

from xlt.core.errors import XltError
from xlt.core.freezing import freeze
from xlt.core.heads import MeanPoolClassifier
from xlt.core.models import base_model, encoder_parts
from xlt.core.training import autocast_dtype
from xlt.frozen_prefix.prefix_cache import PrefixStateDataset, bidirectional_mask, cache_examples, check_cacheable_depth

log = logging.getLogger("xlt.frozen_prefix.prefix_cache")  # the cache's messages, under the name they always had


class _BertHead(nn.Module):
    """BertForSequenceClassification: pooler (dense + tanh on [CLS]), dropout, classifier."""

    def __init__(self, model: nn.Module):
        super().__init__()
        self.pooler = model.bert.pooler
        self.dropout = model.dropout
        self.classifier = model.classifier

    def forward(self, sequence_output: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        return self.classifier(self.dropout(self.pooler(sequence_output)))


class _RobertaHead(nn.Module):
    """(XLM-)RobertaForSequenceClassification: the classification head reads <s> itself."""

    def __init__(self, model: nn.Module):
        super().__init__()
        self.classifier = model.classifier

    def forward(self, sequence_output: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        return self.classifier(sequence_output)


class _DistilBertHead(nn.Module):
    """DistilBertForSequenceClassification: pre_classifier on [CLS], ReLU, dropout, classifier."""

    def __init__(self, model: nn.Module):
        super().__init__()
        self.pre_classifier = model.pre_classifier
        self.dropout = model.dropout
        self.classifier = model.classifier

    def forward(self, sequence_output: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        pooled = torch.relu(self.pre_classifier(sequence_output[:, 0]))
        return self.classifier(self.dropout(pooled))


class _MeanHead(nn.Module):
    """xlt's MeanPoolClassifier: mean over the non-padding tokens, dropout, classifier."""

    def __init__(self, model: nn.Module):
        super().__init__()
        self.dropout = model.dropout
        self.classifier = model.classifier
        object.__setattr__(self, "model", model)  # its head_logits, not a second copy of its modules

    def forward(self, sequence_output: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        return self.model.head_logits(sequence_output, attention_mask)


def task_head(model: nn.Module) -> nn.Module:

    if isinstance(model, MeanPoolClassifier):
        return _MeanHead(model)
    # deferred: imports torch
    from transformers import (
        BertForSequenceClassification,
        DistilBertForSequenceClassification,
        RobertaForSequenceClassification,
        XLMRobertaForSequenceClassification,
    )

    if isinstance(model, BertForSequenceClassification):
        return _BertHead(model)
    if isinstance(model, (RobertaForSequenceClassification, XLMRobertaForSequenceClassification)):
        return _RobertaHead(model)
    if isinstance(model, DistilBertForSequenceClassification):
        return _DistilBertHead(model)
    raise XltError(
        f"frozen-prefix caching does not support {type(model).__name__}; supported: "
        "Bert-, Roberta-, XLMRoberta- and DistilBertForSequenceClassification and the mean head "
        "(set cache_frozen_prefix: false for other models)"
    )


class _MovesWholeModel:
    """For a top model: .to()/.half()/.cuda() convert the whole model, so the prefix (still used
    to evaluate the full model on raw text) never ends up on another device or dtype than the top."""

    def _apply(self, fn, recurse=True):
        self.full_model._apply(fn, recurse)
        return self


def _run_top_layers(
    layers: Sequence[nn.Module], config, hidden_states: torch.Tensor, attention_mask: torch.Tensor | None
) -> list[torch.Tensor]:
    """The cached boundary states followed by the output of every layer in `layers` (the mask
    built as the full model builds it)."""
    layer_mask = bidirectional_mask(config, hidden_states, attention_mask)
    states = [hidden_states]
    for layer in layers:
        states.append(layer(states[-1], layer_mask))
    return states


class CachedTopModel(_MovesWholeModel, nn.Module):
    """Layers depth+1..L and the task head of a sequence classifier, fed cached prefix states.

    The modules are the original model's own (no copies): training this updates `model`, so
    saving `model` (or calling `save_pretrained` here) saves the trained weights. The prefix is
    not a submodule, so `parameters()` are exactly the trainable top and `train()` leaves the
    prefix alone. `.to()` on it moves the whole model (prefix included). Calls freeze(model, depth), which
    makes `trainable_parameters(model)` the same set as `self.parameters()`."""

    def __init__(self, model: nn.Module, depth: int):
        super().__init__()
        parts = encoder_parts(model)
        check_cacheable_depth(depth, parts.num_layers)
        self.head = task_head(model)
        freeze(model, depth)
        self.depth = depth
        self.config = model.config
        self.layers = nn.ModuleList(parts.layers[depth:])
        # Kept outside nn.Module registration so the frozen prefix is not a submodule.
        object.__setattr__(self, "full_model", model)

    def forward(
        self,
        hidden_states: torch.Tensor,
        attention_mask: torch.Tensor | None = None,
        labels: torch.Tensor | None = None,
    ):
        from transformers.loss.loss_utils import ForSequenceClassificationLoss  # deferred: imports torch
        from transformers.modeling_outputs import SequenceClassifierOutput  # deferred: imports torch

        hidden = _run_top_layers(
            self.layers, self.config, hidden_states.to(next(self.head.parameters()).dtype), attention_mask
        )[-1]
        logits = self.head(hidden, attention_mask)
        loss = None
        if labels is not None:
            # The same loss (and problem_type inference) the transformers classifiers use.
            loss = ForSequenceClassificationLoss(labels, logits, self.config)
        return SequenceClassifierOutput(loss=loss, logits=logits)

    def save_pretrained(self, *args, **kwargs):
        return self.full_model.save_pretrained(*args, **kwargs)


class CachedSentenceTop(_MovesWholeModel, nn.Module):
    """Layers depth+1..L and the pooling of a sentence encoder (xlt.core.sentence_encoder:
    `.encoder` + `.pooling`), fed cached prefix states; returns the sentence vectors.

    As CachedTopModel: the modules are the encoder's own, `parameters()` are exactly the
    trainable top (freeze(model.encoder, depth) is applied), and `.to()` moves the whole model."""

    def __init__(self, model: nn.Module, depth: int):
        super().__init__()
        parts = encoder_parts(model.encoder)
        check_cacheable_depth(depth, parts.num_layers)
        pooled = model.pooling.layer % (parts.num_layers + 1)
        if pooled < depth:
            raise XltError(
                f"the pooling reads layer {model.pooling.layer}, inside the frozen prefix (depth {depth}): "
                "nothing trained would reach the sentence vectors"
            )
        freeze(model.encoder, depth)
        self.depth = depth
        self.config = base_model(model.encoder).config
        self.layers = nn.ModuleList(parts.layers[depth:])
        self.pooling = model.pooling
        object.__setattr__(self, "full_model", model)

    def forward(self, hidden_states: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        hidden = hidden_states.to(next(self.layers.parameters(), hidden_states).dtype)
        # hidden-state indices as the full model's output.hidden_states (0 = embeddings); the frozen ones are not run
        states = [None] * self.depth + _run_top_layers(self.layers, self.config, hidden, attention_mask)
        return self.pooling(states, attention_mask)


@dataclass
class CachedTraining:
    """What the training loop needs in cached mode: the top model, its data set, the cost."""

    top: CachedTopModel
    dataset: PrefixStateDataset
    cache_s: float


def prepare_cached_training(
    model: nn.Module,
    depth: int,
    examples: Sequence,
    collate: Callable[[list], Mapping[str, torch.Tensor]],
    batch_size: int,
    device: torch.device | str,
    storage_dtype: str = "float32",
    precision: str = "fp32",
) -> CachedTraining | None:
    """Cache the frozen prefix of `model` over `examples` for training only the top with
    xlt.core.training.train: `train(c.top, Objective(c.dataset, collate_prefix_states, loss), args,
    dev=DevSelection(lambda m: evaluate_full(m.full_model)))`; item i of the data set is examples[i],
    so the seeded data order is the uncached run's. `precision` is the run's TrainArgs.precision:
    the prefix runs under the autocast training will use on `device` (`c.dataset.states.precision`
    says which).

    Returns None, with a logged note, where caching does not apply (depth -1: the embeddings
    train; a model class without a supported task head): the caller then trains uncached."""
    if depth < 0:
        log.info("freeze depth %d: nothing is frozen, so there is no prefix to cache; training uncached", depth)
        return None
    try:
        task_head(model)
    except XltError as err:
        log.warning("%s; training uncached", err)
        return None

    device = torch.device(device)
    amp_dtype, _ = autocast_dtype(precision, device)
    model.to(device)
    started = time.time()
    dataset = cache_examples(model, depth, examples, collate, batch_size, device, storage_dtype, amp_dtype)
    cache_s = time.time() - started
    log.info(
        "cached the frozen prefix (embeddings + %d layers, %s) of %d examples in %.2f s (%.1f MB)",
        depth,
        dataset.states.precision,
        len(dataset),
        cache_s,
        dataset.states.nbytes / 2**20,
    )
    return CachedTraining(CachedTopModel(model, depth), dataset, cache_s)
