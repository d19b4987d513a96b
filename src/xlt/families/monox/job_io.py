"""What `xlt train-teacher` and `xlt distill` share around training: the inputs they read and
check before any model loads, and how they finish (model, metrics, checkpoints).

Both take the same flags for these (--split, --size, --num-labels, --eval-data, --eval-langs,
--axes, --save-model), so the helpers read them from the parsed arguments."""

from __future__ import annotations

from xlt.core.checkpoint import model_inputs, run_identity
from xlt.core.errors import XltError
from xlt.core.freezing import count_parameters
from xlt.core.io import read_jsonl
from xlt.core.metrics import MetricsFile, parse_axes
from xlt.core.models import save_model
from xlt.core.train_args import train_args_from
from xlt.core.training import result_meta
from xlt.evaluate.checkpoint_choice import tracking_identity, without_predictions
from xlt.families.monox.data_split import parse_size, read_split
from xlt.families.monox.plan import TEACHER_MODES
from xlt.families.monox.training import clear_checkpoints

TRACKED_FIELDS = ("text", "label")
TRACKED_NEEDS = (
    "the checkpoint-choice table scores a classifier and needs labelled records (text, [text_pair,] "
    "label, as xlt prepare-data writes them)"
)


def eval_sets(paths: list[str], langs: str) -> dict:
    """Evaluation rows by language, the languages in the order of the files."""

    names = [lang for lang in langs.split(",") if lang]
    if len(names) != len(paths):
        raise XltError(f"--eval-langs names {len(names)} languages but --eval-data has {len(paths)} files")
    by_lang = {lang: read_jsonl(path) for lang, path in zip(names, paths)}
    empty = [lang for lang, rows in by_lang.items() if not rows]
    if empty:
        raise XltError(f"no evaluation examples for {empty}")
    return by_lang


def check_labels(split, num_labels: int) -> None:
    labels = {r["label"] for r in split.labelled + split.dev}
    bad = sorted(label for label in labels if not 0 <= label < num_labels)
    if bad:
        raise XltError(f"labels {bad} in the split are outside 0..{num_labels - 1}; check --num-labels")


def run_axes(args, derived: dict) -> dict:
    """meta.axes: the workflow's sweep row (--axes) or, run by hand, the arguments."""

    return parse_axes(args.axes) if args.axes else derived


def read_inputs(args):
    """What the teacher and the student jobs read and check before any model loads:
    (training settings, labelled size, split, evaluation rows by language)."""

    targs, size = train_args_from(args), parse_size(args.size)
    split = read_split(args.split)
    check_labels(split, args.num_labels)
    return targs, size, split, eval_sets(args.eval_data, args.eval_langs)


def run_metrics(args, run_id: str, axes: dict, outcome, targs, model, split, role: str, **meta) -> MetricsFile:
    """The job's metrics file before its evaluation: the training result and history, the model's
    parameter counts, `meta` (the role's settings), and the run's own records and per-example outputs
    (`outcome`: xlt.families.monox.training.RunOutcome)."""
    metrics = MetricsFile("monox", run_id, axes=axes)
    metrics.curve = outcome.result.curve
    metrics.meta.update(
        result_meta(outcome.result, targs)
        | count_parameters(model)
        | outcome.meta
        | {
            "model": args.model,
            "role": role,
            **meta,
            "split": split.meta,
            "history": without_predictions(outcome.result.history),
        }
    )
    metrics.extend(outcome.records)
    metrics.examples.extend(outcome.examples)
    return metrics


def finish(args, metrics, model, tokenizer, out, checkpoint_dir) -> None:
    """Save the model if asked, write the metrics, then drop the resumable state (outputs exist)."""

    if args.save_model:
        save_model(model, tokenizer, args.save_model)
    metrics.write(out)
    clear_checkpoints(checkpoint_dir)
    for r in metrics.records:
        print(r)


def job_identity(args, role: str) -> dict:
    """What a resumed train-teacher or distill job must share with the one that wrote its
    checkpoint, besides the training settings and the KD temperature (xlt.core.training and
    fit key those): model, head, size, the mode's settings and inputs. The --eval-data files are
    read after training only."""

    settings = {
        "family": "monox",
        "role": role,
        "model": args.model,
        "head": args.head,
        "size": args.size,
        "num_labels": args.num_labels,
    }
    inputs = [args.split, *model_inputs(args.model)]
    if role == "student":
        settings |= {"mode": args.mode, "freeze_depth": args.freeze_depth}
        if args.mode in ("pl", "self_train"):
            settings["threshold"] = args.threshold
        if args.mode == "self_train":
            settings["rounds"] = args.rounds
        if args.mode in TEACHER_MODES:
            inputs.append(args.teacher_logits)
        tracked, tracked_files = tracking_identity(args)
        settings |= tracked
        inputs += tracked_files
    return run_identity(settings, inputs)
