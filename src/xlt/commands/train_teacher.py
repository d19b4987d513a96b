HELP = "MonoX: fine-tune the teacher on the labelled split once and store its logits on labelled + unlabelled data"


def add_arguments(p):
    from xlt.core.training import add_train_arguments

    p.add_argument("--model", required=True, help="teacher: hub id or local directory")
    p.add_argument("--split", required=True, help="directory written by `xlt monox-split`")
    p.add_argument("--size", default="all", help="labelled training examples (nested stratified subsample) or all")
    p.add_argument("--num-labels", type=int, required=True)
    p.add_argument("--eval-data", nargs="*", default=[], help="normalised JSONL test files (the teacher's own language)")
    p.add_argument("--eval-langs", default="", help="comma-separated languages, in the order of --eval-data")
    p.add_argument("--source-lang", default="en")
    p.add_argument("--axes", default=None, help="the sweep row as JSON (meta.axes of the metrics file)")
    p.add_argument("--save-model", default=None, help="also save the fine-tuned teacher to this directory")
    p.add_argument("--run-id", default=None)
    p.add_argument("--out", required=True, help="run directory: logits.npz and metrics.json are written there")
    p.add_argument("--checkpoint-dir", default=None,
                   help="resumable training state (default: OUT/checkpoint, not an output); removed once the outputs exist")
    add_train_arguments(p)


def run(args):
    from pathlib import Path

    from xlt.commands.distill import finish, read_inputs, run_axes
    from xlt.core.freezing import count_parameters
    from xlt.core.metrics import MetricsFile
    from xlt.core.models import load_classifier, load_tokenizer
    from xlt.families.monox.training import evaluation_records, run_teacher
    from xlt.core.training import result_meta

    import time

    started = time.time()  # wall_s of the metrics file covers the whole job, not just its writing
    targs, size, split, by_lang = read_inputs(args)
    out = Path(args.out)
    axes = run_axes(args, {"mode": "teacher", "teacher": args.model, "size": size, "seed": targs.seed})

    tokenizer = load_tokenizer(args.model)
    model = load_classifier(args.model, args.num_labels)
    checkpoint_dir = Path(args.checkpoint_dir) if args.checkpoint_dir else out / "checkpoint"
    outcome = run_teacher(model, tokenizer, split, size, targs.seed, targs, out / "logits.npz",
                          teacher_name=args.model, source_lang=args.source_lang, checkpoint_dir=checkpoint_dir)
    metrics = MetricsFile("monox", args.run_id or out.name, axes=axes, started=started)
    metrics.meta.update(result_meta(outcome.result, targs) | count_parameters(model) | outcome.meta
                        | {"model": args.model, "role": "teacher", "split": split.meta, "history": outcome.result.history})
    metrics.extend(outcome.records)
    # a monolingual teacher is scored in its own language only: no cross-language average
    metrics.extend(evaluation_records(model, tokenizer, by_lang, targs.max_length, with_average=False))
    finish(args, metrics, model, tokenizer, out / "metrics.json", checkpoint_dir)
