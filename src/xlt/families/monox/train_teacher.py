"""`xlt train-teacher`: fine-tune MonoX's teacher on a training subset; its model, metrics and the
logits the students distil."""

from __future__ import annotations

from pathlib import Path

from xlt.core.freezing import count_parameters
from xlt.core.metrics import MetricsFile
from xlt.core.models import load_classifier, load_tokenizer
from xlt.core.training import result_meta, seed_everything
from xlt.evaluate.checkpoint_choice import without_predictions
from xlt.families.monox.evaluation import evaluation_records
from xlt.families.monox.job_io import finish, job_identity, read_inputs, run_axes
from xlt.families.monox.training import run_teacher


def main(args):
    targs, size, split, by_lang = read_inputs(args)
    out = Path(args.out)
    axes = run_axes(args, {"mode": "teacher", "teacher": args.model, "size": size, "seed": targs.seed})

    tokenizer = load_tokenizer(args.model)
    seed_everything(targs.seed)  # the new head's initial weights: torch seeds each process at random
    model = load_classifier(args.model, args.num_labels, args.head)
    checkpoint_dir = Path(args.checkpoint_dir) if args.checkpoint_dir else out / "checkpoint"
    outcome = run_teacher(
        model,
        tokenizer,
        split,
        size,
        targs.seed,
        targs,
        out / "logits.npz",
        teacher_name=args.model,
        source_lang=args.source_lang,
        checkpoint_dir=checkpoint_dir,
        identity=job_identity(args, "teacher"),
    )
    metrics = MetricsFile("monox", args.run_id or out.name, axes=axes)
    metrics.curve = outcome.result.curve
    metrics.meta.update(
        result_meta(outcome.result, targs)
        | count_parameters(model)
        | outcome.meta
        | {
            "model": args.model,
            "role": "teacher",
            "split": split.meta,
            "history": without_predictions(outcome.result.history),
        }
    )
    metrics.extend(outcome.records)
    metrics.examples.extend(outcome.examples)
    # a monolingual teacher is scored in its own language only: no cross-language average
    metrics.extend(
        evaluation_records(
            model, tokenizer, by_lang, targs.max_length, with_average=False, examples_out=metrics.examples
        )
    )
    finish(args, metrics, model, tokenizer, out / "metrics.json", checkpoint_dir)
