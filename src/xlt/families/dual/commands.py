"""`xlt train-dual` and `xlt dual-prefix-states` (and, from mining_commands, `make-bucc` and `mine`):
the dual-encoder family's jobs.

train-dual: each --train / --dev file is normalised bitext JSONL (text = non-English side,
text_pair = English); its language is the file's parent directory name
(results/data/{dataset}/{lang}/{split}.jsonl) unless --train-langs / --dev-langs name them.
With --freeze-depth N >= 0, --cache-frozen-prefix runs the frozen layers once per distinct
training sentence and --prefix-states reads them from the store `xlt dual-prefix-states`
writes once for every depth of a sweep (xlt.families.dual.prefix: semantics and checks).

make-bucc and mine live in xlt.families.dual.mining_commands.
"""

from __future__ import annotations

import logging
from pathlib import Path

from xlt.core.errors import XltError
from xlt.core.verbs import Verb, add_run_arguments, family_group
from xlt.families.dual.mining_commands import VERBS as MINING_VERBS

GROUP = family_group("dual", "train a LaBSE-style dual encoder; mine parallel sentences BUCC-style")

log = logging.getLogger(__name__)


# ---------------------------------------------------------------- train-dual


def _train_dual_arguments(p) -> None:
    from xlt.core.choices import POOLING_MODES
    from xlt.core.train_args import add_train_arguments
    from xlt.evaluate.retrieval import DEFAULT_MATCH, MATCH_RULES
    from xlt.families.dual.choices import DUAL_OBJECTIVES, DUAL_SYMMETRIC

    p.add_argument("--model", required=True, help="hub id or local directory of the encoder to start from")
    p.add_argument(
        "--train", action="append", required=True, metavar="FILE.jsonl", help="bitext for training; repeat per language"
    )
    p.add_argument(
        "--dev",
        action="append",
        required=True,
        metavar="FILE.jsonl",
        help="bitext for best-checkpoint selection (retrieval accuracy); repeat per language",
    )
    p.add_argument(
        "--match",
        choices=MATCH_RULES,
        default=DEFAULT_MATCH,
        help="dev retrieval correctness, the Tatoeba test's rule (`xlt eval-embeddings --match`): "
        "index = the retrieved sentence is the gold one (default); text = an equal string at "
        "another index counts",
    )
    p.add_argument("--train-langs", help="comma-separated codes, one per --train (default: parent directory names)")
    p.add_argument("--dev-langs", help="comma-separated codes, one per --dev (default: parent directory names)")
    p.add_argument(
        "--objective",
        choices=DUAL_OBJECTIVES,
        default=DUAL_OBJECTIVES[0],
        help="additive_margin: LaBSE's in-batch softmax (default); mse_distill: the student's vectors of "
        "both sides regress onto a fixed --teacher's vector of the English side (Reimers & Gurevych "
        "2020; --margin, --scale and --symmetric do not apply)",
    )
    p.add_argument(
        "--teacher",
        default=None,
        help="mse_distill: hub id or local directory of the teacher sentence "
        "encoder (e.g. an sbert run's model directory); it embeds each distinct English sentence once",
    )
    p.add_argument(
        "--teacher-pooling",
        default=None,
        choices=POOLING_MODES,
        help="mse_distill: the teacher's pooling (default: what its directory recorded, else mean)",
    )
    p.add_argument(
        "--teacher-layer",
        type=int,
        default=None,
        help="mse_distill: the teacher's pooled hidden state (default: what its directory recorded, else -1)",
    )
    p.add_argument(
        "--distill-examples",
        choices=("pairs", "sentences"),
        default="pairs",
        help="mse_distill: an example is a translation pair (both sides, default) or one sentence, "
        "as make_multilingual.py's ParallelSentencesDataset (the English one and each translation)",
    )
    p.add_argument(
        "--max-sentences-per-language",
        type=int,
        default=0,
        help="mse_distill: the first N training pairs of each language (after --max-sentence-chars); 0 = all",
    )
    p.add_argument(
        "--max-sentence-chars",
        type=int,
        default=0,
        help="mse_distill: skip a training pair with a side longer than N characters; 0 = no limit",
    )
    p.add_argument(
        "--margin", type=float, default=0.3, help="additive margin taken off the positive pairs' cosine (LaBSE 0.3)"
    )
    p.add_argument("--scale", type=float, default=10.0, help="cosine scale before the softmax (LaBSE 10)")
    p.add_argument(
        "--pooling", default="mean", choices=POOLING_MODES, help="sentence vector from the last layer (default mean)"
    )
    p.add_argument(
        "--prompt",
        default="",
        help="text put before every sentence in training, dev selection and the "
        "dev records, e.g. 'query: ' for E5 (the config's models.<name>.prompt, which its evaluation jobs get "
        "too; default none)",
    )
    p.add_argument(
        "--symmetric",
        default="sum",
        choices=DUAL_SYMMETRIC,
        help="combine the two directions' cross-entropies: sum (LaBSE) or mean (default sum)",
    )
    p.add_argument(
        "--freeze-depth", type=int, default=-1, help="-1 nothing, 0 embeddings, N embeddings + first N layers"
    )
    p.add_argument(
        "--cache-frozen-prefix",
        action="store_true",
        help="run the frozen layers once per distinct training sentence (eval mode: no dropout below the "
        "boundary; at the training's --precision) and train only the layers above; needs "
        "--freeze-depth >= 0",
    )
    p.add_argument(
        "--prefix-states",
        default=None,
        metavar="DIR",
        help="read the frozen layers' output from this store (`xlt dual-prefix-states`, one pass for the "
        "whole sweep) instead of computing it; --cache-frozen-prefix's semantics",
    )
    p.add_argument("--out", required=True, help="run directory: model/ and train.json are written there")
    add_run_arguments(p, "--run-id", "--axes", run_id_default="the --out directory's name")
    p.add_argument(
        "--checkpoint-dir",
        default=None,
        help="resumable training state (default: OUT/checkpoint, not an output); removed once the outputs exist",
    )
    add_train_arguments(p)


def _check_train_dual(args) -> None:
    if args.margin < 0 or args.margin >= 2:
        raise XltError(f"--margin {args.margin}: use a value in [0, 2) (cosines lie in [-1, 1]; LaBSE uses 0.3)")
    if args.scale <= 0:
        raise XltError(f"--scale {args.scale}: must be positive (LaBSE uses 10)")
    if args.batch_size < 2:
        raise XltError(f"--batch-size {args.batch_size}: in-batch negatives need at least 2 pairs per batch")
    from xlt.families.dual.plan import check_grad_accum

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
        from xlt.families.dual.prefix import check_cacheable

        check_cacheable(args.freeze_depth)


def _train_dual(args) -> None:
    from xlt.core import monitor
    from xlt.core.checkpoint import remove_checkpoint
    from xlt.core.freezing import count_parameters, freeze
    from xlt.core.metrics import MetricsFile, parse_axes
    from xlt.core.models import config_num_layers, load_tokenizer
    from xlt.core.prefix_cache import prefix_axes
    from xlt.core.sentence_encoder import SentenceEncoder
    from xlt.core.train_args import train_args_from
    from xlt.core.training import result_meta
    from xlt.data.bitext_files import load_bitexts, resolve_langs
    from xlt.families.dual.dual_encoder import DEV_METRIC, DualSettings, dev_records, train_dual, with_prompt

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
            from xlt.families.dual.distill_commands import train_distilled

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
    from xlt.core.checkpoint import model_inputs, run_identity
    from xlt.core.prefix_store import store_files

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
    from xlt.families.dual.dual_encoder import pairs_from_bitexts

    pairs = pairs_from_bitexts(train_bitexts)
    if args.prefix_states:
        from xlt.core.models import pick_device
        from xlt.core.train_args import precision_label
        from xlt.core.training import autocast_dtype
        from xlt.families.dual.prefix import load_cached_dual

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
        from xlt.core.models import pick_device
        from xlt.families.dual.prefix import prepare_cached_dual

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


# ---------------------------------------------------------------- dual-prefix-states


def _dual_prefix_states_arguments(p) -> None:
    from xlt.core.train_args import add_store_arguments

    p.add_argument("--model", required=True, help="hub id or local directory (the sweep's pretrained encoder)")
    p.add_argument(
        "--train",
        action="append",
        required=True,
        metavar="FILE.jsonl",
        help="the train-dual jobs' --train files, in their order; repeat per language",
    )
    p.add_argument("--prompt", default="", help="the train-dual jobs' --prompt: text put before every sentence")
    add_store_arguments(p, "train-dual", "dual.prefix_states")


def _dual_prefix_states(args) -> None:
    from xlt.core.manifest import sha256
    from xlt.core.models import config_hidden_size, config_num_layers, load_encoder, load_tokenizer, pick_device
    from xlt.core.prefix_store import check_store_size, parse_depths, store_nbytes, token_lengths, write_prefix_store
    from xlt.core.train_args import precision_label
    from xlt.core.training import autocast_dtype
    from xlt.data.bitext_files import load_bitexts, resolve_langs
    from xlt.families.dual.dual_encoder import pairs_from_bitexts, with_prompt
    from xlt.families.dual.prefix import STORE_SETTINGS, distinct_sentences, sentence_collate, store_expected

    depths = parse_depths(args.depths)
    bitexts = with_prompt(load_bitexts(args.train, resolve_langs(args.train, None)), args.prompt)
    layers = config_num_layers(args.model)
    if depths[-1] >= layers:
        raise XltError(
            f"--depths {args.depths!r}: depth {depths[-1]} leaves nothing to train in a model with {layers} "
            f"layers; train-dual takes 0 .. {layers - 1}"
        )
    sentences, _ = distinct_sentences(pairs_from_bitexts(bitexts))
    tokenizer = load_tokenizer(args.model)
    collate = sentence_collate(tokenizer, args.max_length)
    # the exact size, from the tokenised lengths, before the model loads or runs
    lengths = token_lengths(sentences, collate, args.batch_size)
    hidden_size = config_hidden_size(args.model)
    nbytes = store_nbytes(sum(lengths), len(lengths), hidden_size, depths, args.storage_dtype)
    check_store_size(
        nbytes,
        args.max_gib,
        depths=depths,
        tokens=sum(lengths),
        hidden_size=hidden_size,
        storage_dtype=args.storage_dtype,
        settings=STORE_SETTINGS,
        depths_setting="dual.freeze_depths",
    )
    device = pick_device(args.device)
    amp_dtype = autocast_dtype(args.precision, device)[0]  # the train-dual jobs' autocast
    model = load_encoder(args.model).to(device)
    meta = write_prefix_store(
        model,
        depths,
        sentences,
        collate,
        args.batch_size,
        lengths,
        args.out,
        device,
        args.storage_dtype,
        settings=STORE_SETTINGS,
        amp_dtype=amp_dtype,
        meta={
            **store_expected(args.model, args.max_length, sentences, precision_label(amp_dtype)),
            "family": "dual",
            "train": args.train,
            "train_sha256": [sha256(f) for f in args.train],
        },
    )
    print(
        f"stored depths {meta['depths']} of {meta['examples']} distinct sentences ({meta['tokens']} tokens, "
        f"{meta['precision']} compute, {meta['storage_dtype']}): {meta['nbytes'] / 2**30:.3f} GiB "
        f"in {meta['compute_s']:.1f} s"
    )


VERBS = {
    "train-dual": Verb(
        "Train a dual encoder (shared encoder, additive-margin softmax over in-batch negatives); "
        "keep the best dev retrieval checkpoint",
        _train_dual_arguments,
        _train_dual,
    ),
    "dual-prefix-states": Verb(
        "Store the frozen-prefix hidden states of the dual training sentences at every freeze "
        "depth of the sweep in one pass (frozen layers in eval mode, under the train-dual "
        "jobs' autocast)",
        _dual_prefix_states_arguments,
        _dual_prefix_states,
    ),
    **MINING_VERBS,
}
