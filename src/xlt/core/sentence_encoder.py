"""A shared (siamese) sentence encoder: a transformers encoder + pooling over one layer, and
optionally a trained linear projection of the pooled vector (sentence-transformers' Dense module:
a distilled student of another width than its teacher's).

Used by every family that trains sentence vectors (SBERT-style NLI, LaBSE-style dual
encoder). Saved as a plain transformers directory plus `xlt_pooling.json` (and, with a
projection, `xlt_projection.safetensors`), so the evaluation verbs load it like any other model
and the pooling and projection travel with it: every evaluator scores the vectors the model
was trained to emit (`saved_projection`, `project`).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import torch
from torch import nn

from xlt.core.errors import XltError
from xlt.core.models import load_encoder, load_tokenizer, save_model
from xlt.core.pooling import Pooling

POOLING_FILE = "xlt_pooling.json"
PROJECTION_FILE = "xlt_projection.safetensors"


class SentenceEncoder(nn.Module):
    def __init__(self, encoder: nn.Module, pooling: str = "mean", layer: int = -1, projection: nn.Linear | None = None):
        super().__init__()
        self.encoder = encoder
        self.pooling = Pooling(pooling, layer)
        self.projection = projection

    @property
    def hidden_size(self) -> int:
        return (
            self.encoder.config.hidden_size if hasattr(self.encoder.config, "hidden_size") else self.encoder.config.dim
        )

    @property
    def dim(self) -> int:
        """The width of the sentence vectors: the projection's output, else the hidden size."""
        return self.projection.out_features if self.projection is not None else self.hidden_size

    def forward(self, input_ids, attention_mask, token_type_ids=None) -> torch.Tensor:
        kwargs = {"input_ids": input_ids, "attention_mask": attention_mask, "output_hidden_states": True}
        if token_type_ids is not None:
            kwargs["token_type_ids"] = token_type_ids
        out = self.encoder(**kwargs)
        pooled = self.pooling(out.hidden_states, attention_mask)
        return self.projection(pooled) if self.projection is not None else pooled

    @classmethod
    def from_pretrained(
        cls, name_or_path: str, pooling: str | None = None, layer: int | None = None
    ) -> "SentenceEncoder":
        """Pooling and layer default to what a saved SentenceEncoder recorded, else mean / last; its
        projection comes with it (and only with the pooling and layer it was trained on)."""
        saved = read_pooling(name_or_path)
        pooling, layer = pooling or saved.get("pooling", "mean"), layer if layer is not None else saved.get("layer", -1)
        return cls(load_encoder(name_or_path), pooling, layer, saved_projection(name_or_path, pooling, layer))

    def save(self, out_dir: str | Path, tokenizer) -> None:
        # the pooling and projection files go into the same atomic save: a model without them would
        # load with default pooling, or score vectors it was not trained to emit
        record = {"pooling": self.pooling.mode, "layer": self.pooling.layer}
        extra: dict[str, str | bytes] = {}
        if self.projection is not None:
            from safetensors.torch import save  # deferred: imports torch

            record["projection"] = {
                "in": self.projection.in_features,
                "out": self.projection.out_features,
                "file": PROJECTION_FILE,
            }
            extra[PROJECTION_FILE] = save(
                {k: v.detach().cpu().contiguous() for k, v in self.projection.state_dict().items()}
            )
        save_model(self.encoder, tokenizer, out_dir, extra_files={POOLING_FILE: json.dumps(record), **extra})


def read_pooling(name_or_path: str) -> dict:
    path = Path(name_or_path) / POOLING_FILE
    return json.loads(path.read_text()) if path.is_file() else {}


def saved_projection(name_or_path: str, pooling: str, layer: int, num_layers: int | None = None) -> nn.Linear | None:
    """The trained projection of a saved encoder's sentence vectors (None without one). It maps
    the pooled vectors of one pooling and layer, so another pooling or layer is refused: it would
    score vectors the projection never saw. `num_layers` lets -1 and the last index agree."""
    saved = read_pooling(name_or_path)
    spec = saved.get("projection")
    if not spec:
        return None
    same_layer = layer == saved["layer"] or (
        num_layers is not None and layer % (num_layers + 1) == saved["layer"] % (num_layers + 1)
    )
    if pooling != saved["pooling"] or not same_layer:
        raise XltError(
            f"{name_or_path} carries a projection ({spec['in']} -> {spec['out']}) trained on its "
            f"{saved['pooling']}-pooled layer {saved['layer']}; pooling {pooling} of layer {layer} would skip "
            f"or misuse it: score it with pooling {saved['pooling']} and layer {saved['layer']}"
        )
    from safetensors.torch import load_file  # deferred: imports torch

    projection = nn.Linear(spec["in"], spec["out"])
    projection.load_state_dict(load_file(str(Path(name_or_path) / spec["file"])))
    return projection.eval()


@torch.no_grad()
def project(vectors: np.ndarray, projection: nn.Module | None) -> np.ndarray:
    """Pooled vectors (n, in) through a saved encoder's projection (n, out), float32; unchanged without one."""
    if projection is None:
        return vectors
    weight = next(projection.parameters())
    return projection(torch.as_tensor(vectors, dtype=weight.dtype, device=weight.device)).float().cpu().numpy()


def tokenize(tokenizer, texts: list[str], max_length: int, pad_to_multiple_of: int | None = None) -> dict:
    """The encoder's inputs, padded to the longest text (rounded up to `pad_to_multiple_of`: xlt.core.padding)."""
    enc = tokenizer(
        texts,
        padding=True,
        truncation=True,
        max_length=max_length,
        pad_to_multiple_of=pad_to_multiple_of,
        return_tensors="pt",
    )
    return {k: v for k, v in enc.items() if k in ("input_ids", "attention_mask", "token_type_ids")}


__all__ = ["SentenceEncoder", "project", "read_pooling", "saved_projection", "tokenize", "load_tokenizer"]
