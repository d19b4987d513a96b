"""Which classification head a fine-tuned encoder gets, and the mask-aware mean-pool head.

`pooler` is transformers' AutoModelForSequenceClassification as it comes: BERT classifies the
pooler's tanh(dense([CLS])), RoBERTa/XLM-R and DistilBERT a dense layer on the first token.
That head suits checkpoints whose pooler was trained (BERT, mBERT: next-sentence prediction).
Sentence encoders (E5, MiniLM, most of the sentence-transformers hub) ship no trained pooler,
so that head starts from random weights on top of a vector the model never learnt to make
meaningful; their users expect a mean over the tokens and a linear layer, which is `mean`.
`auto` picks `pooler` when the checkpoint's weights hold a pooler and `mean` otherwise.

A `mean` model is saved as its encoder (`save_pretrained`) plus `xlt_head.json` and the
linear layer's weights, so evaluation jobs load it back with `load_saved_head`.
"""

from __future__ import annotations

import json
from pathlib import Path

import torch
from torch import nn

from xlt.core.choices import HEADS
from xlt.core.errors import XltError
from xlt.core.model_files import pretrained_args
from xlt.core.pooling import pool

HEAD_FILE = "xlt_head.json"
HEAD_WEIGHTS = "xlt_head.safetensors"
WEIGHT_FILES = (
    "model.safetensors.index.json",
    "model.safetensors",
    "pytorch_model.bin.index.json",
    "pytorch_model.bin",
)


def weight_names(directory: Path) -> list[str] | None:
    """The parameter names of the weights in a save_pretrained directory; None when it holds none."""
    for name in WEIGHT_FILES:
        path = directory / name
        if not path.is_file():
            continue
        if name.endswith(".index.json"):
            return list(json.loads(path.read_text())["weight_map"])
        if name.endswith(".safetensors"):
            from safetensors import safe_open  # deferred: imports torch

            with safe_open(str(path), "pt") as fh:
                return list(fh.keys())
        return list(torch.load(path, map_location="meta", weights_only=True, mmap=True))
    return None


def checkpoint_directory(name_or_path: str) -> Path | None:
    """A local model directory, or the hub snapshot of a (pinned) hub id, fetching just its
    weight index when the cache lacks it; None when neither is to be had."""
    path, kwargs = pretrained_args(name_or_path)
    if Path(path).is_dir():
        return Path(path)
    from huggingface_hub import hf_hub_download  # deferred: huggingface_hub: slow to import

    for name in WEIGHT_FILES:
        try:
            return Path(hf_hub_download(path, name, revision=kwargs.get("revision"))).parent
        except Exception:  # not in that format (or offline and not cached): try the next
            continue
    return None


def has_trained_head(name_or_path: str) -> bool:
    """Whether the checkpoint holds a trained pooler (BERT's next-sentence pretraining) or is
    already a transformers sequence classifier (its head trained with it). A sentence-transformers
    model that pools otherwise than by [CLS] learnt its sentence vector through that pooling,
    whatever pooler weights it carries from its base model: no."""
    directory = checkpoint_directory(name_or_path)
    names = weight_names(directory) if directory is not None else None
    if names is None:
        raise XltError(
            f"cannot read the weights of {name_or_path!r} to choose a classification head; "
            f"set models.<name>.head (or --head) to pooler or mean"
        )
    pooling = directory / "1_Pooling" / "config.json"  # a sentence-transformers model: trained through its pooling
    if pooling.is_file() and not json.loads(pooling.read_text()).get("pooling_mode_cls_token", False):
        return False
    config = directory / "config.json"
    architectures = json.loads(config.read_text()).get("architectures") or [] if config.is_file() else []
    return any(name.endswith("pooler.dense.weight") for name in names) or any(
        a.endswith("ForSequenceClassification") for a in architectures
    )


def choose_head(name_or_path: str, head: str) -> str:
    """`pooler` or `mean` for the `head` setting (auto: `pooler` where the checkpoint has a
    trained pooler or classifier head, else `mean`)."""
    if head not in HEADS:
        raise XltError(f"unknown classification head {head!r}; choose one of {', '.join(HEADS)}")
    if head != "auto":
        return head
    return "pooler" if has_trained_head(name_or_path) else "mean"


class MeanPoolClassifier(nn.Module):
    """Encoder, mean over the non-padding tokens of the last layer, dropout, one linear layer.

    Behaves as a transformers sequence classifier where the rest of xlt looks: `model(**batch)`
    returns `.logits` (and `.loss` with labels), `base_model` is the encoder (freezing and the
    per-layer code find its layers there), `config.num_labels` is set, `save_pretrained` saves."""

    def __init__(self, encoder: nn.Module, num_labels: int, dropout: float | None = None):
        super().__init__()
        if getattr(encoder, "pooler", None) is not None:
            encoder.pooler = None  # the mean over tokens replaces it; an unused module would only be saved
        self.encoder = encoder
        self.config = encoder.config
        self.config.num_labels = num_labels
        hidden = getattr(self.config, "hidden_size", None) or self.config.dim  # DistilBERT says dim
        if dropout is None:
            dropout = getattr(self.config, "classifier_dropout", None)
        if dropout is None:
            dropout = getattr(self.config, "hidden_dropout_prob", getattr(self.config, "dropout", 0.1))
        self.dropout = nn.Dropout(dropout)
        self.classifier = nn.Linear(hidden, num_labels)

    @property
    def base_model(self) -> nn.Module:
        return self.encoder

    def head_logits(self, hidden: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        return self.classifier(self.dropout(pool(hidden, attention_mask, "mean")))

    def forward(self, input_ids=None, attention_mask=None, token_type_ids=None, labels=None, **kwargs):
        from transformers.modeling_outputs import SequenceClassifierOutput  # deferred: imports torch

        inputs = {"input_ids": input_ids, "attention_mask": attention_mask}
        if token_type_ids is not None:
            inputs["token_type_ids"] = token_type_ids
        if attention_mask is None:
            attention_mask = torch.ones_like(input_ids)
        logits = self.head_logits(self.encoder(**inputs).last_hidden_state, attention_mask)
        loss = nn.functional.cross_entropy(logits.float(), labels) if labels is not None else None
        return SequenceClassifierOutput(loss=loss, logits=logits)

    def save_pretrained(self, directory, **kwargs) -> None:
        from safetensors.torch import save_file  # deferred: imports torch

        directory = Path(directory)
        self.encoder.save_pretrained(directory, **kwargs)
        save_file(
            {k: v.detach().contiguous().cpu() for k, v in self.classifier.state_dict().items()},
            str(directory / HEAD_WEIGHTS),
        )
        (directory / HEAD_FILE).write_text(
            json.dumps({"head": "mean", "num_labels": self.config.num_labels, "dropout": self.dropout.p}) + "\n"
        )


def saved_head(directory: str | Path) -> dict | None:
    """What `xlt_head.json` in a saved model directory says (None: a transformers classifier)."""
    path = Path(directory) / HEAD_FILE
    return json.loads(path.read_text()) if path.is_file() else None


def load_saved_head(directory: str | Path, encoder: nn.Module) -> MeanPoolClassifier:
    from safetensors.torch import load_file  # deferred: imports torch

    spec = saved_head(directory)
    model = MeanPoolClassifier(encoder, spec["num_labels"], spec["dropout"])
    model.classifier.load_state_dict(load_file(str(Path(directory) / HEAD_WEIGHTS)))
    return model
