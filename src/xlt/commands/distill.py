HELP = "MonoX: train a student (finetune, self_train, kd or pl) and score it zero-shot per language"


def add_arguments(p):
    from xlt.families.monox.training import MODES
    from xlt.core.training import add_train_arguments

    p.add_argument("--mode", required=True, choices=MODES)
    p.add_argument("--model", required=True, help="student: hub id or local directory")
    p.add_argument("--split", required=True, help="directory written by `xlt monox-split`")
    p.add_argument("--size", default="all", help="labelled training examples (nested stratified subsample) or all")
    p.add_argument("--num-labels", type=int, required=True)
    p.add_argument("--teacher-logits", default=None, help="kd/pl: logits.npz written by `xlt train-teacher`")
    p.add_argument("--temperature", type=float, default=0.1, help="kd: teacher softmax temperature (paper: 0.1)")
    p.add_argument("--threshold", type=float, default=0.0, help="pl/self_train: keep pseudo labels with max prob >= this")
    p.add_argument("--rounds", type=int, default=1, help="self_train: pseudo-labelling rounds after the first fine-tuning")
    p.add_argument("--eval-data", nargs="+", required=True, help="normalised JSONL test files, one per language")
    p.add_argument("--eval-langs", required=True, help="comma-separated languages, in the order of --eval-data")
    p.add_argument("--source-lang", default="en")
    p.add_argument("--axes", default=None, help="the sweep row as JSON (meta.axes of the metrics file)")
    p.add_argument("--save-model", default=None, help="also save the student to this directory")
    p.add_argument("--run-id", default=None)
    p.add_argument("--out", required=True, help="metrics JSON path")
    p.add_argument("--checkpoint-dir", default=None,
                   help="resumable training state (default: checkpoint/ beside --out, not an output); removed once the outputs exist")
    add_train_arguments(p)


def eval_sets(paths: list[str], langs: str) -> dict:
    from xlt.core.errors import XltError
    from xlt.core.io import read_jsonl

    names = [lang for lang in langs.split(",") if lang]
    if len(names) != len(paths):
        raise XltError(f"--eval-langs names {len(names)} languages but --eval-data has {len(paths)} files")
    by_lang = {lang: read_jsonl(path) for lang, path in zip(names, paths)}
    empty = [lang for lang, rows in by_lang.items() if not rows]
    if empty:
        raise XltError(f"no evaluation examples for {empty}")
    return by_lang


def check_labels(split, num_labels: int) -> None:
    from xlt.core.errors import XltError

    labels = {r["label"] for r in split.labelled + split.dev}
    bad = sorted(label for label in labels if not 0 <= label < num_labels)
    if bad:
        raise XltError(f"labels {bad} in the split are outside 0..{num_labels - 1}; check --num-labels")


def run_axes(args, derived: dict) -> dict:
    """meta.axes: the workflow's sweep row (--axes) or, run by hand, the arguments."""
    from xlt.core.metrics import parse_axes

    return parse_axes(args.axes) if args.axes else derived


def read_inputs(args):
    """What the teacher and the student jobs read and check before any model loads:
    (training settings, labelled size, split, evaluation rows by language)."""
    from xlt.families.monox.training import parse_size, read_split
    from xlt.core.training import train_args_from

    targs, size = train_args_from(args), parse_size(args.size)
    split = read_split(args.split)
    check_labels(split, args.num_labels)
    return targs, size, split, eval_sets(args.eval_data, args.eval_langs)


def finish(args, metrics, model, tokenizer, out, checkpoint_dir) -> None:
    """Save the model if asked, write the metrics, then drop the resumable state (outputs exist)."""
    from xlt.core.models import save_model
    from xlt.families.monox.training import clear_checkpoints

    if args.save_model:
        save_model(model, tokenizer, args.save_model)
    metrics.write(out)
    clear_checkpoints(checkpoint_dir)
    for r in metrics.records:
        print(r)


def run(args):
    from pathlib import Path

    from xlt.core.freezing import count_parameters
    from xlt.core.metrics import MetricsFile
    from xlt.core.models import load_classifier, load_tokenizer
    from xlt.families.monox.training import evaluation_records, run_student
    from xlt.core.training import result_meta

    import time

    started = time.time()  # wall_s of the metrics file covers the whole job, not just its writing
    targs, size, split, by_lang = read_inputs(args)
    axes = run_axes(args, {"mode": args.mode, "student": args.model, "size": size, "seed": targs.seed,
                           "temperature": args.temperature if args.mode == "kd" else None})

    tokenizer = load_tokenizer(args.model)
    checkpoint_dir = Path(args.checkpoint_dir) if args.checkpoint_dir else Path(args.out).parent / "checkpoint"
    outcome = run_student(args.mode, lambda: load_classifier(args.model, args.num_labels), tokenizer, split, size,
                          targs.seed, targs, teacher_logits=args.teacher_logits, temperature=args.temperature,
                          threshold=args.threshold, rounds=args.rounds, source_lang=args.source_lang,
                          checkpoint_dir=checkpoint_dir)
    model = outcome.model
    metrics = MetricsFile("monox", args.run_id or Path(args.out).parent.name, axes=axes, started=started)
    metrics.meta.update(result_meta(outcome.result, targs) | count_parameters(model) | outcome.meta | {
        "model": args.model, "role": "student", "mode": args.mode, "teacher_logits": args.teacher_logits,
        "temperature": args.temperature, "threshold": args.threshold, "rounds": args.rounds,
        "split": split.meta, "history": outcome.result.history})
    metrics.extend(outcome.records)
    metrics.extend(evaluation_records(model, tokenizer, by_lang, targs.max_length))
    finish(args, metrics, model, tokenizer, args.out, checkpoint_dir)
