"""What a MonoX run reports of its models besides training: test accuracy and the majority-class
share per language (`evaluation_records`), the kept checkpoint's dev predictions as an example
set (`dev_examples`), and how often pseudo labels match the pool's held-out gold labels
(`pseudo_label_accuracy`, `pseudo_label_examples`). Example sets carry what the bootstrap
intervals need (xlt.core.metrics.example_set).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from xlt.core.classification import accuracy, majority_share, predict_logits
from xlt.core.metrics import example_set, record
from xlt.core.training import TrainResult
from xlt.evaluate.checkpoint_choice import DEV_PREDICTION


def pseudo_label_accuracy(records: Sequence[dict]) -> float | None:
    """Share of pseudo-labelled pool records whose label equals their held-out gold label."""
    scored = [r for r in records if "heldout_label" in r]
    return float(np.mean([r["label"] == r["heldout_label"] for r in scored])) if scored else None


def pseudo_label_examples(records: Sequence[dict]) -> list[dict]:
    """The pseudo labels against the pool's held-out gold labels (what `pseudo_label_accuracy`
    scores), as an interval-only example set; none when no record has a held-out label."""
    scored = [r for r in records if "heldout_label" in r]
    if not scored:
        return []
    return [
        example_set(
            "classification",
            "pseudo_label_accuracy",
            prediction=[r["label"] for r in scored],
            gold=[r["heldout_label"] for r in scored],
            interval_only=True,
        )
    ]


def dev_examples(result: TrainResult, dev: Sequence[dict], source_lang: str) -> list[dict]:
    """The kept checkpoint's dev predictions (its history entry at best_step) against the dev
    labels, as an interval-only set for the `split=dev` accuracy; none when that entry has no
    predictions (a run resumed from a checkpoint written before they were kept)."""
    entry = next((h for h in result.history if h["step"] == result.best_step and DEV_PREDICTION in h), None)
    if entry is None:
        return []
    return [
        example_set(
            "classification",
            "accuracy",
            prediction=entry[DEV_PREDICTION],
            gold=[e["label"] for e in dev],
            lang=source_lang,
            split="dev",
            interval_only=True,
        )
    ]


def evaluation_records(
    model,
    tokenizer,
    by_lang: dict[str, list[dict]],
    max_length: int,
    with_average: bool = True,
    examples_out: list | None = None,
    item_aligned: bool | None = None,
) -> list[dict]:
    """Test accuracy per language (split test) and, with `with_average`, their macro average;
    per language also `majority_share`, the share of its test set given the most often
    predicted class (a model that predicts one class for everything has 1.0). With
    `examples_out` (a MetricsFile's `examples`), predictions and gold labels go there too, with
    the test set's `item_aligned` declaration where it has one (xlt.data.item_alignment)."""
    declared = {} if item_aligned is None else {"item_aligned": item_aligned}
    accuracies, shares = [], []
    for lang, examples in by_lang.items():
        logits = predict_logits(model, tokenizer, examples, max_length)
        gold = [e["label"] for e in examples]
        accuracies.append(record("accuracy", accuracy(logits, gold), lang=lang, split="test"))
        if examples_out is not None:
            examples_out.append(
                example_set(
                    "classification",
                    "accuracy",
                    prediction=logits.argmax(-1),
                    gold=gold,
                    lang=lang,
                    split="test",
                    **declared,
                )
            )
        shares.append(record("majority_share", majority_share(logits), lang=lang, split="test"))
    if with_average and accuracies:
        accuracies.append(
            record("accuracy", float(np.mean([r["value"] for r in accuracies])), lang="avg", split="test")
        )
    return accuracies + shares
