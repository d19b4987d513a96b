"""`xlt mine`: BUCC-style bitext mining with an encoder; P/R/F1 at an F1-tuned threshold.

Reads a BUCC-layout directory (see xlt.evaluate.mining), embeds both sides of the tuning
and the test split, mines candidates with the ratio margin, tunes the threshold for F1
on the tuning split and scores the test split with it.
"""
from __future__ import annotations

import logging
from pathlib import Path

from xlt.core.errors import XltError

HELP = "BUCC-style parallel sentence mining (ratio margin, F1-tuned threshold): precision/recall/F1"

log = logging.getLogger(__name__)


def add_arguments(parser) -> None:
    from xlt.evaluate.mining import DEFAULT_K, STRATEGIES
    from xlt.core.pooling import POOLING_MODES

    parser.add_argument("--model", required=True, help="model directory or hub id")
    parser.add_argument("--bucc-dir", required=True, help="directory with {src}-{tgt}.{split}.{src|tgt|gold} files")
    parser.add_argument("--pair", required=True, help="language pair as in the file names, e.g. de-en")
    parser.add_argument("--tune-split", default="dev", help="split with gold pairs on which the threshold is tuned (default dev)")
    parser.add_argument("--test-split", default="test", help="split scored with the tuned threshold (default test)")
    parser.add_argument("--layer", type=int, default=-1, help="hidden-state index to pool (default -1 = last layer)")
    parser.add_argument("--pooling", default="mean", choices=POOLING_MODES)
    parser.add_argument("--k", type=int, default=DEFAULT_K, help=f"neighbourhood size of the ratio margin (default {DEFAULT_K})")
    parser.add_argument("--strategy", default="max", choices=STRATEGIES, help="candidate extraction (default max)")
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--max-length", type=int, default=128)
    parser.add_argument("--device", default="auto")
    parser.add_argument("--run-id", default=None, help="run id stored in the metrics file (default: model name)")
    parser.add_argument("--axes", default="{}", help="sweep axes as JSON, stored in the metrics meta (the workflow passes them)")
    parser.add_argument("--out-metrics", required=True, help="metrics JSON")
    parser.add_argument("--out-pairs", help="TSV of the test-split pairs predicted parallel: src_id, tgt_id, margin")


def run(args) -> None:
    from xlt.core.models import config_num_layers
    from xlt.core.embeddings import encode
    from xlt.evaluate.mining import load_bucc_split, mine_split, precision_recall_f1, tune_threshold
    from xlt.core.io import write_text
    from xlt.core.metrics import MetricsFile, parse_axes

    metrics = MetricsFile(family="mine", run_id=args.run_id or Path(args.model).name,  # starts the wall clock
                          axes=parse_axes(args.axes))
    if args.k < 1:
        raise XltError(f"--k must be at least 1, got {args.k}")
    if args.tune_split == args.test_split:
        raise XltError(f"--tune-split and --test-split are both {args.tune_split!r}; tuning and scoring need different splits")
    splits = {role: load_bucc_split(args.bucc_dir, args.pair, name)
              for role, name in (("tune", args.tune_split), ("test", args.test_split))}
    depth = config_num_layers(args.model)
    if not -(depth + 1) <= args.layer <= depth:
        raise XltError(f"--layer {args.layer} is out of range for a model with {depth} layers; use 0..{depth} or -1 for the last")

    from xlt.core.models import load_encoder, load_tokenizer, pick_device

    device = pick_device(args.device)
    tokenizer = load_tokenizer(args.model)
    model = load_encoder(args.model).to(device)
    kwargs = dict(pooling=args.pooling, layer=args.layer, batch_size=args.batch_size, max_length=args.max_length, device=device)
    mined = {}
    for role, data in splits.items():
        x = encode(model, tokenizer, data.src_sentences, **kwargs)
        y = encode(model, tokenizer, data.tgt_sentences, **kwargs)
        mined[role] = mine_split(x, y, data, k=args.k, strategy=args.strategy)

    threshold, tuned = tune_threshold(mined["tune"], splits["tune"].gold)
    tested = precision_recall_f1(mined["test"], splits["test"].gold, threshold)
    src_lang = splits["test"].src_lang
    metrics.meta.update({
        "model": args.model, "pair": args.pair, "layer": args.layer, "pooling": args.pooling,
        "k": args.k, "strategy": args.strategy, "threshold": threshold,
        "splits": {role: {"name": d.split, "src": len(d.src_ids), "tgt": len(d.tgt_ids), "gold": len(d.gold)}
                   for role, d in splits.items()},
        "counts": {"tune": _counts(tuned), "test": _counts(tested)},
    })
    metrics.add("threshold", threshold, lang=src_lang, split="tune")
    for role, scores in (("tune", tuned), ("test", tested)):
        for name in ("precision", "recall", "f1"):
            metrics.add(name, scores[name], lang=src_lang, split=role)
        log.info("%s %s: P %.4f R %.4f F1 %.4f", args.pair, role, scores["precision"], scores["recall"], scores["f1"])
    if args.out_pairs:
        write_text(args.out_pairs, "".join(f"{s}\t{t}\t{score:.6f}\n" for s, t, score in mined["test"] if score >= threshold))
    metrics.write(args.out_metrics)


def _counts(scores: dict) -> dict:
    return {key: int(scores[key]) for key in ("predicted", "correct", "gold")}
