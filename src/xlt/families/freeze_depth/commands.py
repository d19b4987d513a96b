"""`xlt finetune` and `xlt evaluate`: the freeze-depth family's jobs."""

from __future__ import annotations

from xlt.core.verbs import Verb, add_run_arguments, family_group

GROUP = family_group("freeze_depth", "fine-tune a classifier with the first N layers frozen; zero-shot accuracy")

STORE_SETTINGS = "freeze_depth.prefix_states"  # the config section of its shared prefix store (xlt.core.prefix_store)
STORE_RERUN = "`xlt prefix-states` (snakemake --forcerun prefix_states)"  # the job that writes the store
CLASSIFICATION_FIELDS = ("text", "label")
CLASSIFICATION_NEEDS = (
    "this family trains and scores a classifier and needs an nli or sentiment dataset "
    "(records with text, [text_pair,] label, as xlt prepare-data writes them)"
)


def _check_freeze_depth(model: str, depth: int) -> None:
    from xlt.core.errors import XltError
    from xlt.core.models import config_num_layers

    layers = config_num_layers(model)  # config.json only: no weights are loaded for this
    if not -1 <= depth <= layers:
        raise XltError(
            f"--freeze-depth {depth} is out of range for {model} with {layers} layers (its config.json); "
            f"use -1 (nothing frozen), 0 (embeddings) .. {layers}"
        )


def _finetune_arguments(p):
    from xlt.core.choices import HEADS
    from xlt.core.train_args import add_train_arguments
    from xlt.evaluate.checkpoint_choice import add_tracking_arguments

    p.add_argument("--model", required=True, help="hub id or local directory")
    p.add_argument(
        "--head",
        choices=HEADS,
        default="auto",
        help="classification head: pooler (transformers' own), mean (mask-aware mean + linear, for "
        "checkpoints without a trained pooler), auto (pooler when the checkpoint has one; default)",
    )
    p.add_argument("--train", required=True, help="normalised JSONL (text, [text_pair], label)")
    p.add_argument("--dev", required=True, help="normalised JSONL for best-checkpoint selection")
    p.add_argument("--num-labels", type=int, required=True, help="number of classes of the task (3 for NLI)")
    p.add_argument(
        "--freeze-depth", type=int, default=-1, help="-1 nothing, 0 embeddings, N embeddings + first N layers"
    )
    p.add_argument(
        "--cache-frozen-prefix",
        action="store_true",
        help="compute the frozen layers once (frozen part without dropout, at the training's "
        "--precision) and train only the top",
    )
    p.add_argument(
        "--prefix-states",
        default=None,
        metavar="DIR",
        help="read the frozen part's output from this store (`xlt prefix-states`, one pass for the whole "
        "sweep) instead of computing it; implies --cache-frozen-prefix's semantics",
    )
    p.add_argument("--out", required=True, help="run directory: model/ and train.json are written there")
    add_run_arguments(p, "--run-id", "--axes", run_id_default="the --out directory's name")
    p.add_argument(
        "--checkpoint-dir",
        default=None,
        help="resumable training state (default: OUT/checkpoint, not an output); removed once the outputs exist",
    )
    add_tracking_arguments(p, "OUT/checkpoints.json")
    add_train_arguments(p)


def _finetune(args):
    from pathlib import Path

    from xlt.core import monitor
    from xlt.core.checkpoint import remove_checkpoint
    from xlt.core.classification import accuracy_records, classification_loss, make_collate, predict_logits
    from xlt.core.freezing import count_parameters, freeze
    from xlt.core.metrics import MetricsFile, parse_axes
    from xlt.core.models import load_classifier, load_tokenizer, require_model_files, save_model
    from xlt.core.prefix_cache import prefix_axes
    from xlt.core.train_args import train_args_from
    from xlt.core.training import result_meta, seed_everything, train
    from xlt.data.records import read_records
    from xlt.evaluate.checkpoint_choice import (
        TRACKED,
        read_tracking,
        tracked_scores,
        without_predictions,
        write_choices,
    )

    # every input is checked before the model loads
    targs = train_args_from(args)
    extra_axes = parse_axes(args.axes)
    train_set = read_records(args.train, CLASSIFICATION_FIELDS, CLASSIFICATION_NEEDS)
    dev_set = read_records(args.dev, CLASSIFICATION_FIELDS, CLASSIFICATION_NEEDS)
    track_test, track_dev = read_tracking(args, CLASSIFICATION_FIELDS, CLASSIFICATION_NEEDS)
    require_model_files(args.model)
    _check_freeze_depth(args.model, args.freeze_depth)
    tokenizer = load_tokenizer(args.model)
    seed_everything(targs.seed)  # the new head's initial weights: torch seeds each process at random
    model = load_classifier(args.model, args.num_labels, args.head)
    freeze(model, args.freeze_depth)

    def evaluate(m):
        acc = accuracy_records(m, tokenizer, {"dev": dev_set}, targs.max_length)[0]["value"]
        scores = {"score": acc, "dev_accuracy": acc}
        if track_test:
            scores[TRACKED] = tracked_scores(
                lambda ex: predict_logits(m, tokenizer, ex, targs.max_length).argmax(-1), track_test, track_dev
            )
        return scores

    out = Path(args.out)
    checkpoint_dir = Path(args.checkpoint_dir) if args.checkpoint_dir else out / "checkpoint"
    collate = make_collate(tokenizer, targs.max_length)
    cached = None
    if args.prefix_states:  # the sweep's shared store (`xlt prefix-states`): this depth's boundary only
        from xlt.core.manifest import sha256
        from xlt.core.models import pick_device
        from xlt.core.prefix_store import load_cached_training
        from xlt.core.train_args import precision_label
        from xlt.core.training import autocast_dtype

        # the store's pass must have run under the autocast this run trains with
        precision = precision_label(autocast_dtype(targs.precision, pick_device(targs.device))[0])
        cached = load_cached_training(
            model,
            args.freeze_depth,
            args.prefix_states,
            train_set,
            expected={
                "model": args.model,
                "train_sha256": sha256(args.train),
                "max_length": targs.max_length,
                "precision": precision,
            },
            rerun=STORE_RERUN,
        )
    elif args.cache_frozen_prefix:
        from xlt.core.cached_top import prepare_cached_training
        from xlt.core.models import pick_device

        cached = prepare_cached_training(
            model,
            args.freeze_depth,
            train_set,
            collate,
            targs.batch_size,
            pick_device(targs.device),
            precision=targs.precision,
        )
    identity = _finetune_identity(args)  # after the store's checks
    # the axes known before training (the table's cache and precision columns follow from the run)
    known_axes = {"freeze_depth": args.freeze_depth, "seed": targs.seed, **extra_axes}
    with monitor.run(args.tensorboard, out, known_axes, vars(args)):
        if cached is not None:
            from xlt.core.prefix_cache import collate_prefix_states

            # frozen layers ran once, in eval mode (the documented "frozen part without dropout") under the
            # training's autocast; a resumed
            # run recomputes (or rereads) the cache, which is deterministic, and restores the top from the checkpoint
            result = train(
                cached.top,
                cached.dataset,
                collate_prefix_states,
                classification_loss,
                targs,
                lambda top: evaluate(top.full_model),
                checkpoint_dir=checkpoint_dir,
                identity=identity,
            )
        else:
            result = train(
                model,
                train_set,
                collate,
                classification_loss,
                targs,
                evaluate,
                checkpoint_dir=checkpoint_dir,
                identity=identity,
            )
    save_model(model, tokenizer, out / "model")
    # how the frozen prefix ran: cached (once, eval mode) or in every step (train mode, with dropout),
    # and in which precision (the training's; a store's is checked equal): columns of the tables
    axes = {
        "freeze_depth": args.freeze_depth,
        "seed": targs.seed,
        **extra_axes,
        **prefix_axes(cached.dataset.states if cached else None, result.precision),
    }
    # the checkpoint-choice table (empty without --track-test): written first, train.json marks the job done
    write_choices(
        out / "checkpoints.json",
        "freeze_depth",
        args.run_id or out.name,
        axes,
        result.history,
        result.best_step,
        track_test,
    )
    metrics = MetricsFile("freeze_depth", args.run_id or out.name, axes=axes)
    metrics.curve = result.curve
    metrics.meta.update(
        result_meta(result, targs)
        | count_parameters(model)
        | {"model": args.model, "history": without_predictions(result.history)}
    )
    metrics.meta.update(cache_frozen_prefix=cached is not None, cache_s=round(cached.cache_s, 3) if cached else 0.0)
    if args.prefix_states:
        metrics.meta.update(prefix_states=args.prefix_states)
    metrics.add("dev_accuracy", result.best_score, lang="dev")
    metrics.write(out / "train.json")
    remove_checkpoint(checkpoint_dir)


def _finetune_identity(args) -> dict:
    """What a resumed finetune job must share with the one that wrote its checkpoint, besides the
    training settings (xlt.core.training keys those): model, head, depth, prefix semantics, inputs."""
    from xlt.core.checkpoint import model_inputs, run_identity
    from xlt.core.prefix_store import store_files
    from xlt.evaluate.checkpoint_choice import tracking_identity

    tracked, tracked_files = tracking_identity(args)
    settings = {
        "family": "freeze_depth",
        "model": args.model,
        "head": args.head,
        "num_labels": args.num_labels,
        "freeze_depth": args.freeze_depth,
        "cache_frozen_prefix": args.cache_frozen_prefix,
        "prefix_states": bool(args.prefix_states),
        **tracked,
    }
    store = store_files(args.prefix_states, args.freeze_depth) if args.prefix_states else []
    return run_identity(settings, [args.train, args.dev, *model_inputs(args.model), *store, *tracked_files])


def _prefix_states_arguments(p):
    from xlt.core.choices import HEADS
    from xlt.core.train_args import add_store_arguments

    p.add_argument("--model", required=True, help="hub id or local directory (the sweep's pretrained model)")
    p.add_argument("--head", choices=HEADS, default="auto", help="the head the finetune jobs use (checked for support)")
    p.add_argument("--num-labels", type=int, required=True, help="number of classes of the task")
    p.add_argument("--train", required=True, help="normalised JSONL: the finetune jobs' --train")
    add_store_arguments(p, "finetune", STORE_SETTINGS)


def _prefix_states(args):
    from xlt.core.cached_top import _task_head
    from xlt.core.classification import make_collate
    from xlt.core.errors import XltError
    from xlt.core.manifest import sha256
    from xlt.core.models import config_hidden_size, load_classifier, load_tokenizer, pick_device, require_model_files
    from xlt.core.prefix_store import check_store_size, parse_depths, store_nbytes, token_lengths, write_prefix_store
    from xlt.core.training import autocast_dtype
    from xlt.data.records import read_records

    depths = parse_depths(args.depths)
    train_set = read_records(args.train, CLASSIFICATION_FIELDS, CLASSIFICATION_NEEDS)
    require_model_files(args.model)
    for depth in depths:
        _check_freeze_depth(args.model, depth)
    hidden_size = config_hidden_size(args.model)
    tokenizer = load_tokenizer(args.model)
    collate = make_collate(tokenizer, args.max_length)
    # the exact size, from the tokenised lengths, before the model loads or runs
    lengths = token_lengths(train_set, collate, args.batch_size)
    nbytes = store_nbytes(sum(lengths), len(lengths), hidden_size, depths, args.storage_dtype)
    check_store_size(
        nbytes,
        args.max_gib,
        depths=depths,
        tokens=sum(lengths),
        hidden_size=hidden_size,
        storage_dtype=args.storage_dtype,
        settings=STORE_SETTINGS,
        depths_setting="freeze_depth.depths",
    )
    model = load_classifier(args.model, args.num_labels, args.head)
    try:
        _task_head(model)
    except XltError as err:
        raise XltError(f"{err}; or {STORE_SETTINGS}.shared: false") from None
    device = pick_device(args.device)
    model.to(device)
    amp_dtype = autocast_dtype(args.precision, device)[0]  # the finetune jobs' autocast
    meta = write_prefix_store(
        model,
        depths,
        train_set,
        collate,
        args.batch_size,
        lengths,
        args.out,
        device,
        args.storage_dtype,
        meta={
            "model": args.model,
            "train": args.train,
            "train_sha256": sha256(args.train),
            "max_length": args.max_length,
        },
        settings=STORE_SETTINGS,
        amp_dtype=amp_dtype,
    )
    print(
        f"stored depths {meta['depths']} of {meta['examples']} examples ({meta['tokens']} tokens, "
        f"{meta['precision']} compute, {meta['storage_dtype']}): {meta['nbytes'] / 2**30:.3f} GiB "
        f"in {meta['compute_s']:.1f} s"
    )


def _evaluate_arguments(p):
    p.add_argument("--model", required=True, help="fine-tuned model directory")
    p.add_argument("--data", required=True, nargs="+", help="normalised JSONL files, one per language")
    p.add_argument("--langs", required=True, help="comma-separated languages, in the order of --data")
    p.add_argument("--train-metrics", help="the run's train.json: its meta (axes, steps, ...) is carried over")
    p.add_argument("--family", default="freeze_depth", help="experiment family recorded in the metrics")
    p.add_argument("--max-length", type=int, default=128, help="longest input in tokens; longer inputs are truncated")
    p.add_argument("--batch-size", type=int, default=64, help="examples per forward pass")
    add_run_arguments(p, "--device")
    p.add_argument("--out", required=True, help="metrics JSON path")


def _evaluate(args):
    from pathlib import Path

    from xlt.core.classification import accuracy_records
    from xlt.core.errors import XltError
    from xlt.core.io import read_json
    from xlt.core.metrics import MetricsFile
    from xlt.core.models import load_classifier, load_tokenizer, pick_device, require_model_files
    from xlt.data.item_alignment import declared_alignment
    from xlt.data.records import read_records

    langs = args.langs.split(",")
    if len(langs) != len(args.data):
        raise XltError(f"--langs names {len(langs)} languages but --data has {len(args.data)} files")
    by_lang = {
        lang: read_records(path, CLASSIFICATION_FIELDS, CLASSIFICATION_NEEDS) for lang, path in zip(langs, args.data)
    }
    require_model_files(args.model)
    tokenizer = load_tokenizer(args.model)
    model = load_classifier(args.model, _num_labels(args.model)).to(pick_device(args.device))
    train_meta = read_json(args.train_metrics)["meta"] if args.train_metrics else {}
    metrics = MetricsFile(
        args.family, train_meta.get("run_id", Path(args.model).parent.name), axes=train_meta.get("axes", {})
    )
    metrics.meta.update(
        {k: v for k, v in train_meta.items() if k not in ("family", "run_id", "axes", "wall_s", "history")}
    )
    metrics.extend(
        accuracy_records(
            model,
            tokenizer,
            by_lang,
            args.max_length,
            args.batch_size,
            metrics.examples,
            item_aligned=declared_alignment(args.data),
        )
    )
    metrics.write(args.out)
    for r in metrics.records:
        print(f"{r['lang']:>6}  accuracy {r['value']:.4f}")


def _num_labels(model_dir: str) -> int:
    from transformers import AutoConfig

    return AutoConfig.from_pretrained(model_dir).num_labels


VERBS = {
    "finetune": Verb(
        "Fine-tune a classifier with the first N layers frozen; keep the best dev checkpoint",
        _finetune_arguments,
        _finetune,
    ),
    "prefix-states": Verb(
        "Store the frozen-prefix hidden states of every depth of a freeze-depth sweep in one pass "
        "(frozen layers in eval mode, under the finetune jobs' autocast)",
        _prefix_states_arguments,
        _prefix_states,
    ),
    "evaluate": Verb(
        "Zero-shot classification accuracy of a fine-tuned model per language, and the average",
        _evaluate_arguments,
        _evaluate,
    ),
}
