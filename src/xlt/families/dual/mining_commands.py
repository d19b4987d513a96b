"""`xlt make-bucc` and `xlt mine`: the dual-encoder family's BUCC-style mining jobs.

make-bucc writes BUCC-layout mining files ({src}-{tgt}.{split}.{src|tgt|gold}) from one of
two sources (see xlt.data.bucc):
  --bitext SPLIT=FILE   one split per bitext JSONL file: gold pairs plus unpaired
                        distractor sentences taken from the file's other pairs (offline demo)
  --hub-dataset ID      BUCC from the Hugging Face hub (mteb/bucc-bitext-mining, one split),
                        divided into a tuning and a test split

mine reads such a directory (see xlt.evaluate.mining), embeds both sides of the tuning and
the test split, mines candidates with the ratio margin, tunes the threshold for F1 on the
tuning split and scores the test split with it.
"""

from __future__ import annotations

import logging
from pathlib import Path

from xlt.core.errors import XltError
from xlt.core.verbs import Verb, add_run_arguments, key_value

log = logging.getLogger(__name__)


# ---------------------------------------------------------------- make-bucc

BITEXT_EXAMPLE = "dev=results/data/demo-bitext/qaa/dev.jsonl"


def _make_bucc_arguments(p) -> None:
    p.add_argument("--pair", required=True, help="SRC-TGT as in the file names, e.g. qaa-en or de-en")
    p.add_argument("--out", required=True, help="directory for the BUCC-layout files")
    source = p.add_mutually_exclusive_group(required=True)
    source.add_argument(
        "--bitext",
        action="append",
        metavar="SPLIT=FILE.jsonl",
        type=key_value("SPLIT=FILE.jsonl", BITEXT_EXAMPLE),
        help="build split SPLIT from this normalised bitext (text = SRC side, text_pair = TGT side); repeatable",
    )
    source.add_argument("--hub-dataset", help="hub dataset in mteb/bucc-bitext-mining's format (config = pair)")
    p.add_argument(
        "--gold-fraction",
        type=float,
        default=0.5,
        help="bitext: share of pairs kept as gold pairs; the rest become one-sided distractors (default 0.5)",
    )
    p.add_argument("--hub-split", default="test", help="hub: the dataset split to read (default test)")
    p.add_argument("--revision", default=None, help="hub: dataset revision")
    p.add_argument(
        "--tune-fraction",
        type=float,
        default=0.2,
        help="hub: share of the gold pairs and unpaired sentences "
        "written to the tuning split, whose sources tune the threshold (`mine` pools both splits; default 0.2)",
    )
    p.add_argument(
        "--split-names", default="dev,test", help="hub: names of the tuning and test splits written (default dev,test)"
    )
    p.add_argument(
        "--seed",
        type=int,
        default=1,
        help="seed of the gold/distractor choice (bitext, mixed with the split name) or of the tuning/test split (hub)",
    )


def _check_bitext_args(out: list[tuple[str, str]]) -> list[tuple[str, str]]:
    for split, path in out:
        if "." in split or "/" in split:  # the split names the mining files ({pair}.{split}.src)
            raise XltError(f"--bitext {split}={path}: give SPLIT=FILE.jsonl, e.g. {BITEXT_EXAMPLE}")
        if not Path(path).is_file():
            raise XltError(f"--bitext {split}={path}: file {path} does not exist; write it with `xlt prepare-data`")
    splits = [s for s, _ in out]
    if len(set(splits)) != len(splits):
        raise XltError(f"--bitext names a split twice: {', '.join(splits)}")
    return out


def _make_bucc(args) -> None:
    import zlib

    from xlt.data.bucc import bucc_from_bitext, split_bucc
    from xlt.data.bucc_files import parse_pair, write_bucc_split

    parse_pair(args.pair)
    if args.bitext:
        from xlt.core.io import read_jsonl
        from xlt.data.bitext_files import bitexts_from_records

        splits = []
        for split, path in _check_bitext_args(args.bitext):
            bitext = bitexts_from_records(args.pair, read_jsonl(path), origin=path)
            seed = zlib.crc32(f"{args.seed}/{split}".encode())
            splits.append(bucc_from_bitext(bitext.texts, bitext.english, args.pair, split, args.gold_fraction, seed))
    else:
        from xlt.data.bucc_files import load_bucc_from_hub

        names = tuple(n.strip() for n in args.split_names.split(","))
        if len(names) != 2 or not all(names) or names[0] == names[1]:
            raise XltError(f"--split-names {args.split_names!r}: give two different names, e.g. dev,test")
        data = load_bucc_from_hub(args.pair, dataset=args.hub_dataset, split=args.hub_split, revision=args.revision)
        splits = list(split_bucc(data, args.tune_fraction, args.seed, names))
    for data in splits:
        write_bucc_split(data, args.out)
        print(
            f"{data.pair} {data.split}: {len(data.src_ids)} {data.src_lang}, {len(data.tgt_ids)} {data.tgt_lang}, "
            f"{len(data.gold)} gold pairs"
        )


# ---------------------------------------------------------------- mine


def _mine_arguments(parser) -> None:
    from xlt.core.choices import POOLING_MODES
    from xlt.evaluate.mining import DEFAULT_K, STRATEGIES

    parser.add_argument("--model", required=True, help="model directory or hub id")
    parser.add_argument("--bucc-dir", required=True, help="directory with {src}-{tgt}.{split}.{src|tgt|gold} files")
    parser.add_argument("--pair", required=True, help="language pair as in the file names, e.g. de-en")
    parser.add_argument(
        "--tune-split",
        default="dev",
        help="split with gold pairs whose source sentences' candidates "
        "tune the threshold (default dev); both splits are mined as one pool",
    )
    parser.add_argument(
        "--test-split",
        default="test",
        help="split whose source sentences' candidates are scored with the tuned threshold (default test)",
    )
    parser.add_argument("--layer", type=int, default=-1, help="hidden-state index to pool (default -1 = last layer)")
    parser.add_argument(
        "--pooling", default="mean", choices=POOLING_MODES, help="sentence vector from the hidden states (default mean)"
    )
    parser.add_argument(
        "--prompt",
        default="",
        help="text put before every sentence before encoding, e.g. "
        "'query: ' for E5 (the config's models.<name>.prompt; default none)",
    )
    parser.add_argument(
        "--k", type=int, default=DEFAULT_K, help=f"neighbourhood size of the ratio margin (default {DEFAULT_K})"
    )
    parser.add_argument("--strategy", default="max", choices=STRATEGIES, help="candidate extraction (default max)")
    parser.add_argument("--batch-size", type=int, default=64, help="sentences per encoder forward pass (default 64)")
    parser.add_argument(
        "--max-length", type=int, default=128, help="tokens per sentence after truncation (default 128)"
    )
    add_run_arguments(
        parser, "--device", "--run-id", "--axes", "--out-metrics", run_id_default="the --model directory's name"
    )
    parser.add_argument(
        "--out-pairs",
        help="TSV of the test-split pairs predicted parallel: src_id, tgt_id, margin "
        "(a target of the tuning split as '{split}:{id}')",
    )


def _mine(args) -> None:
    from xlt.core.embeddings import encode
    from xlt.core.io import write_text
    from xlt.core.metrics import MetricsFile, parse_axes
    from xlt.core.models import config_num_layers
    from xlt.data.bucc_files import load_bucc_split
    from xlt.evaluate.mining import mining_examples, precision_recall_f1, tune_threshold, tuning_examples
    from xlt.evaluate.mining_pool import pooled_candidates

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

    from xlt.core.models import load_encoder, load_tokenizer, pick_device
    from xlt.core.sentence_encoder import project, saved_projection

    projection = saved_projection(args.model, args.pooling, args.layer, depth)  # the model's own sentence vectors
    device = pick_device(args.device)
    tokenizer = load_tokenizer(args.model)
    model = load_encoder(args.model).to(device)
    kwargs = dict(
        pooling=args.pooling,
        layer=args.layer,
        batch_size=args.batch_size,
        max_length=args.max_length,
        device=device,
        prompt=args.prompt,
    )
    vectors = {
        role: (
            project(encode(model, tokenizer, data.src_sentences, **kwargs), projection),
            project(encode(model, tokenizer, data.tgt_sentences, **kwargs), projection),
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


VERBS = {
    "make-bucc": Verb(
        "Write BUCC-layout mining files from bitext (gold pairs + non-parallel distractors) or from the hub's BUCC",
        _make_bucc_arguments,
        _make_bucc,
    ),
    "mine": Verb(
        "BUCC-style parallel sentence mining (ratio margin over the pooled splits, threshold F1-tuned on "
        "the tuning split's sources): precision/recall/F1",
        _mine_arguments,
        _mine,
    ),
}
