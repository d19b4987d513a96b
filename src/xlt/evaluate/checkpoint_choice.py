"""What the choice of checkpoint costs zero-shot (Keung et al. 2020, "Don't use English dev").

Shared by the families that fine-tune a classifier on the source language and score it
zero-shot (`freeze_depth.checkpoint_selection`, `monox.checkpoint_selection`). With tracking
on, every dev evaluation of a run also scores the target languages' test sets (and their dev
sets where the dataset has them). At the end, three choices of checkpoint are read off that
history for each tracked language:

- `en_dev`: the step with the best source-language dev score (what the run keeps and its
  test evaluation scores; the same model);
- `last`: the last step;
- `target_dev`: the step with the best dev score in that language: an oracle no real
  zero-shot setting has, which shows how much a better choice could win.

The records (metric `accuracy`, dimensions lang, checkpoint, step) and their per-example
predictions go to `checkpoints.json` beside the run, so the table gets intervals as well.
The plan side (`tracking_settings`) and the command side (`add_tracking_arguments`,
`read_tracking`, `write_choices`) are here too; nothing here imports torch.
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

import numpy as np

from xlt.core.errors import XltError
from xlt.core.metrics import MetricsFile, example_set, record
from xlt.core.plan import data_file
from xlt.core.settings import dataset_languages
from xlt.data.records import read_records

CHOICES = ("en_dev", "last", "target_dev")
TRACKED = "tracked"  # the history key of the per-language scores
DEV_PREDICTION = "dev_prediction"  # the history key of an evaluation's source-language dev predictions


def tracked_scores(predict, test_sets: dict[str, list[dict]], dev_sets: dict[str, list[dict]]) -> dict:
    """One evaluation's tracked entry: per language, the test predictions and accuracy and, where
    a dev set exists, the dev accuracy. `predict(examples) -> predicted labels`."""
    out = {}
    for lang, examples in test_sets.items():
        predicted = np.asarray(predict(examples))
        entry = {
            "test_prediction": predicted.tolist(),
            "test_accuracy": float(np.mean(predicted == np.asarray([e["label"] for e in examples]))),
        }
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
            records.append(
                record("accuracy", scores["test_accuracy"], lang=lang, checkpoint=choice, step=entry["step"])
            )
            examples.append(
                example_set(
                    "classification",
                    "accuracy",
                    prediction=scores["test_prediction"],
                    gold=list(labels),
                    lang=lang,
                    checkpoint=choice,
                    step=entry["step"],
                )
            )
    return records, examples


def without_predictions(history: Sequence[dict]) -> list[dict]:
    """The history for train.json: tracked accuracies kept, the prediction lists left out
    (they are in checkpoints.examples.jsonl.gz, the kept step's dev predictions in the run's
    examples file, for the steps that matter)."""
    out = []
    for h in history:
        h = {k: v for k, v in h.items() if k != DEV_PREDICTION}
        if TRACKED in h:
            h = {
                **h,
                TRACKED: {
                    lang: {k: v for k, v in s.items() if k != "test_prediction"} for lang, s in h[TRACKED].items()
                },
            }
        out.append(h)
    return out


# ---------------------------------------------------------------- the plan side


def tracking_settings(config: dict, dataset: str, split: str, langs: Sequence[str]) -> list[tuple[str, str]]:
    """--track-test for every eval language, --track-dev where `dataset` has a dev split in it: a
    job spec's settings (xlt.core.job_spec), each flag repeated."""
    dev_langs = dataset_languages(config, dataset, "dev")
    out = []
    for lang in langs:
        out.append(("track_test", f"{lang}={data_file(dataset, lang, split)}"))
        if lang in dev_langs:
            out.append(("track_dev", f"{lang}={data_file(dataset, lang, 'dev')}"))
    return out


# ---------------------------------------------------------------- the command side


def tracking_identity(args) -> tuple[dict, list[str]]:
    """--track-test / --track-dev for a resumable run's key: their languages (settings) and
    files (inputs); the tracked scores live in the checkpointed history."""
    pairs = {flag: getattr(args, flag) for flag in ("track_test", "track_dev")}
    return (
        {flag: [lang for lang, _ in values] for flag, values in pairs.items()},
        [path for values in pairs.values() for _, path in values],
    )


def _tracked_sets(pairs: list[tuple[str, str]], fields, needs: str) -> dict:

    return {lang: read_records(path, fields, needs) for lang, path in pairs}


def read_tracking(args, fields, needs: str) -> tuple[dict, dict]:
    """(test sets, dev sets) by language from --track-test / --track-dev, checked before any
    model loads: every file is read, every dev language has its test set."""
    track_test = _tracked_sets(args.track_test, fields, needs)
    track_dev = _tracked_sets(args.track_dev, fields, needs)
    if set(track_dev) - set(track_test):
        raise XltError(f"--track-dev names {sorted(set(track_dev) - set(track_test))} without their --track-test")
    return track_test, track_dev


def write_choices(
    path: str | Path,
    family: str,
    run_id: str,
    axes: dict,
    history: Sequence[dict],
    best_step: int,
    track_test: dict[str, list[dict]],
) -> None:
    """`checkpoints.json` (+ its examples file): every choice for every tracked language; no
    records without tracking. Written before the run's own metrics, which mark the job done."""
    choices = MetricsFile(family, run_id, axes=axes, meta={"tracked": sorted(track_test)})
    choices.records, choices.examples = selection_records(
        history, best_step, {lang: [e["label"] for e in ex] for lang, ex in track_test.items()}
    )
    choices.write(path)
