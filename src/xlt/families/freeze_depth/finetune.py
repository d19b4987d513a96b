"""`xlt finetune`: fine-tune a classifier with its first N layers frozen (the embeddings and the
layers below the depth), keeping the best dev checkpoint; the run's metrics and model."""

from __future__ import annotations

from pathlib import Path

from xlt.core import monitor
from xlt.core.checkpoint import model_inputs, remove_checkpoint, run_identity
from xlt.core.classification import accuracy_records, classification_loss, make_collate, predict_logits
from xlt.core.freezing import count_parameters, freeze
from xlt.core.manifest import sha256
from xlt.core.metrics import MetricsFile, parse_axes
from xlt.core.models import load_classifier, load_tokenizer, pick_device, require_model_files, save_model
from xlt.core.padding import pad_multiple
from xlt.core.train_args import precision_label, train_args_from
from xlt.core.train_inputs import DevSelection, Objective, Resumable
from xlt.core.training import autocast_dtype, result_meta, seed_everything, train
from xlt.data.records import read_records
from xlt.evaluate.checkpoint_choice import (
    TRACKED,
    read_tracking,
    tracked_scores,
    tracking_identity,
    without_predictions,
    write_choices,
)
from xlt.families.freeze_depth.inputs import CLASSIFICATION_FIELDS, CLASSIFICATION_NEEDS, check_freeze_depth
from xlt.families.freeze_depth.store_names import STORE_RERUN
from xlt.frozen_prefix.cached_top import prepare_cached_training
from xlt.frozen_prefix.prefix_cache import cache_examples, collate_prefix_states, prefix_axes
from xlt.frozen_prefix.prefix_store import load_cached_training, store_files


def main(args):
    # every input is checked before the model loads
    targs = train_args_from(args)
    extra_axes = parse_axes(args.axes)
    train_set = read_records(args.train, CLASSIFICATION_FIELDS, CLASSIFICATION_NEEDS)
    dev_set = read_records(args.dev, CLASSIFICATION_FIELDS, CLASSIFICATION_NEEDS)
    track_test, track_dev = read_tracking(args, CLASSIFICATION_FIELDS, CLASSIFICATION_NEEDS)
    require_model_files(args.model)
    check_freeze_depth(args.model, args.freeze_depth)
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
    collate = make_collate(tokenizer, targs.max_length, pad_to_multiple_of=pad_multiple(targs.device))
    cached = None
    if args.prefix_states:  # the sweep's shared store (`xlt prefix-states`): this depth's boundary only
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
        cached = prepare_cached_training(
            model,
            args.freeze_depth,
            train_set,
            collate,
            targs.batch_size,
            pick_device(targs.device),
            precision=targs.precision,
        )
    identity = finetune_identity(args)  # after the store's checks
    # the axes known before training (the table's cache and precision columns follow from the run)
    known_axes = {"freeze_depth": args.freeze_depth, "seed": targs.seed, **extra_axes}
    with monitor.run(args.tensorboard, out, known_axes, vars(args)):
        if cached is not None:
            # frozen layers ran once, in eval mode (the documented "frozen part without dropout") under the
            # training's autocast; a resumed
            # run recomputes (or rereads) the cache, which is deterministic, and restores the top from the checkpoint
            result = train(
                cached.top,
                Objective(cached.dataset, collate_prefix_states, classification_loss),
                targs,
                dev=DevSelection(
                    lambda top: evaluate(top.full_model),
                    loss_examples=_dev_states(model, args, dev_set, collate, targs) if args.tensorboard else None,
                ),
                checkpoint=Resumable(checkpoint_dir, identity),
            )
        else:
            result = train(
                model,
                Objective(train_set, collate, classification_loss),
                targs,
                dev=DevSelection(evaluate, loss_examples=dev_set),
                checkpoint=Resumable(checkpoint_dir, identity),
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


def finetune_identity(args) -> dict:
    """What a resumed finetune job must share with the one that wrote its checkpoint, besides the
    training settings (xlt.core.training keys those): model, head, depth, prefix semantics, inputs."""

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


def _dev_states(model, args, dev_set, collate, targs):
    """The dev set through the frozen prefix (once, as the training set's states: eval mode, the
    training's autocast), for monitoring's eval/loss of a cached run."""
    device = pick_device(targs.device)
    amp_dtype = autocast_dtype(targs.precision, device)[0]
    return cache_examples(model, args.freeze_depth, dev_set, collate, targs.batch_size, device, amp_dtype=amp_dtype)
