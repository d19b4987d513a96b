"""Load encoders by hub id or local directory, and find their embedding module and layers.

Every family reaches the transformer through `encoder_parts`, so freezing, per-layer
analysis and layer schemes work the same on BERT, RoBERTa / XLM-R and DistilBERT.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from pathlib import Path

import torch
from torch import nn

from xlt.core import faults
from xlt.core.errors import XltError
from xlt.core.heads import MeanPoolClassifier, choose_head, load_saved_head, saved_head
from xlt.core.io import atomic_directory
from xlt.core.model_files import model_files_problem, pretrained_args

log = logging.getLogger(__name__)
MISSING_WEIGHTS_SEED = 0  # load_encoder's draw for weights a checkpoint lacks


@dataclass
class EncoderParts:
    embeddings: nn.Module
    layers: nn.ModuleList

    @property
    def num_layers(self) -> int:
        return len(self.layers)


def base_model(model: nn.Module) -> nn.Module:
    """The bare encoder under a task head (BertForX.bert, RobertaForX.roberta, ...)."""
    base = getattr(model, "base_model", model)
    return base if base is not None else model


def encoder_parts(model: nn.Module) -> EncoderParts:
    """Embedding module and ordered encoder layers of a transformers encoder."""
    base = base_model(model)
    embeddings = getattr(base, "embeddings", None)
    for owner_name in ("encoder", "transformer"):  # BERT/RoBERTa/XLM-R use encoder.layer, DistilBERT transformer.layer
        owner = getattr(base, owner_name, None)
        layers = getattr(owner, "layer", None) if owner is not None else None
        if isinstance(layers, nn.ModuleList) and embeddings is not None:
            return EncoderParts(embeddings=embeddings, layers=layers)
    raise TypeError(
        f"cannot find embeddings and encoder layers in {type(base).__name__}; "
        "supported: BERT, RoBERTa, XLM-R, DistilBERT and models with the same attribute names"
    )


def num_layers(model: nn.Module) -> int:
    """Number of transformer layers L of a loaded model (hidden-state indices run 0..L)."""
    try:
        return encoder_parts(model).num_layers
    except TypeError:
        # encoders with other attribute names still state their depth in the config
        layers = getattr(getattr(model, "config", None), "num_hidden_layers", None)
        if layers is None:
            raise
        return int(layers)


def config_num_layers(name_or_path: str) -> int:
    """Number of layers L stated by a model's config, read without loading the weights."""
    from transformers import AutoConfig  # deferred: imports torch

    try:
        config = from_pretrained(AutoConfig, name_or_path)
    except (OSError, ValueError) as err:
        raise XltError(
            f"cannot read a model config from {name_or_path!r} ({err}); pass a model directory or a hub id"
        ) from None
    for key in ("num_hidden_layers", "n_layers", "num_layers"):
        if getattr(config, key, None) is not None:
            return int(getattr(config, key))
    raise XltError(f"the config of {name_or_path!r} does not state its number of layers (num_hidden_layers)")


def config_hidden_size(name_or_path: str) -> int:
    """Hidden size stated by a model's config, read without loading the weights."""
    from transformers import AutoConfig  # deferred: imports torch

    config = from_pretrained(AutoConfig, name_or_path)
    for key in ("hidden_size", "dim"):
        if getattr(config, key, None):
            return int(getattr(config, key))
    raise XltError(f"the config of {name_or_path!r} states no hidden size (hidden_size or dim)")


def from_pretrained(auto_class, name_or_path: str, **kwargs):
    """auto_class.from_pretrained with the pin; a revision the hub (or the offline cache) does not
    have becomes a clear error instead of a stack of hub lookups."""
    path, kw = pretrained_args(name_or_path, **kwargs)
    try:
        return auto_class.from_pretrained(path, **kw)
    except OSError as err:
        if "revision" not in kw:
            raise
        raise XltError(
            f"cannot load {path!r} at revision {kw['revision']!r} ({err}); check models.<name>.revision "
            f"in the config (a branch, tag or commit the hub has) and, offline, that `xlt prefetch` "
            f"downloaded that revision"
        ) from None


def require_model_files(name_or_path: str, weights: bool = True) -> None:
    """A local model directory must be complete before anything loads from it (transformers
    builds an empty tokenizer from a directory without tokenizer files); hub ids pass."""
    if Path(name_or_path).is_dir():
        problem = model_files_problem(name_or_path, weights)
        if problem:
            raise XltError(problem)


def load_tokenizer(name_or_path: str):
    require_model_files(name_or_path)
    from transformers import AutoTokenizer  # deferred: imports torch

    return from_pretrained(AutoTokenizer, name_or_path)


def load_encoder(name_or_path: str) -> nn.Module:
    """The checkpoint's base model. Weights it lacks (BERT's pooler below a masked LM) are drawn from
    a fixed seed on a generator of their own: a trained encoder saves the same files every run, and
    the caller's random stream (its seeded head, dropout, batch order) is untouched."""
    require_model_files(name_or_path)
    from transformers import AutoModel  # deferred: imports transformers

    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(MISSING_WEIGHTS_SEED)
        return from_pretrained(AutoModel, name_or_path)


def load_classifier(name_or_path: str, num_labels: int, head: str = "auto") -> nn.Module:
    """A sequence classifier: a model saved with xlt's mean head loads as one; otherwise `head`
    (auto, pooler, mean: see xlt.core.heads) picks transformers' head or the mean-pool one."""
    require_model_files(name_or_path)
    from transformers import AutoModel, AutoModelForSequenceClassification  # deferred: imports torch

    if Path(name_or_path).is_dir() and saved_head(name_or_path):
        return load_saved_head(name_or_path, from_pretrained(AutoModel, name_or_path))
    chosen = choose_head(name_or_path, head)
    log.info("classification head: %s%s", chosen, " (auto)" if head == "auto" else "")
    if chosen == "mean":
        return MeanPoolClassifier(from_pretrained(AutoModel, name_or_path), num_labels)
    return from_pretrained(AutoModelForSequenceClassification, name_or_path, num_labels=num_labels)


def save_model(
    model: nn.Module, tokenizer, out_dir: str | os.PathLike, extra_files: dict[str, str | bytes] | None = None
) -> None:
    """save_pretrained in safetensors (the transformers default), plus the tokenizer and
    `extra_files` (name -> text or bytes), atomically: everything is written into a temporary directory
    that then replaces `out_dir` as a whole, so a kill mid-save never leaves a directory that
    loads with missing weights, tokenizer or settings."""
    with atomic_directory(out_dir) as tmp:
        model.save_pretrained(tmp)
        if tokenizer is not None:
            tokenizer.save_pretrained(tmp)
        for name, text in (extra_files or {}).items():
            if isinstance(text, bytes):
                (tmp / name).write_bytes(text)
            else:
                (tmp / name).write_text(text, encoding="utf-8")
        faults.reached("save")  # the kill sweep's hook; nothing without XLT_FAULT


def pick_device(requested: str = "auto") -> torch.device:
    if requested != "auto":
        return torch.device(requested)
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")
