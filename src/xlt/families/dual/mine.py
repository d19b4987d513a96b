"""`xlt mine`: embed both sides of a BUCC tuning and test split, mine candidates with the ratio
margin, tune the threshold for F1 on the tuning split and score the test split with it."""

from __future__ import annotations

import logging
from pathlib import Path

from xlt.core.embeddings import encode, encoding_options
from xlt.core.errors import XltError
from xlt.core.io import write_text
from xlt.core.metrics import MetricsFile, parse_axes
from xlt.core.models import config_num_layers, load_encoder, load_tokenizer, pick_device
from xlt.core.sentence_encoder import project, saved_projection
from xlt.data.bucc_files import load_bucc_split
from xlt.evaluate.mining import mining_examples, precision_recall_f1, tune_threshold, tuning_examples
from xlt.evaluate.mining_pool import pooled_candidates

log = logging.getLogger(__name__)


def main(args) -> None:
    metrics = MetricsFile(
        family="dual",
        run_id=args.run_id or Path(args.model).name,  # starts the wall clock
        axes=parse_axes(args.axes),
    )
    if args.k < 1:
        raise XltError(f"--k must be at least 1, got {args.k}")
    if args.tune_split == args.test_split:
        raise XltError(
            f"--tune-split and --test-split are both {args.tune_split!r}; tuning and scoring need different splits"
        )
    splits = {
        role: load_bucc_split(args.bucc_dir, args.pair, name)
        for role, name in (("tune", args.tune_split), ("test", args.test_split))
    }
    depth = config_num_layers(args.model)
    if not -(depth + 1) <= args.layer <= depth:
        raise XltError(
            f"--layer {args.layer} is out of range for a model with {depth} layers; use 0..{depth} or -1 for the last"
        )

    projection = saved_projection(args.model, args.pooling, args.layer, depth)  # the model's own sentence vectors
    device = pick_device(args.device)
    tokenizer = load_tokenizer(args.model)
    model = load_encoder(args.model).to(device)
    encoding = encoding_options(args, device) | {"layer": args.layer}
    vectors = {
        role: (
            project(encode(model, tokenizer, data.src_sentences, **encoding), projection),
            project(encode(model, tokenizer, data.tgt_sentences, **encoding), projection),
        )
        for role, data in splits.items()
    }
    # one pool: margins of tuning and test candidates share the k-NN terms, so the threshold
    # tuned on the tuning sources' candidates is on the scale of the test sources' candidates
    mined = pooled_candidates(vectors, splits, k=args.k, strategy=args.strategy)

    threshold, tuned = tune_threshold(mined["tune"], splits["tune"].gold)
    tested = precision_recall_f1(mined["test"], splits["test"].gold, threshold)
    src_lang = splits["test"].src_lang
    metrics.meta.update(
        {
            "model": args.model,
            "pair": args.pair,
            "layer": args.layer,
            "pooling": args.pooling,
            "prompt": args.prompt,
            "max_length": args.max_length,
            "projection": None if projection is None else [projection.in_features, projection.out_features],
            "k": args.k,
            "strategy": args.strategy,
            "threshold": threshold,
            "splits": {
                role: {"name": d.split, "src": len(d.src_ids), "tgt": len(d.tgt_ids), "gold": len(d.gold)}
                for role, d in splits.items()
            },
            "pool": {
                "src": sum(len(d.src_ids) for d in splits.values()),
                "tgt": sum(len(d.tgt_ids) for d in splits.values()),
            },
            "counts": {"tune": _counts(tuned), "test": _counts(tested)},
        }
    )
    metrics.add("threshold", threshold, lang=src_lang, split="tune")
    for role, scores in (("tune", tuned), ("test", tested)):
        for name in ("precision", "recall", "f1"):
            metrics.add(name, scores[name], lang=src_lang, split=role)
        log.info("%s %s: P %.4f R %.4f F1 %.4f", args.pair, role, scores["precision"], scores["recall"], scores["f1"])
    # the test split is resampled at the tuned threshold; the tuning split's scores are that
    # threshold's optimum, which a fixed threshold would make look surer: its resamples re-tune it
    metrics.examples.append(
        mining_examples(
            mined["test"], splits["test"].gold, threshold, splits["test"].src_ids, lang=src_lang, split="test"
        )
    )
    metrics.examples.append(
        tuning_examples(mined["tune"], splits["tune"].gold, splits["tune"].src_ids, lang=src_lang, split="tune")
    )
    if args.out_pairs:
        write_text(
            args.out_pairs, "".join(f"{s}\t{t}\t{score:.6f}\n" for s, t, score in mined["test"] if score >= threshold)
        )
    metrics.write(args.out_metrics)


def _counts(scores: dict) -> dict:
    return {key: int(scores[key]) for key in ("predicted", "correct", "gold")}
