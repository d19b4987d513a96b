"""`xlt distill`: train one of MonoX's students (fine-tune, self-train, knowledge distillation or
pseudo-labels) on a training subset, with the teacher's logits where the mode needs them."""

from __future__ import annotations

from pathlib import Path

from xlt.core import monitor
from xlt.core.freezing import freeze
from xlt.core.models import load_classifier, load_tokenizer
from xlt.core.training import seed_everything
from xlt.data.item_alignment import declared_alignment
from xlt.evaluate.checkpoint_choice import read_tracking, write_choices
from xlt.families.monox.evaluation import evaluation_records
from xlt.families.monox.job_io import (
    TRACKED_FIELDS,
    TRACKED_NEEDS,
    finish,
    job_identity,
    read_inputs,
    run_axes,
    run_metrics,
)
from xlt.families.monox.training import run_student


def main(args):
    targs, size, split, by_lang = read_inputs(args)
    track_test, track_dev = read_tracking(args, TRACKED_FIELDS, TRACKED_NEEDS)
    axes = run_axes(
        args,
        {
            "mode": args.mode,
            "student": args.model,
            "size": size,
            "seed": targs.seed,
            "temperature": args.temperature if args.mode == "kd" else None,
        },
    )

    tokenizer = load_tokenizer(args.model)
    checkpoint_dir = Path(args.checkpoint_dir) if args.checkpoint_dir else Path(args.out).parent / "checkpoint"

    # the student modes' settings: what training uses and the metrics record
    mode_settings = {
        "teacher_logits": args.teacher_logits,
        "temperature": args.temperature,
        "threshold": args.threshold,
        "rounds": args.rounds,
    }

    def load_student():
        seed_everything(targs.seed)  # the new head's initial weights: torch seeds each process at random
        student = load_classifier(args.model, args.num_labels, args.head)
        freeze(student, args.freeze_depth)
        return student

    with monitor.run(args.tensorboard, Path(args.out).parent, axes, vars(args)):
        outcome = run_student(
            args.mode,
            load_student,
            tokenizer,
            split,
            size,
            targs.seed,
            targs,
            **mode_settings,
            source_lang=args.source_lang,
            checkpoint_dir=checkpoint_dir,
            track=(track_test, track_dev) if track_test else None,
            identity=job_identity(args, "student"),
        )
    model = outcome.model
    run_id = args.run_id or Path(args.out).parent.name
    if track_test:  # the checkpoint-choice table: written first, the metrics file marks the job done
        write_choices(
            Path(args.out).parent / "checkpoints.json",
            "monox",
            run_id,
            axes,
            outcome.result.history,
            outcome.result.best_step,
            track_test,
        )
    metrics = run_metrics(
        args,
        run_id,
        axes,
        outcome,
        targs,
        model,
        split,
        "student",
        mode=args.mode,
        **mode_settings,
        freeze_depth=args.freeze_depth,
    )
    metrics.extend(
        evaluation_records(
            model,
            tokenizer,
            by_lang,
            targs.max_length,
            examples_out=metrics.examples,
            item_aligned=declared_alignment(args.eval_data),
        )
    )
    finish(args, metrics, model, tokenizer, args.out, checkpoint_dir)
