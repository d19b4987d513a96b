"""What the choice of checkpoint costs zero-shot (Keung et al. 2020, "Don't use English dev").

With tracking on (`freeze_depth.checkpoint_selection`), every dev evaluation of a run also
scores the target languages' test sets (and their dev sets where the dataset has them). At
the end, three choices of checkpoint are read off that history for each tracked language:

- `en_dev`: the step with the best source-language dev score (what the run keeps and the
  evaluate job scores; the same model);
- `last`: the last step;
- `target_dev`: the step with the best dev score in that language: an oracle no real
  zero-shot setting has, which shows how much a better choice could win.

The records (metric `accuracy`, dimensions lang, checkpoint, step) and their per-example
predictions go to `checkpoints.json` beside the run, so the table gets intervals as well.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from xlt.core.metrics import example_set, record

CHOICES = ("en_dev", "last", "target_dev")
TRACKED = "tracked"  # the history key of the per-language scores


def tracked_scores(predict, test_sets: dict[str, list[dict]], dev_sets: dict[str, list[dict]]) -> dict:
    """One evaluation's tracked entry: per language, the test predictions and accuracy and, where
    a dev set exists, the dev accuracy. `predict(examples) -> predicted labels`."""
    out = {}
    for lang, examples in test_sets.items():
        predicted = np.asarray(predict(examples))
        entry = {"test_prediction": predicted.tolist(),
                 "test_accuracy": float(np.mean(predicted == np.asarray([e["label"] for e in examples])))}
        if lang in dev_sets:
            dev = dev_sets[lang]
            entry["dev_accuracy"] = float(np.mean(np.asarray(predict(dev)) == np.asarray([e["label"] for e in dev])))
        out[lang] = entry
    return out


def choose(history: Sequence[dict], best_step: int, lang: str) -> dict[str, dict]:
    """choice -> the history entry it picks for `lang` (target_dev only where dev was scored)."""
    evaluated = [h for h in history if TRACKED in h and lang in h[TRACKED]]
    if not evaluated:
        return {}
    chosen = {"en_dev": next((h for h in evaluated if h["step"] == best_step), None), "last": evaluated[-1]}
    with_dev = [h for h in evaluated if "dev_accuracy" in h[TRACKED][lang]]
    if with_dev:  # the earliest step of the best dev score, as the source-language choice breaks ties
        chosen["target_dev"] = max(with_dev, key=lambda h: (h[TRACKED][lang]["dev_accuracy"], -h["step"]))
    return {k: v for k, v in chosen.items() if v is not None}


def selection_records(history: Sequence[dict], best_step: int, gold: dict[str, Sequence[int]]) -> tuple[list, list]:
    """(records, example sets) of every choice for every tracked language."""
    records, examples = [], []
    for lang, labels in gold.items():
        for choice, entry in choose(history, best_step, lang).items():
            scores = entry[TRACKED][lang]
            records.append(record("accuracy", scores["test_accuracy"], lang=lang, checkpoint=choice, step=entry["step"]))
            examples.append(example_set("classification", "accuracy", prediction=scores["test_prediction"],
                                        gold=list(labels), lang=lang, checkpoint=choice, step=entry["step"]))
    return records, examples


def without_predictions(history: Sequence[dict]) -> list[dict]:
    """The history for train.json: tracked accuracies kept, the prediction lists left out
    (they are in checkpoints.examples.jsonl.gz for the steps that matter)."""
    out = []
    for h in history:
        if TRACKED in h:
            h = {**h, TRACKED: {lang: {k: v for k, v in s.items() if k != "test_prediction"}
                                for lang, s in h[TRACKED].items()}}
        out.append(h)
    return out
