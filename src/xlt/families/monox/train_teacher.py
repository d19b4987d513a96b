"""`xlt train-teacher`: fine-tune MonoX's teacher on a training subset; its model, metrics and the
logits the students distil."""

from __future__ import annotations

from pathlib import Path

from xlt.core import monitor
from xlt.core.models import load_classifier, load_tokenizer
from xlt.core.training import seed_everything
from xlt.families.monox.evaluation import evaluation_records
from xlt.families.monox.job_io import finish, job_identity, read_inputs, run_axes, run_metrics
from xlt.families.monox.training import run_teacher


def main(args):
    targs, size, split, by_lang = read_inputs(args)
    out = Path(args.out)
    axes = run_axes(args, {"mode": "teacher", "teacher": args.model, "size": size, "seed": targs.seed})

    tokenizer = load_tokenizer(args.model)
    seed_everything(targs.seed)  # the new head's initial weights: torch seeds each process at random
    model = load_classifier(args.model, args.num_labels, args.head)
    checkpoint_dir = Path(args.checkpoint_dir) if args.checkpoint_dir else out / "checkpoint"
    with monitor.run(args.tensorboard, out, axes, vars(args)):
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
    metrics = run_metrics(args, args.run_id or out.name, axes, outcome, targs, model, split, "teacher")
    # a monolingual teacher is scored in its own language only: no cross-language average
    metrics.extend(
        evaluation_records(
            model, tokenizer, by_lang, targs.max_length, with_average=False, examples_out=metrics.examples
        )
    )
    finish(args, metrics, model, tokenizer, out / "metrics.json", checkpoint_dir)
