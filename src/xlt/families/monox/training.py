"""MonoX teacher -> student training (Chi et al., "Can Monolingual Pretrained Models Help
Cross-Lingual Classification?"): the procedures behind `xlt monox-split`, `xlt train-teacher`
and `xlt distill`. The split on disk is `xlt.families.monox.data_split`, the data building
blocks (seeded splits, subsamples, pseudo labels) `xlt.families.monox.teacher_student`, the
logits artifact `xlt.families.monox.teacher_logits`, the test and dev scores
`xlt.families.monox.evaluation`, the KD loss `xlt.losses.distillation`; every model is trained
by the one loop `xlt.core.training.train`.

The stages, and what travels between them:

1. `make_split` (data_split): the source-language training data -> labelled / unlabelled / dev, seeded
   (XNLI: 20% labelled, 80% unlabelled; CLS: 20% of train as dev, the corpus's unlabeled pool).
   Unlabelled records lose their `label` (kept as `heldout_label`, only to score pseudo labels).
2. `run_teacher`: fine-tune the (monolingual) teacher on the labelled split cut to the training
   size, then store its logits on that labelled set and the whole unlabelled pool, keyed by
   example id (`save_teacher_logits`). One teacher job serves every student at that size.
3. `run_student`: finetune (gold only), self_train (the student labels the pool itself, in
   rounds), kd (distillation loss on gold + pool against the stored logits at temperature T) or
   pl (gold + the teacher's argmax labels with max prob >= threshold). The student has its own
   tokenizer: teacher outputs are found by example id, never by position or token.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Sequence

import numpy as np
import torch

from xlt.core.checkpoint import remove_checkpoint, with_settings
from xlt.core.classification import accuracy, classification_loss, make_collate, predict_logits
from xlt.core.errors import XltError
from xlt.core.metrics import example_set, record
from xlt.core.padding import pad_multiple
from xlt.core.train_args import TrainArgs
from xlt.core.train_inputs import DevSelection, Objective, Resumable
from xlt.core.training import TrainResult, train
from xlt.evaluate.checkpoint_choice import DEV_PREDICTION, TRACKED, tracked_scores
from xlt.families.monox.data_split import Split, artifact_meta, training_set
from xlt.families.monox.evaluation import dev_examples, pseudo_label_accuracy, pseudo_label_examples
from xlt.families.monox.plan import MODES, TEACHER_MODES
from xlt.families.monox.teacher_logits import load_teacher_logits, save_teacher_logits
from xlt.families.monox.teacher_student import build_kd_dataset, build_pl_dataset, example_id, self_train
from xlt.losses.distillation import check_temperature, distillation_loss

log = logging.getLogger("xlt.families.monox.training")


# ---------------------------------------------------------------- training helpers


def kd_collate(tokenizer, max_length: int, pad_to_multiple_of: int | None = None):
    """Batches of (inputs, teacher logits): each record carries its own teacher row."""
    base = make_collate(tokenizer, max_length, with_labels=False, pad_to_multiple_of=pad_to_multiple_of)

    def collate(examples: list[dict]) -> dict:
        batch = base(examples)
        batch["teacher_logits"] = torch.tensor([e["teacher_logits"] for e in examples], dtype=torch.float32)
        return batch

    return collate


def kd_loss(temperature: float):
    check_temperature(temperature)

    def loss_fn(model, batch: dict) -> torch.Tensor:
        inputs = {k: v for k, v in batch.items() if k != "teacher_logits"}
        return distillation_loss(model(**inputs).logits, batch["teacher_logits"], temperature)

    return loss_fn


def fit(
    model,
    tokenizer,
    examples: Sequence[dict],
    dev: Sequence[dict],
    args: TrainArgs,
    temperature: float | None = None,
    checkpoint_dir: str | Path | None = None,
    track: tuple[dict, dict] | None = None,
    identity: dict | None = None,
) -> TrainResult:
    """Train with cross-entropy on `label` (temperature None) or with the KD loss on
    `teacher_logits`; keep the checkpoint with the best dev accuracy. Every dev evaluation
    keeps its predictions in the history (DEV_PREDICTION: the kept checkpoint's give its dev
    accuracy an interval, `dev_examples`). With `checkpoint_dir` the run is resumable
    (xlt.core.checkpoint), keyed on `identity` and the KD temperature. With `track` = (test
    sets, dev sets) by language, every dev
    evaluation also scores those (the history's `tracked` entries, for the checkpoint-choice
    table: xlt.evaluate.checkpoint_choice)."""
    if not dev:
        raise XltError("the dev set is empty: nothing to select the best checkpoint on")

    def evaluate(m) -> dict:
        logits = predict_logits(m, tokenizer, dev, args.max_length)
        acc = accuracy(logits, [e["label"] for e in dev])
        scores = {"score": acc, "dev_accuracy": acc, DEV_PREDICTION: logits.argmax(-1).tolist()}
        if track and track[0]:
            scores[TRACKED] = tracked_scores(
                lambda ex: predict_logits(m, tokenizer, ex, args.max_length).argmax(-1), *track
            )
        return scores

    multiple = pad_multiple(args.device)
    if temperature is None:
        collate, loss_fn = make_collate(tokenizer, args.max_length, pad_to_multiple_of=multiple), classification_loss
    else:
        collate, loss_fn = kd_collate(tokenizer, args.max_length, multiple), kd_loss(temperature)
    return train(
        model,
        Objective(list(examples), collate, loss_fn),
        args,
        # (the dev set has no teacher logits for the KD loss)
        dev=DevSelection(evaluate, loss_examples=dev if temperature is None else None),
        checkpoint=Resumable(checkpoint_dir, with_settings(identity, kd_temperature=temperature)),
    )


def softmax(logits: np.ndarray) -> np.ndarray:
    z = np.asarray(logits, dtype=np.float64)
    z = z - z.max(axis=1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=1, keepdims=True)


# ---------------------------------------------------------------- stage 2: the teacher


@dataclass
class RunOutcome:
    model: torch.nn.Module
    result: TrainResult
    records: list[dict]  # metric records (besides test accuracy)
    meta: dict
    examples: list[dict] = field(default_factory=list)  # interval-only sets behind `records`


def run_teacher(
    model,
    tokenizer,
    split: Split,
    size: int | str,
    seed: int,
    args: TrainArgs,
    logits_path: str | Path,
    teacher_name: str = "",
    source_lang: str = "en",
    checkpoint_dir: str | Path | None = None,
    identity: dict | None = None,
) -> RunOutcome:
    """Fine-tune the teacher on the labelled data of `size`, then write its logits on those
    labelled examples and on the whole unlabelled pool to `logits_path`. `identity` keys the
    resumable checkpoint (xlt.core.checkpoint.run_identity)."""
    gold = training_set(split, size, seed)
    result = fit(model, tokenizer, gold, split.dev, args, checkpoint_dir=checkpoint_dir, identity=identity)
    logits = {
        "labelled": predict_logits(model, tokenizer, gold, args.max_length),
        "unlabelled": predict_logits(model, tokenizer, split.unlabelled, args.max_length),
    }
    header = save_teacher_logits(
        logits_path,
        {"labelled": (gold, logits["labelled"]), "unlabelled": (split.unlabelled, logits["unlabelled"])},
        meta={**artifact_meta(split, size, seed), "teacher": teacher_name, "best_dev_accuracy": result.best_score},
    )
    records = [
        record("accuracy", result.best_score, lang=source_lang, split="dev"),
        record("train_examples", len(gold)),
    ]
    examples = dev_examples(result, split.dev, source_lang)
    pool_labels = [r["heldout_label"] for r in split.unlabelled if "heldout_label" in r]
    if len(pool_labels) == len(split.unlabelled):
        records.append(
            record("accuracy", accuracy(logits["unlabelled"], pool_labels), lang=source_lang, split="unlabelled")
        )
        examples.append(
            example_set(
                "classification",
                "accuracy",
                prediction=logits["unlabelled"].argmax(-1),
                gold=pool_labels,
                lang=source_lang,
                split="unlabelled",
                interval_only=True,
            )
        )
    return RunOutcome(model, result, records, {"logits_parts": header["parts"]}, examples)


# ---------------------------------------------------------------- stage 3: the students


def run_student(
    mode: str,
    load_student,
    tokenizer,
    split: Split,
    size: int | str,
    seed: int,
    args: TrainArgs,
    *,
    teacher_logits: str | Path | None = None,
    temperature: float = 0.1,
    threshold: float = 0.0,
    rounds: int = 1,
    source_lang: str = "en",
    checkpoint_dir: str | Path | None = None,
    track: tuple[dict, dict] | None = None,
    identity: dict | None = None,
) -> RunOutcome:
    """Train one student. `load_student()` returns a fresh student classifier (called once,
    the self-training rounds continue from the previous round's model). With `checkpoint_dir`
    training is resumable (keyed on `identity`: xlt.core.checkpoint.run_identity); self-training
    keeps one checkpoint directory per round (round-N), so
    a rerun recomputes the finished rounds (from their last checkpoint, to the same models) and
    resumes the interrupted one. `clear_checkpoints` removes them once the outputs exist.
    `track` (test sets, dev sets by language) scores those at every dev evaluation of the
    training that makes the final model (self_train: its last round only); the outcome's
    `result.history` then holds them for the checkpoint-choice table."""

    def checkpoint(name: str) -> Path | None:
        return Path(checkpoint_dir) / name if checkpoint_dir is not None else None

    if mode not in MODES:
        raise XltError(f"unknown student mode {mode!r}; use one of {', '.join(MODES)}")
    if mode in TEACHER_MODES and teacher_logits is None:
        raise XltError(f"mode {mode} needs the teacher's logits (--teacher-logits)")
    if mode == "kd":
        check_temperature(temperature)
    gold = training_set(split, size, seed)
    records = [record("train_examples", len(gold))]
    meta: dict = {}
    examples: list[dict] = []

    if mode == "finetune":
        model = load_student()
        result = fit(
            model, tokenizer, gold, split.dev, args, checkpoint_dir=checkpoint("train"), track=track, identity=identity
        )
    elif mode == "kd":
        expected = artifact_meta(split, size, seed)
        logits = load_teacher_logits(teacher_logits, {"labelled": gold, "unlabelled": split.unlabelled}, expected)
        data = build_kd_dataset({"labelled": gold, "unlabelled": split.unlabelled}, logits)
        model = load_student()
        result = fit(
            model,
            tokenizer,
            data,
            split.dev,
            args,
            temperature=temperature,
            checkpoint_dir=checkpoint("train"),
            track=track,
            identity=identity,
        )
        records.append(record("distill_examples", len(data)))
    elif mode == "pl":
        logits = load_teacher_logits(teacher_logits, {"unlabelled": split.unlabelled}, artifact_meta(split, size, seed))
        data = build_pl_dataset(gold, split.unlabelled, softmax(logits["unlabelled"]), threshold)
        pseudo = _with_heldout(data[len(gold) :], split.unlabelled)
        records += _pseudo_records(len(pseudo), pseudo_label_accuracy(pseudo))
        examples += pseudo_label_examples(pseudo)
        model = load_student()
        result = fit(
            model, tokenizer, data, split.dev, args, checkpoint_dir=checkpoint("train"), track=track, identity=identity
        )
    else:  # self_train
        results: list[TrainResult] = []

        def train_fn(records_: list[dict], previous):
            m = previous if previous is not None else load_student()
            last_round = len(results) == rounds  # round 0 trains on gold alone, then `rounds` more
            results.append(
                fit(
                    m,
                    tokenizer,
                    records_,
                    split.dev,
                    args,
                    checkpoint_dir=checkpoint(f"round-{len(results)}"),
                    track=track if last_round else None,
                    identity=identity,
                )
            )
            return m

        def predict_fn(m, pool) -> np.ndarray:
            return softmax(predict_logits(m, tokenizer, pool, args.max_length))

        outcome = self_train(gold, split.unlabelled, train_fn, predict_fn, rounds, threshold)
        # the last round's model and numbers; its curve holds every round's, one after another
        model, result = outcome.model, replace(results[-1], curve=rounds_curve(results))
        pseudo = _with_heldout(outcome.train_records[len(gold) :], split.unlabelled)
        records += _pseudo_records(len(pseudo), pseudo_label_accuracy(pseudo))
        examples += pseudo_label_examples(pseudo)
        meta["self_training"] = [vars(r) for r in outcome.rounds]
        meta["round_dev_accuracy"] = [r.best_score for r in results]
    records.append(record("accuracy", result.best_score, lang=source_lang, split="dev"))
    return RunOutcome(model, result, records, meta, examples + dev_examples(result, split.dev, source_lang))


def rounds_curve(results: Sequence[TrainResult]) -> list[dict]:
    """The self-training rounds' training curves on one step axis: round r's steps count on
    from the last step of round r - 1 (each round restarts its learning-rate schedule)."""
    out, offset = [], 0
    for result in results:
        out += [{**row, "step": row["step"] + offset} for row in result.curve]
        offset += result.steps
    return out


def clear_checkpoints(checkpoint_dir: str | Path) -> None:
    """Remove the checkpoints `run_teacher` / `run_student` left under `checkpoint_dir`."""
    checkpoint_dir = Path(checkpoint_dir)
    if checkpoint_dir.is_dir():
        for sub in checkpoint_dir.iterdir():
            if sub.is_dir():
                remove_checkpoint(sub)
    remove_checkpoint(checkpoint_dir)


def _with_heldout(pseudo: list[dict], pool: Sequence[dict]) -> list[dict]:
    """Attach the pool's held-out gold labels to pseudo-labelled records (for scoring only)."""
    heldout = {example_id(r): r["heldout_label"] for r in pool if "heldout_label" in r}
    return [{**r, "heldout_label": heldout[example_id(r)]} if example_id(r) in heldout else r for r in pseudo]


def _pseudo_records(n: int, acc: float | None) -> list[dict]:
    out = [record("pseudo_examples", n)]
    if acc is not None:
        out.append(record("pseudo_label_accuracy", acc))
    return out
