"""`xlt train-dual`: train a LaBSE-style dual encoder on bitext (additive-margin softmax over
in-batch negatives, or MSE distillation from a teacher's English vectors), optionally on the
frozen prefix's stored states; the run's metrics, loss curve and model."""

from __future__ import annotations

import logging
from pathlib import Path

from xlt.core import monitor
from xlt.core.checkpoint import model_inputs, remove_checkpoint, run_identity
from xlt.core.errors import XltError
from xlt.core.freezing import count_parameters, freeze
from xlt.core.metrics import MetricsFile, parse_axes
from xlt.core.models import config_num_layers, load_tokenizer, pick_device
from xlt.core.sentence_encoder import SentenceEncoder
from xlt.core.train_args import precision_label, train_args_from
from xlt.core.training import autocast_dtype, result_meta
from xlt.data.bitext_files import load_bitexts, resolve_langs
from xlt.families.dual.distill_commands import train_distilled
from xlt.families.dual.dual_encoder import (
    DEV_METRIC,
    DualSettings,
    dev_records,
    pairs_from_bitexts,
    train_dual,
    with_prompt,
)
from xlt.families.dual.plan import check_grad_accum
from xlt.families.dual.prefix import check_cacheable, load_cached_dual, prepare_cached_dual
from xlt.frozen_prefix.prefix_cache import prefix_axes
from xlt.frozen_prefix.prefix_store import store_files

log = logging.getLogger(__name__)


def _check_train_dual(args) -> None:
    if args.margin < 0 or args.margin >= 2:
        raise XltError(f"--margin {args.margin}: use a value in [0, 2) (cosines lie in [-1, 1]; LaBSE uses 0.3)")
    if args.scale <= 0:
        raise XltError(f"--scale {args.scale}: must be positive (LaBSE uses 10)")
    if args.batch_size < 2:
        raise XltError(f"--batch-size {args.batch_size}: in-batch negatives need at least 2 pairs per batch")

    distill = args.objective == "mse_distill"
    if not distill:  # in-batch negatives; distillation's per-example MSE accumulates exactly
        check_grad_accum(args.grad_accum, "--grad-accum")
    if distill and not args.teacher:
        raise XltError(
            "--objective mse_distill needs --teacher: the sentence encoder whose English vectors the "
            "student learns (e.g. an sbert run's model directory)"
        )
    if args.teacher and not distill:
        raise XltError(f"--teacher is only read by --objective mse_distill, not {args.objective}")
    recipe = {
        "--distill-examples": args.distill_examples != "pairs",
        "--max-sentences-per-language": args.max_sentences_per_language != 0,
        "--max-sentence-chars": args.max_sentence_chars != 0,
    }
    if not distill and any(recipe.values()):
        raise XltError(
            f"{', '.join(f for f, set_ in recipe.items() if set_)}: only read by --objective mse_distill, "
            f"not {args.objective}"
        )
    if args.max_sentences_per_language < 0 or args.max_sentence_chars < 0:
        raise XltError("--max-sentences-per-language and --max-sentence-chars: use 0 (no limit) or a positive number")
    if distill and (args.cache_frozen_prefix or args.prefix_states):
        raise XltError("--objective mse_distill trains on raw text: drop --cache-frozen-prefix / --prefix-states")
    if args.cache_frozen_prefix or args.prefix_states:
        check_cacheable(args.freeze_depth)


def main(args) -> None:
    targs = train_args_from(args)
    out = Path(args.out)
    distill = args.objective == "mse_distill"  # margin and scale are the additive-margin loss's, not its axes
    axes = {
        "objective": args.objective,
        "margin": None if distill else args.margin,
        "scale": None if distill else args.scale,
        "pooling": args.pooling,
        "batch_size": targs.batch_size,
        "freeze_depth": args.freeze_depth,
        "seed": targs.seed,
        "trained": True,
        "match": args.match,
    }
    metrics = MetricsFile("dual", args.run_id or out.name, axes=parse_axes(args.axes) | axes)
    # all input checks before the model is loaded
    _check_train_dual(args)
    # the model's prompt goes before every sentence it trains and is selected on, as its evaluation
    # jobs put it (E5 trains and is used with its "query: " prefix)
    train_bitexts = with_prompt(load_bitexts(args.train, resolve_langs(args.train, args.train_langs)), args.prompt)
    dev_bitexts = with_prompt(load_bitexts(args.dev, resolve_langs(args.dev, args.dev_langs)), args.prompt)
    depth = config_num_layers(args.model)
    if not -1 <= args.freeze_depth < depth:
        raise XltError(
            f"--freeze-depth {args.freeze_depth} leaves nothing to train in a model with {depth} layers; "
            f"use -1 (nothing frozen), 0 (embeddings) .. {depth - 1}"
        )

    tokenizer = load_tokenizer(args.model)
    model = SentenceEncoder.from_pretrained(args.model, pooling=args.pooling, layer=-1)
    freeze(model.encoder, args.freeze_depth)
    settings = DualSettings(margin=args.margin, scale=args.scale, symmetric=args.symmetric, match=args.match)
    losses: list[float] = []
    checkpoint_dir = Path(args.checkpoint_dir) if args.checkpoint_dir else out / "checkpoint"
    cached = _cached_prefix(args, model, tokenizer, train_bitexts, targs)
    identity = _train_dual_identity(args, train_bitexts, dev_bitexts)  # after the store's checks
    with monitor.run(args.tensorboard, out, metrics.axes, vars(args)):
        if distill:
            result, loss_meta = train_distilled(
                args, model, tokenizer, train_bitexts, dev_bitexts, targs, losses, checkpoint_dir, identity, out
            )
        else:
            result = train_dual(
                model, tokenizer, train_bitexts, dev_bitexts, settings, targs, losses, checkpoint_dir, cached, identity
            )
            loss_meta = {
                "name": "additive_margin_softmax",
                "margin": args.margin,
                "scale": args.scale,
                "symmetric": args.symmetric,
                "normalize": True,
            }
    model.save(out / "model", tokenizer)

    metrics.axes.update(prefix_axes(cached.dataset.states if cached else None, result.precision))
    metrics.curve = result.curve
    metrics.meta.update(
        result_meta(result, targs)
        | count_parameters(model)
        | {
            "model": args.model,
            "prompt": args.prompt,
            "loss": loss_meta,
            # the training budget the objectives are compared at: optimiser steps x sentences a step
            "sentences_seen": sentences_seen(result.steps, targs.batch_size, args.objective, args.distill_examples),
            "train_pairs": {b.lang: len(b.texts) for b in train_bitexts},
            "dev_pairs": {b.lang: len(b.texts) for b in dev_bitexts},
            "loss_curve": _curve(
                losses, targs.log_every
            ),  # batches of this process (after a resume: from the checkpoint on)
            "history": result.history,
            "cache_frozen_prefix": cached is not None,
            "cache_s": round(cached.cache_s, 3) if cached else 0.0,
        }
        | ({"prefix_states": args.prefix_states} if args.prefix_states else {})
    )
    # the kept checkpoint's dev retrieval, with its retrieved indices for the intervals
    metrics.extend(
        dev_records(model, tokenizer, dev_bitexts, targs.max_length, examples_out=metrics.examples, match=args.match)
    )
    metrics.add(DEV_METRIC + "_mean", result.best_score, split="dev")
    metrics.write(out / "train.json")
    remove_checkpoint(checkpoint_dir)
    log.info("best dev retrieval accuracy %.4f at step %d", result.best_score, result.best_step)


def sentences_seen(steps: int, batch_size: int, objective: str, examples: str = "pairs") -> int:
    """Sentences the student embedded in training: steps x batch x sentences an example (an
    additive-margin or `pairs` example is a pair, two; a `sentences` example one)."""
    return steps * batch_size * (1 if objective == "mse_distill" and examples == "sentences" else 2)


def _train_dual_identity(args, train_bitexts, dev_bitexts) -> dict:
    """What a resumed train-dual job must share with the one that wrote its checkpoint, besides the
    training and loss settings (xlt.core.training and train_dual key those): model, pooling, depth,
    languages, inputs."""

    settings = {
        "family": "dual",
        "model": args.model,
        "pooling": args.pooling,
        "prompt": args.prompt,
        "freeze_depth": args.freeze_depth,
        "objective": args.objective,
        "teacher": args.teacher,
        "teacher_pooling": args.teacher_pooling,
        "teacher_layer": args.teacher_layer,
        "cache_frozen_prefix": args.cache_frozen_prefix,
        "prefix_states": bool(args.prefix_states),
        "train_langs": [b.lang for b in train_bitexts],
        "dev_langs": [b.lang for b in dev_bitexts],
    }
    # the distillation's data settings, where set (an unset one keys the checkpoint as before they existed)
    settings |= {
        key: getattr(args, key)
        for key, default in (
            ("distill_examples", "pairs"),
            ("max_sentences_per_language", 0),
            ("max_sentence_chars", 0),
        )
        if getattr(args, key) != default
    }
    store = store_files(args.prefix_states, args.freeze_depth) if args.prefix_states else []
    teacher = model_inputs(args.teacher) if args.teacher else []
    return run_identity(settings, [*args.train, *args.dev, *model_inputs(args.model), *store, *teacher])


def _cached_prefix(args, model, tokenizer, train_bitexts, targs):
    """The frozen prefix's states for --prefix-states (read) or --cache-frozen-prefix (computed), else None."""

    pairs = pairs_from_bitexts(train_bitexts)
    if args.prefix_states:
        # the store's pass must have run under the autocast this run trains with
        precision = precision_label(autocast_dtype(targs.precision, pick_device(targs.device))[0])
        return load_cached_dual(
            model,
            args.freeze_depth,
            args.prefix_states,
            pairs,
            {"model": args.model, "max_length": targs.max_length, "precision": precision},
        )
    if args.cache_frozen_prefix:
        return prepare_cached_dual(
            model,
            args.freeze_depth,
            pairs,
            tokenizer,
            targs.max_length,
            targs.batch_size,
            pick_device(targs.device),
            precision=targs.precision,
        )
    return None


def _curve(losses: list[float], every: int) -> list[dict]:
    """Mean loss over each window of `every` batches (forward passes): a compact training curve."""
    every = max(1, every)
    return [
        {
            "batches": min(start + every, len(losses)),
            "loss": round(sum(losses[start : start + every]) / len(losses[start : start + every]), 5),
        }
        for start in range(0, len(losses), every)
    ]
