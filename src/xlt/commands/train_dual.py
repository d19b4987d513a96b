"""`xlt train-dual`: LaBSE-style dual encoder on translation pairs (see xlt.families.dual.dual_encoder).

Each --train / --dev file is normalised bitext JSONL (text = non-English side,
text_pair = English); its language is the file's parent directory name
(results/data/{dataset}/{lang}/{split}.jsonl) unless --train-langs / --dev-langs name them.
"""
from __future__ import annotations

import logging
from pathlib import Path

from xlt.core.errors import XltError

HELP = "Train a dual encoder (shared encoder, additive-margin softmax over in-batch negatives); keep the best dev retrieval checkpoint"

log = logging.getLogger(__name__)


def add_arguments(p) -> None:
    from xlt.families.dual.dual_encoder import DUAL_SYMMETRIC
    from xlt.core.pooling import POOLING_MODES
    from xlt.core.training import add_train_arguments

    p.add_argument("--model", required=True, help="hub id or local directory of the encoder to start from")
    p.add_argument("--train", action="append", required=True, metavar="FILE.jsonl", help="bitext for training; repeat per language")
    p.add_argument("--dev", action="append", required=True, metavar="FILE.jsonl",
                   help="bitext for best-checkpoint selection (retrieval accuracy); repeat per language")
    p.add_argument("--train-langs", help="comma-separated codes, one per --train (default: parent directory names)")
    p.add_argument("--dev-langs", help="comma-separated codes, one per --dev (default: parent directory names)")
    p.add_argument("--margin", type=float, default=0.3, help="additive margin taken off the positive pairs' cosine (LaBSE 0.3)")
    p.add_argument("--scale", type=float, default=10.0, help="cosine scale before the softmax (LaBSE 10)")
    p.add_argument("--pooling", default="mean", choices=POOLING_MODES, help="sentence vector from the last layer (default mean)")
    p.add_argument("--symmetric", default="sum", choices=DUAL_SYMMETRIC,
                   help="combine the two directions' cross-entropies: sum (LaBSE) or mean (default sum)")
    p.add_argument("--freeze-depth", type=int, default=-1, help="-1 nothing, 0 embeddings, N embeddings + first N layers")
    p.add_argument("--out", required=True, help="run directory: model/ and train.json are written there")
    p.add_argument("--run-id", default=None)
    p.add_argument("--checkpoint-dir", default=None,
                   help="resumable training state (default: OUT/checkpoint, not an output); removed once the outputs exist")
    add_train_arguments(p)


def check_settings(args) -> None:
    if args.margin < 0 or args.margin >= 2:
        raise XltError(f"--margin {args.margin}: use a value in [0, 2) (cosines lie in [-1, 1]; LaBSE uses 0.3)")
    if args.scale <= 0:
        raise XltError(f"--scale {args.scale}: must be positive (LaBSE uses 10)")
    if args.batch_size < 2:
        raise XltError(f"--batch-size {args.batch_size}: in-batch negatives need at least 2 pairs per batch")


def run(args) -> None:
    from xlt.core.models import config_num_layers
    from xlt.core.checkpoint import remove_checkpoint
    from xlt.data.bitext_files import load_bitexts, resolve_langs
    from xlt.families.dual.dual_encoder import DEV_METRIC, DualSettings, dev_records, train_dual
    from xlt.core.freezing import count_parameters, freeze
    from xlt.core.metrics import MetricsFile
    from xlt.core.models import load_tokenizer
    from xlt.core.sentence_encoder import SentenceEncoder
    from xlt.core.training import result_meta, train_args_from

    targs = train_args_from(args)
    out = Path(args.out)
    axes = {"margin": args.margin, "scale": args.scale, "pooling": args.pooling, "batch_size": targs.batch_size,
            "freeze_depth": args.freeze_depth, "seed": targs.seed}
    metrics = MetricsFile("dual", args.run_id or out.name, axes=axes)
    # all input checks before the model is loaded
    check_settings(args)
    train_bitexts = load_bitexts(args.train, resolve_langs(args.train, args.train_langs))
    dev_bitexts = load_bitexts(args.dev, resolve_langs(args.dev, args.dev_langs))
    depth = config_num_layers(args.model)
    if not -1 <= args.freeze_depth < depth:
        raise XltError(f"--freeze-depth {args.freeze_depth} leaves nothing to train in a model with {depth} layers; "
                       f"use -1 (nothing frozen), 0 (embeddings) .. {depth - 1}")

    tokenizer = load_tokenizer(args.model)
    model = SentenceEncoder.from_pretrained(args.model, pooling=args.pooling, layer=-1)
    freeze(model.encoder, args.freeze_depth)
    settings = DualSettings(margin=args.margin, scale=args.scale, symmetric=args.symmetric)
    losses: list[float] = []
    checkpoint_dir = Path(args.checkpoint_dir) if args.checkpoint_dir else out / "checkpoint"
    result = train_dual(model, tokenizer, train_bitexts, dev_bitexts, settings, targs, losses, checkpoint_dir)
    model.save(out / "model", tokenizer)

    metrics.meta.update(result_meta(result, targs) | count_parameters(model) | {
        "model": args.model,
        "loss": {"name": "additive_margin_softmax", "margin": args.margin, "scale": args.scale,
                 "symmetric": args.symmetric, "normalize": True},
        "train_pairs": {b.lang: len(b.texts) for b in train_bitexts},
        "dev_pairs": {b.lang: len(b.texts) for b in dev_bitexts},
        "loss_curve": _curve(losses, targs.log_every),  # batches of this process (after a resume: from the checkpoint on)
        "history": result.history,
    })
    metrics.extend(dev_records(model, tokenizer, dev_bitexts, targs.max_length))
    metrics.add(DEV_METRIC + "_mean", result.best_score, split="dev")
    metrics.write(out / "train.json")
    remove_checkpoint(checkpoint_dir)
    log.info("best dev retrieval accuracy %.4f at step %d", result.best_score, result.best_step)


def _curve(losses: list[float], every: int) -> list[dict]:
    """Mean loss over each window of `every` batches (forward passes): a compact training curve."""
    every = max(1, every)
    return [{"batches": min(start + every, len(losses)), "loss": round(sum(losses[start:start + every]) / len(losses[start:start + every]), 5)}
            for start in range(0, len(losses), every)]
