"""`xlt monox-split`, `xlt train-teacher`, `xlt distill` and `xlt monox-table`: the MonoX jobs."""

from __future__ import annotations

from xlt.core.verbs import Verb, add_run_arguments, family_group

GROUP = family_group("monox", "MonoX's teacher and students (fine-tune, self-train, KD, PL); its zero-shot table")

TRACKED_FIELDS = ("text", "label")
TRACKED_NEEDS = (
    "the checkpoint-choice table scores a classifier and needs labelled records (text, [text_pair,] "
    "label, as xlt prepare-data writes them)"
)


def _monox_split_arguments(p):
    p.add_argument("--train", required=True, help="normalised JSONL of the source-language training split")
    pool = p.add_mutually_exclusive_group(required=True)
    pool.add_argument(
        "--labelled-fraction",
        type=float,
        help="XNLI-style: this fraction of --train keeps its labels, the rest is the unlabelled pool",
    )
    pool.add_argument("--unlabelled", help="CLS-style: normalised JSONL of a separate unlabelled pool")
    dev = p.add_mutually_exclusive_group(required=True)
    dev.add_argument("--dev", help="normalised JSONL of the dev set")
    dev.add_argument("--dev-fraction", type=float, help="CLS-style: hold out this fraction of the labelled data as dev")
    p.add_argument("--seed", type=int, required=True, help="seed of the labelled/unlabelled and dev draws")
    p.add_argument("--name", default="", help="the dataset's name, recorded in split.json")
    p.add_argument("--out", required=True, help="directory: labelled.jsonl, unlabelled.jsonl, dev.jsonl, split.json")


def _monox_split(args):
    from xlt.core.io import read_jsonl
    from xlt.families.monox.data_split import make_split, write_split

    split = make_split(
        read_jsonl(args.train),
        args.seed,
        labelled_fraction=args.labelled_fraction,
        unlabelled=read_jsonl(args.unlabelled) if args.unlabelled else None,
        dev=read_jsonl(args.dev) if args.dev else None,
        dev_fraction=args.dev_fraction,
        name=args.name,
    )
    write_split(split, args.out)
    print(split.meta["counts"])


def _job_arguments(p, role: str, out_help: str, checkpoint_help: str) -> None:
    """The flags train-teacher and distill share (after their own)."""
    from xlt.core.train_args import add_train_arguments

    p.add_argument(
        "--source-lang", default="en", help="language of the training data (its dev accuracy is recorded under it)"
    )
    add_run_arguments(p, "--axes", axes_default="the job's own arguments: model, size, seed, ...")
    p.add_argument("--save-model", default=None, help=f"also save the fine-tuned {role} to this directory")
    add_run_arguments(p, "--run-id", run_id_default="the --out directory's name")
    p.add_argument("--out", required=True, help=out_help)
    p.add_argument("--checkpoint-dir", default=None, help=checkpoint_help)
    add_train_arguments(p)


def _split_arguments(p, role: str) -> None:
    from xlt.core.choices import HEADS

    p.add_argument("--model", required=True, help=f"{role}: hub id or local directory")
    p.add_argument(
        "--head",
        choices=HEADS,
        default="auto",
        help="classification head: pooler (transformers' own), mean (mask-aware mean + linear, for "
        "checkpoints without a trained pooler), auto (pooler when the checkpoint has one; default)",
    )
    p.add_argument("--split", required=True, help="directory written by `xlt monox-split`")
    p.add_argument("--size", default="all", help="labelled training examples (nested stratified subsample) or all")
    p.add_argument("--num-labels", type=int, required=True, help="number of classes of the task")


def _train_teacher_arguments(p):
    _split_arguments(p, "teacher")
    p.add_argument(
        "--eval-data", nargs="*", default=[], help="normalised JSONL test files (the teacher's own language)"
    )
    p.add_argument("--eval-langs", default="", help="comma-separated languages, in the order of --eval-data")
    _job_arguments(
        p,
        "teacher",
        "run directory: logits.npz and metrics.json are written there",
        "resumable training state (default: OUT/checkpoint, not an output); removed once the outputs exist",
    )


def _train_teacher(args):
    from pathlib import Path

    from xlt.core import monitor
    from xlt.core.freezing import count_parameters
    from xlt.core.metrics import MetricsFile
    from xlt.core.models import load_classifier, load_tokenizer
    from xlt.core.training import result_meta, seed_everything
    from xlt.evaluate.checkpoint_choice import without_predictions
    from xlt.families.monox.evaluation import evaluation_records
    from xlt.families.monox.job_io import finish, read_inputs, run_axes
    from xlt.families.monox.training import run_teacher

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
            identity=_job_identity(args, "teacher"),
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


def _distill_arguments(p):
    from xlt.evaluate.checkpoint_choice import add_tracking_arguments
    from xlt.families.monox.plan import MODES

    p.add_argument(
        "--mode",
        required=True,
        choices=MODES,
        help="finetune (gold only), self_train (own pseudo labels), kd (teacher logits), pl (teacher labels)",
    )
    _split_arguments(p, "student")
    p.add_argument("--teacher-logits", default=None, help="kd/pl: logits.npz written by `xlt train-teacher`")
    p.add_argument("--temperature", type=float, default=0.1, help="kd: teacher softmax temperature (paper: 0.1)")
    p.add_argument(
        "--threshold", type=float, default=0.0, help="pl/self_train: keep pseudo labels with max prob >= this"
    )
    p.add_argument(
        "--rounds", type=int, default=1, help="self_train: pseudo-labelling rounds after the first fine-tuning"
    )
    p.add_argument(
        "--freeze-depth",
        type=int,
        default=-1,
        help="freeze the student's embeddings and first N encoder layers (-1: nothing frozen; 0: the embeddings)",
    )
    p.add_argument("--eval-data", nargs="+", required=True, help="normalised JSONL test files, one per language")
    p.add_argument("--eval-langs", required=True, help="comma-separated languages, in the order of --eval-data")
    add_tracking_arguments(p, "checkpoints.json beside --out")
    _job_arguments(
        p,
        "student",
        "metrics JSON path",
        "resumable training state (default: checkpoint/ beside --out, not an output); removed once the outputs exist",
    )


def _distill(args):
    from pathlib import Path

    from xlt.core import monitor
    from xlt.core.freezing import count_parameters, freeze
    from xlt.core.metrics import MetricsFile
    from xlt.core.models import load_classifier, load_tokenizer
    from xlt.core.training import result_meta, seed_everything
    from xlt.data.item_alignment import declared_alignment
    from xlt.evaluate.checkpoint_choice import read_tracking, without_predictions, write_choices
    from xlt.families.monox.evaluation import evaluation_records
    from xlt.families.monox.job_io import finish, read_inputs, run_axes
    from xlt.families.monox.training import run_student

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
            teacher_logits=args.teacher_logits,
            temperature=args.temperature,
            threshold=args.threshold,
            rounds=args.rounds,
            source_lang=args.source_lang,
            checkpoint_dir=checkpoint_dir,
            track=(track_test, track_dev) if track_test else None,
            identity=_job_identity(args, "student"),
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
    metrics = MetricsFile("monox", run_id, axes=axes)
    metrics.curve = outcome.result.curve
    metrics.meta.update(
        result_meta(outcome.result, targs)
        | count_parameters(model)
        | outcome.meta
        | {
            "model": args.model,
            "role": "student",
            "mode": args.mode,
            "teacher_logits": args.teacher_logits,
            "temperature": args.temperature,
            "threshold": args.threshold,
            "rounds": args.rounds,
            "freeze_depth": args.freeze_depth,
            "split": split.meta,
            "history": without_predictions(outcome.result.history),
        }
    )
    metrics.extend(outcome.records)
    metrics.examples.extend(outcome.examples)
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


def _job_identity(args, role: str) -> dict:
    """What a resumed train-teacher or distill job must share with the one that wrote its
    checkpoint, besides the training settings and the KD temperature (xlt.core.training and
    fit key those): model, head, size, the mode's settings and inputs. The --eval-data files are
    read after training only."""
    from xlt.core.checkpoint import model_inputs, run_identity
    from xlt.evaluate.checkpoint_choice import tracking_identity
    from xlt.families.monox.plan import TEACHER_MODES

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


def _monox_table_arguments(p):
    p.add_argument("--table", required=True, help="tidy CSV from `xlt aggregate` (results/tables/monox.csv)")
    p.add_argument("--csv", required=True, help="output: the table as CSV (accuracy in 0..1)")
    p.add_argument("--markdown", help="output: one markdown table per task (percent)")
    p.add_argument("--html", help="output: the same as an HTML page (for the report)")
    p.add_argument("--title", default="", help="heading of the HTML page")


def _monox_table(args):
    from xlt.core.io import atomic_path, write_text
    from xlt.families.monox.plots import accuracy_spread, accuracy_table, table_html, table_markdown
    from xlt.report.aggregate import read_table

    table = read_table(args.table)
    grid, spread = accuracy_table(table), accuracy_spread(table)
    with atomic_path(args.csv) as tmp:
        grid.to_csv(tmp, float_format="%.6f")
    if args.markdown:
        write_text(args.markdown, table_markdown(grid, spread=spread))
    if args.html:
        write_text(args.html, table_html(grid, args.title, spread=spread))
    print(table_markdown(grid, spread=spread))


VERBS = {
    "monox-split": Verb(
        "MonoX: split the source-language data into labelled / unlabelled / dev (seeded, as in the paper)",
        _monox_split_arguments,
        _monox_split,
    ),
    "train-teacher": Verb(
        "MonoX: fine-tune the teacher on the labelled split once and store its logits on labelled + unlabelled data",
        _train_teacher_arguments,
        _train_teacher,
    ),
    "distill": Verb(
        "MonoX: train a student (finetune, self_train, kd or pl) and score it zero-shot per language",
        _distill_arguments,
        _distill,
    ),
    "monox-table": Verb(
        "MonoX: the paper-style accuracy table (method x language, per task) as CSV, markdown and HTML",
        _monox_table_arguments,
        _monox_table,
    ),
}
