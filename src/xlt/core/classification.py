"""Sequence(-pair) classification: batching, prediction and accuracy.

Shared by the freeze-depth family (NLI) and the teacher/student family (NLI, sentiment).
"""

from __future__ import annotations

from typing import Callable, Sequence

import numpy as np
import torch

from xlt.core import cuda_graphs
from xlt.core.metrics import example_set, record
from xlt.core.padding import pad_multiple


def make_collate(
    tokenizer, max_length: int, with_labels: bool = True, pad_to_multiple_of: int | None = None
) -> Callable[[list[dict]], dict]:
    """Batches padded to their longest example (rounded up to `pad_to_multiple_of`: xlt.core.padding)."""

    def collate(examples: list[dict]) -> dict:
        texts = [e["text"] for e in examples]
        pairs = [e["text_pair"] for e in examples] if "text_pair" in examples[0] else None
        encoded = tokenizer(
            texts,
            pairs,
            padding=True,
            truncation=True,
            max_length=max_length,
            pad_to_multiple_of=pad_to_multiple_of,
            return_tensors="pt",
        )
        batch = dict(encoded)
        if with_labels:
            batch["labels"] = torch.tensor([e["label"] for e in examples])
        return batch

    return collate


def classification_loss(model, batch: dict) -> torch.Tensor:
    return model(**batch).loss


@torch.no_grad()
def predict_logits(model, tokenizer, examples: Sequence[dict], max_length: int, batch_size: int = 64) -> np.ndarray:
    was_training = model.training
    model.eval()
    device = next(model.parameters()).device
    collate = make_collate(tokenizer, max_length, with_labels=False, pad_to_multiple_of=pad_multiple(device))
    out = []
    for start in range(0, len(examples), batch_size):
        batch = {k: v.to(device) for k, v in collate(list(examples[start : start + batch_size])).items()}
        # a run with graphs: capture replays a recorded forward per batch shape (xlt.core.cuda_graphs)
        out.append(cuda_graphs.logits(model, batch).float().cpu().numpy())
    model.train(was_training)
    return np.concatenate(out) if out else np.zeros((0, 0), dtype=np.float32)


def accuracy(logits: np.ndarray, labels: Sequence[int]) -> float:
    return float((logits.argmax(-1) == np.asarray(labels)).mean())


def majority_share(logits: np.ndarray) -> float:
    """Share of the examples given the most often predicted class: 1.0 when the classifier
    predicts one class for everything (a collapsed model), 1 / classes when it spreads evenly."""
    predicted = np.asarray(logits).argmax(-1)
    if predicted.size == 0:
        raise ValueError("no predictions to take a majority share of")
    return float(np.bincount(predicted).max() / predicted.size)


def accuracy_records(
    model,
    tokenizer,
    by_lang: dict[str, list[dict]],
    max_length: int,
    batch_size: int = 64,
    examples_out: list | None = None,
    item_aligned: bool | None = None,
) -> list[dict]:
    """Accuracy per language and their macro average (metric "accuracy", lang "avg").

    With `examples_out` (a MetricsFile's `examples`), each language's predictions and gold
    labels are appended to it, with the dataset's `item_aligned` declaration where it has one."""
    declared = {} if item_aligned is None else {"item_aligned": item_aligned}
    records = []
    for lang, examples in by_lang.items():
        logits = predict_logits(model, tokenizer, examples, max_length, batch_size)
        gold = [e["label"] for e in examples]
        records.append(record("accuracy", accuracy(logits, gold), lang=lang))
        if examples_out is not None:
            examples_out.append(
                example_set(
                    "classification", "accuracy", prediction=logits.argmax(-1), gold=gold, lang=lang, **declared
                )
            )
    if records:
        records.append(record("accuracy", float(np.mean([r["value"] for r in records])), lang="avg"))
    return records
