"""A shared (siamese) sentence encoder: a transformers encoder + pooling over one layer.

Used by every family that trains sentence vectors (SBERT-style NLI, LaBSE-style dual
encoder). Saved as a plain transformers directory plus `xlt_pooling.json`, so the
evaluation verbs load it like any other model and the pooling travels with it.
"""
from __future__ import annotations

import json
from pathlib import Path

import torch
from torch import nn

from xlt.core.models import load_encoder, load_tokenizer, save_model
from xlt.core.pooling import Pooling

POOLING_FILE = "xlt_pooling.json"


class SentenceEncoder(nn.Module):
    def __init__(self, encoder: nn.Module, pooling: str = "mean", layer: int = -1):
        super().__init__()
        self.encoder = encoder
        self.pooling = Pooling(pooling, layer)

    @property
    def dim(self) -> int:
        return self.encoder.config.hidden_size if hasattr(self.encoder.config, "hidden_size") else self.encoder.config.dim

    def forward(self, input_ids, attention_mask, token_type_ids=None) -> torch.Tensor:
        kwargs = {"input_ids": input_ids, "attention_mask": attention_mask, "output_hidden_states": True}
        if token_type_ids is not None:
            kwargs["token_type_ids"] = token_type_ids
        out = self.encoder(**kwargs)
        return self.pooling(out.hidden_states, attention_mask)

    @classmethod
    def from_pretrained(cls, name_or_path: str, pooling: str | None = None, layer: int | None = None) -> "SentenceEncoder":
        """Pooling and layer default to what a saved SentenceEncoder recorded, else mean / last."""
        saved = read_pooling(name_or_path)
        return cls(load_encoder(name_or_path), pooling or saved.get("pooling", "mean"),
                   layer if layer is not None else saved.get("layer", -1))

    def save(self, out_dir: str | Path, tokenizer) -> None:
        # the pooling file goes into the same atomic save: a model without it would load with default pooling
        save_model(self.encoder, tokenizer, out_dir,
                   extra_files={POOLING_FILE: json.dumps({"pooling": self.pooling.mode, "layer": self.pooling.layer})})


def read_pooling(name_or_path: str) -> dict:
    path = Path(name_or_path) / POOLING_FILE
    return json.loads(path.read_text()) if path.is_file() else {}


def tokenize(tokenizer, texts: list[str], max_length: int) -> dict:
    enc = tokenizer(texts, padding=True, truncation=True, max_length=max_length, return_tensors="pt")
    return {k: v for k, v in enc.items() if k in ("input_ids", "attention_mask", "token_type_ids")}


__all__ = ["SentenceEncoder", "read_pooling", "tokenize", "load_tokenizer"]
