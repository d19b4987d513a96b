"""Encode sentences into pooled vectors, from one layer or from every layer at once."""

from __future__ import annotations

from typing import Sequence

import numpy as np
import torch

from xlt.core.padding import pad_multiple
from xlt.core.pooling import pool


@torch.no_grad()
def encode_layers(
    model: torch.nn.Module,
    tokenizer,
    sentences: Sequence[str],
    layers: Sequence[int],
    pooling: str = "mean",
    batch_size: int = 64,
    max_length: int = 128,
    device: torch.device | str | None = None,
    prompt: str = "",
) -> dict[int, np.ndarray]:
    """Pooled sentence vectors for each requested hidden-state index (0 = embeddings).

    `prompt` is put before every sentence (E5's "query: ", BGE's instruction), and its tokens
    are pooled with the sentence's, as sentence-transformers does by default.

    Sentences are sorted by length before batching (less padding, same result) and the
    vectors are returned in input order, as float32 arrays of shape (n, dim).
    """
    device = torch.device(device) if device is not None else next(model.parameters()).device
    if prompt:
        sentences = [prompt + s for s in sentences]
    was_training = model.training
    model.eval()
    order = np.argsort([-len(s) for s in sentences], kind="stable")
    chunks: dict[int, list[np.ndarray]] = {layer: [] for layer in layers}
    for start in range(0, len(sentences), batch_size):
        batch = [sentences[i] for i in order[start : start + batch_size]]
        enc = tokenizer(
            batch,
            padding=True,
            truncation=True,
            max_length=max_length,
            pad_to_multiple_of=pad_multiple(device),
            return_tensors="pt",
        )
        enc = {k: v.to(device) for k, v in enc.items() if k in ("input_ids", "attention_mask", "token_type_ids")}
        out = model(**enc, output_hidden_states=True)
        hidden_states = out.hidden_states
        for layer in layers:
            vectors = pool(hidden_states[layer].float(), enc["attention_mask"], pooling)
            chunks[layer].append(vectors.cpu().numpy())
    model.train(was_training)
    inverse = np.empty_like(order)
    inverse[order] = np.arange(len(order))
    result = {}
    for layer in layers:
        stacked = np.concatenate(chunks[layer]) if chunks[layer] else np.zeros((0, 0), dtype=np.float32)
        result[layer] = stacked[inverse] if len(stacked) else stacked
    return result


def encode(model, tokenizer, sentences, pooling="mean", layer=-1, **kwargs) -> np.ndarray:
    """Pooled sentence vectors from one hidden-state index (default: last layer)."""
    return encode_layers(model, tokenizer, sentences, [layer], pooling=pooling, **kwargs)[layer]


def encoding_options(args, device: torch.device) -> dict:
    """`encode` / `encode_layers` keyword arguments from an encoding job's --pooling, --batch-size,
    --max-length and --prompt, on `device` (the hidden-state index is the job's own choice)."""
    return {
        "pooling": args.pooling,
        "batch_size": args.batch_size,
        "max_length": args.max_length,
        "device": device,
        "prompt": args.prompt,
    }
