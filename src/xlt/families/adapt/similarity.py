"""How far apart two models' layer representations of the same sentences are.

Seed 003 compares an MLM-adapted mBERT with a natively Dutch BERT (BERTje) by the mean
Euclidean distance of their activations per layer. The two models have different
tokenizers, so token positions do not correspond; this module compares only units that do:

- sentence level: per-sentence mean-pooled vectors of each hidden state (`encode_layers`);
- word level: whitespace words, each represented by its first sub-word, found through the
  fast tokenizer's `word_ids()` after pre-splitting the sentence on whitespace
  (`is_split_into_words=True`). Raw token positions are never compared.

Two measures per layer: `mean_euclidean_distance` (the seed's measure; needs equal widths)
and linear CKA (Kornblith et al., 2019; invariant to orthogonal transforms and isotropic
scaling, works across widths). Layers are hidden-state indices: 0 = embedding output,
i = output of encoder layer i, as everywhere in xlt.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np
import torch

from xlt.core.embeddings import encode_layers
from xlt.core.errors import XltError
from xlt.core.metrics import record
from xlt.core.models import encoder_parts
from xlt.families.adapt.choices import SIMILARITY_LEVELS

log = logging.getLogger(__name__)

LEVELS = SIMILARITY_LEVELS
MEASURES = ("euclidean", "cka")


def _as_2d(name: str, matrix) -> np.ndarray:
    array = np.asarray(matrix, dtype=np.float64)
    if array.ndim != 2:
        raise ValueError(f"{name} must be a 2-D (n, dim) matrix, got shape {array.shape}")
    return array


def linear_cka(x, y) -> float:
    """Linear CKA between (n, d1) and (n, d2) representations of the same n items.

    CKA = ||Yc^T Xc||_F^2 / (||Xc^T Xc||_F ||Yc^T Yc||_F) with feature-centred Xc, Yc; in
    [0, 1], 1 for identical representations up to rotation and isotropic scaling. Computed
    through n x n Gram matrices when n is smaller than the widths (same value, cheaper).
    Returns nan when one side has no variance (CKA is undefined there). With few items and
    wide layers linear CKA is biased upwards; compare values computed on the same n.
    """
    x, y = _as_2d("x", x), _as_2d("y", y)
    if x.shape[0] != y.shape[0]:
        raise ValueError(
            f"CKA needs the same items on both sides; got {x.shape[0]} and {y.shape[0]} rows "
            f"(shapes {x.shape} and {y.shape})"
        )
    if x.shape[0] < 2:
        raise ValueError(f"CKA needs at least 2 items, got shapes {x.shape} and {y.shape}")
    x = x - x.mean(axis=0, keepdims=True)
    y = y - y.mean(axis=0, keepdims=True)
    if x.shape[0] < max(x.shape[1], y.shape[1]):
        kx, ky = x @ x.T, y @ y.T
        cross = float(np.sum(kx * ky))
        norm_x, norm_y = np.linalg.norm(kx), np.linalg.norm(ky)
    else:
        cross = float(np.linalg.norm(y.T @ x) ** 2)
        norm_x, norm_y = np.linalg.norm(x.T @ x), np.linalg.norm(y.T @ y)
    if norm_x == 0 or norm_y == 0:
        return float("nan")
    return cross / float(norm_x * norm_y)


def mean_euclidean_distance(x, y) -> float:
    """Mean over rows of ||x_i - y_i||_2 (rows paired: same sentence / word on both sides).

    Only defined for equal shapes: models of different hidden sizes raise an XltError naming
    both shapes (use CKA for those).
    """
    x, y = _as_2d("x", x), _as_2d("y", y)
    if x.shape != y.shape:
        raise XltError(
            f"mean Euclidean distance needs paired rows of equal width, got shapes {x.shape} and {y.shape}; "
            "models with different hidden sizes can only be compared with CKA"
        )
    if x.shape[0] == 0:
        raise ValueError("mean Euclidean distance of zero rows is undefined")
    return float(np.linalg.norm(x - y, axis=1).mean())


def first_subword_positions(word_ids: Sequence[int | None]) -> dict[int, int]:
    """word index -> position of its first sub-word token, from a fast tokenizer's word_ids()."""
    positions: dict[int, int] = {}
    for position, word in enumerate(word_ids):
        if word is not None and word not in positions:
            positions[word] = position
    return positions


def split_words(sentence: str) -> list[str]:
    return sentence.split()


@dataclass
class WordStates:
    """Per sentence: the whitespace-word indices that got a token, and per layer their vectors."""

    word_indices: list[list[int]] = field(default_factory=list)
    vectors: dict[int, list[np.ndarray]] = field(default_factory=dict)  # layer -> per sentence (n_words, dim)


def _model_inputs(enc, device) -> dict[str, torch.Tensor]:
    return {k: v.to(device) for k, v in enc.items() if k in ("input_ids", "attention_mask", "token_type_ids")}


@torch.no_grad()
def encode_words(
    model: torch.nn.Module,
    tokenizer,
    sentences: Sequence[str],
    layers: Sequence[int],
    batch_size: int = 32,
    max_length: int = 128,
    device: torch.device | str | None = None,
) -> WordStates:
    """First-sub-word vectors of every whitespace word, per requested hidden-state index.

    Words cut off by truncation (or mapped to no token at all) are absent from
    `word_indices`; `paired_word_vectors` keeps only words present for both models.
    """
    if not getattr(tokenizer, "is_fast", False):
        raise XltError(
            f"word-level comparison needs a fast tokenizer (word_ids()); {type(tokenizer).__name__} is not one"
        )
    device = torch.device(device) if device is not None else next(model.parameters()).device
    was_training = model.training
    model.eval()
    states = WordStates(vectors={layer: [] for layer in layers})
    try:
        for start in range(0, len(sentences), batch_size):
            words = [split_words(s) for s in sentences[start : start + batch_size]]
            try:
                enc = tokenizer(
                    words,
                    is_split_into_words=True,
                    padding=True,
                    truncation=True,
                    max_length=max_length,
                    return_tensors="pt",
                )
            except ValueError as err:  # byte-level BPE (RoBERTa) refuses pre-split words without a prefix space
                raise XltError(
                    f"tokenizer {type(tokenizer).__name__} cannot take pre-split words ({err}); "
                    "load it with add_prefix_space=True"
                ) from err
            hidden_states = model(**_model_inputs(enc, device), output_hidden_states=True).hidden_states
            for row in range(len(words)):
                positions = first_subword_positions(enc.word_ids(row))
                kept = sorted(positions)
                index = torch.tensor([positions[w] for w in kept], dtype=torch.long, device=device)
                states.word_indices.append(kept)
                for layer in layers:
                    states.vectors[layer].append(hidden_states[layer][row].index_select(0, index).float().cpu().numpy())
    finally:
        model.train(was_training)
    return states


def paired_word_vectors(a: WordStates, b: WordStates, layer: int) -> tuple[np.ndarray, np.ndarray]:
    """Row-aligned (n_words, dim_a), (n_words, dim_b) matrices of the words both sides kept."""
    if len(a.word_indices) != len(b.word_indices):
        raise ValueError(f"word states cover {len(a.word_indices)} and {len(b.word_indices)} sentences")
    rows_a, rows_b = [], []
    for idx_a, idx_b, vec_a, vec_b in zip(a.word_indices, b.word_indices, a.vectors[layer], b.vectors[layer]):
        common = sorted(set(idx_a) & set(idx_b))
        where_a = {w: i for i, w in enumerate(idx_a)}
        where_b = {w: i for i, w in enumerate(idx_b)}
        rows_a.append(vec_a[[where_a[w] for w in common]])
        rows_b.append(vec_b[[where_b[w] for w in common]])
    dim_a = a.vectors[layer][0].shape[1] if a.vectors[layer] else 0
    dim_b = b.vectors[layer][0].shape[1] if b.vectors[layer] else 0
    x = np.concatenate(rows_a) if rows_a else np.zeros((0, dim_a), dtype=np.float32)
    y = np.concatenate(rows_b) if rows_b else np.zeros((0, dim_b), dtype=np.float32)
    return x, y


def hidden_size(model: torch.nn.Module) -> int:
    word = getattr(encoder_parts(model).embeddings, "word_embeddings", None)
    if word is not None:
        return int(word.embedding_dim)
    config = model.config
    return int(getattr(config, "hidden_size", None) or config.dim)


def check_comparison(model_a, model_b, layers: Sequence[int], levels: Sequence[str], measures: Sequence[str]) -> None:
    """Validate layers / levels / measures before any encoding."""
    max_layer = min(encoder_parts(model_a).num_layers, encoder_parts(model_b).num_layers)
    bad_layers = [layer for layer in layers if not 0 <= layer <= max_layer]
    if bad_layers or not layers:
        raise XltError(
            f"layers {list(layers)} are not all hidden-state indices in 0..{max_layer} "
            "(0 = embeddings; the smaller model's layer count bounds the range)"
        )
    bad = [lv for lv in levels if lv not in LEVELS]
    if bad or not levels:
        raise XltError(f"unknown comparison level(s) {bad or list(levels)}; choose from {LEVELS}")
    bad = [m for m in measures if m not in MEASURES]
    if bad or not measures:
        raise XltError(f"unknown similarity measure(s) {bad or list(measures)}; choose from {MEASURES}")
    if "euclidean" in measures and hidden_size(model_a) != hidden_size(model_b):
        raise XltError(
            f"Euclidean distance needs equal hidden sizes, got {hidden_size(model_a)} and "
            f"{hidden_size(model_b)}; compare these models with CKA only"
        )


def compare_models(
    model_a: torch.nn.Module,
    tok_a,
    model_b: torch.nn.Module,
    tok_b,
    sentences: Sequence[str],
    layers: Sequence[int],
    levels: Sequence[str] = LEVELS,
    measures: Sequence[str] | None = None,
    batch_size: int = 32,
    max_length: int = 128,
    device: torch.device | str | None = None,
) -> list[dict]:
    """Metric records ("euclidean", "cka", plus "vectors" = rows compared) per layer and level.

    `measures` None means CKA always and Euclidean distance when the hidden sizes match.
    Both models see the same sentences; each uses its own tokenizer.
    """
    if measures is None:
        measures = MEASURES if hidden_size(model_a) == hidden_size(model_b) else ("cka",)
        if "euclidean" not in measures:
            log.warning(
                "hidden sizes differ (%d vs %d): Euclidean distance skipped, CKA only",
                hidden_size(model_a),
                hidden_size(model_b),
            )
    check_comparison(model_a, model_b, layers, levels, measures)
    sentences = list(sentences)
    if len(sentences) < 2:
        raise XltError(f"layer comparison needs at least 2 sentences, got {len(sentences)}")
    layers = list(layers)
    paired: dict[str, dict[int, tuple[np.ndarray, np.ndarray]]] = {}
    if "sentence" in levels:
        kwargs = dict(pooling="mean", batch_size=batch_size, max_length=max_length, device=device)
        sa = encode_layers(model_a, tok_a, sentences, layers, **kwargs)
        sb = encode_layers(model_b, tok_b, sentences, layers, **kwargs)
        paired["sentence"] = {layer: (sa[layer], sb[layer]) for layer in layers}
    if "word" in levels:
        kwargs = dict(batch_size=batch_size, max_length=max_length, device=device)
        wa = encode_words(model_a, tok_a, sentences, layers, **kwargs)
        wb = encode_words(model_b, tok_b, sentences, layers, **kwargs)
        paired["word"] = {layer: paired_word_vectors(wa, wb, layer) for layer in layers}
    records = []
    for level, by_layer in paired.items():
        n = by_layer[layers[0]][0].shape[0]
        records.append(record("vectors", n, level=level))
        if n < 2:
            log.warning("only %d %s vector(s) in common; no %s-level measures", n, level, level)
            continue
        for layer in layers:
            x, y = by_layer[layer]
            if "euclidean" in measures:
                records.append(record("euclidean", mean_euclidean_distance(x, y), layer=layer, level=level))
            if "cka" in measures:
                records.append(record("cka", linear_cka(x, y), layer=layer, level=level))
    return records
