"""`xlt train-dual`, `xlt dual-prefix-states`, `xlt make-bucc` and `xlt mine`: the dual-encoder family's jobs.

train-dual: each --train / --dev file is normalised bitext JSONL (text = non-English side,
text_pair = English); its language is the file's parent directory name
(results/data/{dataset}/{lang}/{split}.jsonl) unless --train-langs / --dev-langs name them.
With --freeze-depth N >= 0, --cache-frozen-prefix runs the frozen layers once per distinct
training sentence and --prefix-states reads them from the store `xlt dual-prefix-states`
writes once for every depth of a sweep (xlt.families.dual.prefix: semantics and checks).

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

from xlt.core.verbs import Verb
from xlt.core.errors import XltError

log = logging.getLogger(__name__)


# ---------------------------------------------------------------- train-dual

def _train_dual_arguments(p) -> None:
    from xlt.core.choices import POOLING_MODES
    from xlt.core.train_args import add_train_arguments
    from xlt.core.choices import DUAL_SYMMETRIC
    from xlt.evaluate.retrieval import DEFAULT_MATCH, MATCH_RULES

    p.add_argument("--model", required=True, help="hub id or local directory of the encoder to start from")
    p.add_argument("--train", action="append", required=True, metavar="FILE.jsonl", help="bitext for training; repeat per language")
    p.add_argument("--dev", action="append", required=True, metavar="FILE.jsonl",
                   help="bitext for best-checkpoint selection (retrieval accuracy); repeat per language")
    p.add_argument("--match", choices=MATCH_RULES, default=DEFAULT_MATCH,
                   help="dev retrieval correctness, the Tatoeba test's rule (`xlt eval-embeddings --match`): "
                        "index = the retrieved sentence is the gold one (default); text = an equal string at "
                        "another index counts")
    p.add_argument("--train-langs", help="comma-separated codes, one per --train (default: parent directory names)")
    p.add_argument("--dev-langs", help="comma-separated codes, one per --dev (default: parent directory names)")
    p.add_argument("--margin", type=float, default=0.3, help="additive margin taken off the positive pairs' cosine (LaBSE 0.3)")
    p.add_argument("--scale", type=float, default=10.0, help="cosine scale before the softmax (LaBSE 10)")
    p.add_argument("--pooling", default="mean", choices=POOLING_MODES, help="sentence vector from the last layer (default mean)")
    p.add_argument("--prompt", default="", help="text put before every sentence in training, dev selection and the "
                   "dev records, e.g. 'query: ' for E5 (the config's models.<name>.prompt, which its evaluation jobs get "
                   "too; default none)")
    p.add_argument("--symmetric", default="sum", choices=DUAL_SYMMETRIC,
                   help="combine the two directions' cross-entropies: sum (LaBSE) or mean (default sum)")
    p.add_argument("--freeze-depth", type=int, default=-1, help="-1 nothing, 0 embeddings, N embeddings + first N layers")
    p.add_argument("--cache-frozen-prefix", action="store_true",
                   help="run the frozen layers once per distinct training sentence (eval mode: no dropout below the "
                        "boundary) and train only the layers above; needs --freeze-depth >= 0")
    p.add_argument("--prefix-states", default=None, metavar="DIR",
                   help="read the frozen layers' output from this store (`xlt dual-prefix-states`, one pass for the "
                        "whole sweep) instead of computing it; --cache-frozen-prefix's semantics")
    p.add_argument("--out", required=True, help="run directory: model/ and train.json are written there")
    p.add_argument("--run-id", default=None, help="run id stored in train.json (default: the --out directory's name)")
    p.add_argument("--axes", default="{}", help="further sweep values as JSON, stored in train.json (the workflow "
                   "passes the config's model name)")
    p.add_argument("--checkpoint-dir", default=None,
                   help="resumable training state (default: OUT/checkpoint, not an output); removed once the outputs exist")
    add_train_arguments(p)


def _check_train_dual(args) -> None:
    if args.margin < 0 or args.margin >= 2:
        raise XltError(f"--margin {args.margin}: use a value in [0, 2) (cosines lie in [-1, 1]; LaBSE uses 0.3)")
    if args.scale <= 0:
        raise XltError(f"--scale {args.scale}: must be positive (LaBSE uses 10)")
    if args.batch_size < 2:
        raise XltError(f"--batch-size {args.batch_size}: in-batch negatives need at least 2 pairs per batch")
    from xlt.families.dual.plan import check_grad_accum

    check_grad_accum(args.grad_accum, "--grad-accum")
    if args.cache_frozen_prefix or args.prefix_states:
        from xlt.families.dual.prefix import check_cacheable

        check_cacheable(args.freeze_depth)


def _train_dual(args) -> None:
    from xlt.core.checkpoint import remove_checkpoint
    from xlt.core.freezing import count_parameters, freeze
    from xlt.core.metrics import MetricsFile, parse_axes
    from xlt.core.models import config_num_layers, load_tokenizer
    from xlt.core.sentence_encoder import SentenceEncoder
    from xlt.core.training import result_meta, train_args_from
    from xlt.data.bitext_files import load_bitexts, resolve_langs
    from xlt.families.dual.dual_encoder import DEV_METRIC, DualSettings, dev_records, train_dual, with_prompt

    targs = train_args_from(args)
    out = Path(args.out)
    axes = {"margin": args.margin, "scale": args.scale, "pooling": args.pooling, "batch_size": targs.batch_size,
            "freeze_depth": args.freeze_depth, "seed": targs.seed, "trained": True, "match": args.match}
    metrics = MetricsFile("dual", args.run_id or out.name, axes=parse_axes(args.axes) | axes)
    # all input checks before the model is loaded
    _check_train_dual(args)
    # the model's prompt goes before every sentence it trains and is selected on, as its evaluation
    # jobs put it (E5 trains and is used with its "query: " prefix)
    train_bitexts = with_prompt(load_bitexts(args.train, resolve_langs(args.train, args.train_langs)), args.prompt)
    dev_bitexts = with_prompt(load_bitexts(args.dev, resolve_langs(args.dev, args.dev_langs)), args.prompt)
    depth = config_num_layers(args.model)
    if not -1 <= args.freeze_depth < depth:
        raise XltError(f"--freeze-depth {args.freeze_depth} leaves nothing to train in a model with {depth} layers; "
                       f"use -1 (nothing frozen), 0 (embeddings) .. {depth - 1}")

    tokenizer = load_tokenizer(args.model)
    model = SentenceEncoder.from_pretrained(args.model, pooling=args.pooling, layer=-1)
    freeze(model.encoder, args.freeze_depth)
    settings = DualSettings(margin=args.margin, scale=args.scale, symmetric=args.symmetric, match=args.match)
    losses: list[float] = []
    checkpoint_dir = Path(args.checkpoint_dir) if args.checkpoint_dir else out / "checkpoint"
    cached = _cached_prefix(args, model, tokenizer, train_bitexts, targs)
    identity = _train_dual_identity(args, train_bitexts, dev_bitexts)  # after the store's checks
    result = train_dual(model, tokenizer, train_bitexts, dev_bitexts, settings, targs, losses, checkpoint_dir, cached,
                        identity)
    model.save(out / "model", tokenizer)

    metrics.curve = result.curve
    metrics.meta.update(result_meta(result, targs) | count_parameters(model) | {
        "model": args.model, "prompt": args.prompt,
        "loss": {"name": "additive_margin_softmax", "margin": args.margin, "scale": args.scale,
                 "symmetric": args.symmetric, "normalize": True},
        "train_pairs": {b.lang: len(b.texts) for b in train_bitexts},
        "dev_pairs": {b.lang: len(b.texts) for b in dev_bitexts},
        "loss_curve": _curve(losses, targs.log_every),  # batches of this process (after a resume: from the checkpoint on)
        "history": result.history,
        "cache_frozen_prefix": cached is not None, "cache_s": round(cached.cache_s, 3) if cached else 0.0,
    } | ({"prefix_states": args.prefix_states} if args.prefix_states else {}))
    # the kept checkpoint's dev retrieval, with its retrieved indices for the intervals
    metrics.extend(dev_records(model, tokenizer, dev_bitexts, targs.max_length, examples_out=metrics.examples,
                               match=args.match))
    metrics.add(DEV_METRIC + "_mean", result.best_score, split="dev")
    metrics.write(out / "train.json")
    remove_checkpoint(checkpoint_dir)
    log.info("best dev retrieval accuracy %.4f at step %d", result.best_score, result.best_step)


def _train_dual_identity(args, train_bitexts, dev_bitexts) -> dict:
    """What a resumed train-dual job must share with the one that wrote its checkpoint, besides the
    training and loss settings (xlt.core.training and train_dual key those): model, pooling, depth,
    languages, inputs."""
    from xlt.core.checkpoint import model_inputs, run_identity
    from xlt.core.prefix_store import store_files

    settings = {"family": "dual", "model": args.model, "pooling": args.pooling, "prompt": args.prompt,
                "freeze_depth": args.freeze_depth,
                "cache_frozen_prefix": args.cache_frozen_prefix, "prefix_states": bool(args.prefix_states),
                "train_langs": [b.lang for b in train_bitexts], "dev_langs": [b.lang for b in dev_bitexts]}
    store = store_files(args.prefix_states, args.freeze_depth) if args.prefix_states else []
    return run_identity(settings, [*args.train, *args.dev, *model_inputs(args.model), *store])


def _cached_prefix(args, model, tokenizer, train_bitexts, targs):
    """The frozen prefix's states for --prefix-states (read) or --cache-frozen-prefix (computed), else None."""
    from xlt.families.dual.dual_encoder import pairs_from_bitexts

    pairs = pairs_from_bitexts(train_bitexts)
    if args.prefix_states:
        from xlt.families.dual.prefix import load_cached_dual

        return load_cached_dual(model, args.freeze_depth, args.prefix_states, pairs,
                                {"model": args.model, "max_length": targs.max_length})
    if args.cache_frozen_prefix:
        from xlt.core.models import pick_device
        from xlt.families.dual.prefix import prepare_cached_dual

        return prepare_cached_dual(model, args.freeze_depth, pairs, tokenizer, targs.max_length, targs.batch_size,
                                   pick_device(targs.device))
    return None


def _curve(losses: list[float], every: int) -> list[dict]:
    """Mean loss over each window of `every` batches (forward passes): a compact training curve."""
    every = max(1, every)
    return [{"batches": min(start + every, len(losses)), "loss": round(sum(losses[start:start + every]) / len(losses[start:start + every]), 5)}
            for start in range(0, len(losses), every)]


# ---------------------------------------------------------------- dual-prefix-states

def _dual_prefix_states_arguments(p) -> None:
    from xlt.core.train_args import add_store_arguments

    p.add_argument("--model", required=True, help="hub id or local directory (the sweep's pretrained encoder)")
    p.add_argument("--train", action="append", required=True, metavar="FILE.jsonl",
                   help="the train-dual jobs' --train files, in their order; repeat per language")
    p.add_argument("--prompt", default="", help="the train-dual jobs' --prompt: text put before every sentence")
    add_store_arguments(p, "train-dual", "dual.prefix_states")


def _dual_prefix_states(args) -> None:
    from xlt.core.manifest import sha256
    from xlt.core.models import config_hidden_size, config_num_layers, load_encoder, load_tokenizer, pick_device
    from xlt.core.prefix_store import check_store_size, parse_depths, store_nbytes, token_lengths, write_prefix_store
    from xlt.data.bitext_files import load_bitexts, resolve_langs
    from xlt.families.dual.dual_encoder import pairs_from_bitexts, with_prompt
    from xlt.families.dual.prefix import STORE_SETTINGS, distinct_sentences, sentence_collate, store_expected

    depths = parse_depths(args.depths)
    bitexts = with_prompt(load_bitexts(args.train, resolve_langs(args.train, None)), args.prompt)
    layers = config_num_layers(args.model)
    if depths[-1] >= layers:
        raise XltError(f"--depths {args.depths!r}: depth {depths[-1]} leaves nothing to train in a model with {layers} "
                       f"layers; train-dual takes 0 .. {layers - 1}")
    sentences, _ = distinct_sentences(pairs_from_bitexts(bitexts))
    tokenizer = load_tokenizer(args.model)
    collate = sentence_collate(tokenizer, args.max_length)
    # the exact size, from the tokenised lengths, before the model loads or runs
    lengths = token_lengths(sentences, collate, args.batch_size)
    hidden_size = config_hidden_size(args.model)
    nbytes = store_nbytes(sum(lengths), len(lengths), hidden_size, depths, args.storage_dtype)
    check_store_size(nbytes, args.max_gib, depths=depths, tokens=sum(lengths), hidden_size=hidden_size,
                     storage_dtype=args.storage_dtype, settings=STORE_SETTINGS, depths_setting="dual.freeze_depths")
    device = pick_device(args.device)
    model = load_encoder(args.model).to(device)
    meta = write_prefix_store(model, depths, sentences, collate, args.batch_size, lengths, args.out, device,
                              args.storage_dtype, settings=STORE_SETTINGS, meta={
                                  **store_expected(args.model, args.max_length, sentences), "family": "dual",
                                  "train": args.train, "train_sha256": [sha256(f) for f in args.train]})
    print(f"stored depths {meta['depths']} of {meta['examples']} distinct sentences ({meta['tokens']} tokens, "
          f"{meta['storage_dtype']}): {meta['nbytes'] / 2**30:.3f} GiB in {meta['compute_s']:.1f} s")


# ---------------------------------------------------------------- make-bucc

def _make_bucc_arguments(p) -> None:
    p.add_argument("--pair", required=True, help="SRC-TGT as in the file names, e.g. qaa-en or de-en")
    p.add_argument("--out", required=True, help="directory for the BUCC-layout files")
    source = p.add_mutually_exclusive_group(required=True)
    source.add_argument("--bitext", action="append", metavar="SPLIT=FILE.jsonl",
                        help="build split SPLIT from this normalised bitext (text = SRC side, text_pair = TGT side); repeatable")
    source.add_argument("--hub-dataset", help="hub dataset in mteb/bucc-bitext-mining's format (config = pair)")
    p.add_argument("--gold-fraction", type=float, default=0.5,
                   help="bitext: share of pairs kept as gold pairs; the rest become one-sided distractors (default 0.5)")
    p.add_argument("--hub-split", default="test", help="hub: the dataset split to read (default test)")
    p.add_argument("--revision", default=None, help="hub: dataset revision")
    p.add_argument("--tune-fraction", type=float, default=0.2, help="hub: share of the gold pairs and unpaired sentences "
                   "written to the tuning split, whose sources tune the threshold (`mine` pools both splits; default 0.2)")
    p.add_argument("--split-names", default="dev,test", help="hub: names of the tuning and test splits written (default dev,test)")
    p.add_argument("--seed", type=int, default=1,
                   help="seed of the gold/distractor choice (bitext, mixed with the split name) or of the tuning/test split (hub)")


def _parse_bitext_args(values: list[str]) -> list[tuple[str, str]]:
    out = []
    for value in values:
        split, eq, path = value.partition("=")
        if not eq or not split or not path or "." in split or "/" in split:
            raise XltError(f"--bitext {value!r}: expected SPLIT=FILE.jsonl, e.g. dev=results/data/demo-bitext/qaa/dev.jsonl")
        if not Path(path).is_file():
            raise XltError(f"--bitext {value!r}: file {path} does not exist; write it with `xlt prepare-data`")
        out.append((split, path))
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
        for split, path in _parse_bitext_args(args.bitext):
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
        print(f"{data.pair} {data.split}: {len(data.src_ids)} {data.src_lang}, {len(data.tgt_ids)} {data.tgt_lang}, "
              f"{len(data.gold)} gold pairs")


# ---------------------------------------------------------------- mine

def _mine_arguments(parser) -> None:
    from xlt.core.choices import POOLING_MODES
    from xlt.evaluate.mining import DEFAULT_K, STRATEGIES

    parser.add_argument("--model", required=True, help="model directory or hub id")
    parser.add_argument("--bucc-dir", required=True, help="directory with {src}-{tgt}.{split}.{src|tgt|gold} files")
    parser.add_argument("--pair", required=True, help="language pair as in the file names, e.g. de-en")
    parser.add_argument("--tune-split", default="dev", help="split with gold pairs whose source sentences' candidates "
                        "tune the threshold (default dev); both splits are mined as one pool")
    parser.add_argument("--test-split", default="test", help="split whose source sentences' candidates are scored with "
                        "the tuned threshold (default test)")
    parser.add_argument("--layer", type=int, default=-1, help="hidden-state index to pool (default -1 = last layer)")
    parser.add_argument("--pooling", default="mean", choices=POOLING_MODES, help="sentence vector from the hidden states (default mean)")
    parser.add_argument("--prompt", default="", help="text put before every sentence before encoding, e.g. "
                   "'query: ' for E5 (the config's models.<name>.prompt; default none)")
    parser.add_argument("--k", type=int, default=DEFAULT_K, help=f"neighbourhood size of the ratio margin (default {DEFAULT_K})")
    parser.add_argument("--strategy", default="max", choices=STRATEGIES, help="candidate extraction (default max)")
    parser.add_argument("--batch-size", type=int, default=64, help="sentences per encoder forward pass (default 64)")
    parser.add_argument("--max-length", type=int, default=128, help="tokens per sentence after truncation (default 128)")
    parser.add_argument("--device", default="auto", help="auto, cpu, cuda, cuda:1 ...")
    parser.add_argument("--run-id", default=None, help="run id stored in the metrics file (default: model name)")
    parser.add_argument("--axes", default="{}", help="sweep axes as JSON, stored in the metrics meta (the workflow passes them)")
    parser.add_argument("--out-metrics", required=True, help="metrics JSON")
    parser.add_argument("--out-pairs", help="TSV of the test-split pairs predicted parallel: src_id, tgt_id, margin "
                        "(a target of the tuning split as '{split}:{id}')")


def _mine(args) -> None:
    from xlt.core.embeddings import encode
    from xlt.core.io import write_text
    from xlt.core.metrics import MetricsFile, parse_axes
    from xlt.core.models import config_num_layers
    from xlt.data.bucc_files import load_bucc_split
    from xlt.evaluate.mining import (
        mining_examples,
        precision_recall_f1,
        tune_threshold,
        tuning_examples,
    )
    from xlt.evaluate.mining_pool import pooled_candidates

    metrics = MetricsFile(family="dual", run_id=args.run_id or Path(args.model).name,  # starts the wall clock
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
    kwargs = dict(pooling=args.pooling, layer=args.layer, batch_size=args.batch_size, max_length=args.max_length,
                  device=device, prompt=args.prompt)
    vectors = {role: (encode(model, tokenizer, data.src_sentences, **kwargs),
                      encode(model, tokenizer, data.tgt_sentences, **kwargs)) for role, data in splits.items()}
    # one pool: margins of tuning and test candidates share the k-NN terms, so the threshold
    # tuned on the tuning sources' candidates is on the scale of the test sources' candidates
    mined = pooled_candidates(vectors, splits, k=args.k, strategy=args.strategy)

    threshold, tuned = tune_threshold(mined["tune"], splits["tune"].gold)
    tested = precision_recall_f1(mined["test"], splits["test"].gold, threshold)
    src_lang = splits["test"].src_lang
    metrics.meta.update({
        "model": args.model, "pair": args.pair, "layer": args.layer, "pooling": args.pooling, "prompt": args.prompt,
        "k": args.k, "strategy": args.strategy, "threshold": threshold,
        "splits": {role: {"name": d.split, "src": len(d.src_ids), "tgt": len(d.tgt_ids), "gold": len(d.gold)}
                   for role, d in splits.items()},
        "pool": {"src": sum(len(d.src_ids) for d in splits.values()), "tgt": sum(len(d.tgt_ids) for d in splits.values())},
        "counts": {"tune": _counts(tuned), "test": _counts(tested)},
    })
    metrics.add("threshold", threshold, lang=src_lang, split="tune")
    for role, scores in (("tune", tuned), ("test", tested)):
        for name in ("precision", "recall", "f1"):
            metrics.add(name, scores[name], lang=src_lang, split=role)
        log.info("%s %s: P %.4f R %.4f F1 %.4f", args.pair, role, scores["precision"], scores["recall"], scores["f1"])
    # the test split is resampled at the tuned threshold; the tuning split's scores are that
    # threshold's optimum, which a fixed threshold would make look surer: its resamples re-tune it
    metrics.examples.append(mining_examples(mined["test"], splits["test"].gold, threshold, splits["test"].src_ids,
                                            lang=src_lang, split="test"))
    metrics.examples.append(tuning_examples(mined["tune"], splits["tune"].gold, splits["tune"].src_ids,
                                            lang=src_lang, split="tune"))
    if args.out_pairs:
        write_text(args.out_pairs, "".join(f"{s}\t{t}\t{score:.6f}\n" for s, t, score in mined["test"] if score >= threshold))
    metrics.write(args.out_metrics)


def _counts(scores: dict) -> dict:
    return {key: int(scores[key]) for key in ("predicted", "correct", "gold")}


VERBS = {
    "train-dual": Verb("Train a dual encoder (shared encoder, additive-margin softmax over in-batch negatives); "
                       "keep the best dev retrieval checkpoint", _train_dual_arguments, _train_dual),
    "dual-prefix-states": Verb("Store the frozen-prefix hidden states of the dual training sentences at every freeze "
                               "depth of the sweep in one pass (frozen layers in eval mode)",
                               _dual_prefix_states_arguments, _dual_prefix_states),
    "make-bucc": Verb("Write BUCC-layout mining files from bitext (gold pairs + non-parallel distractors) or from "
                      "the hub's BUCC", _make_bucc_arguments, _make_bucc),
    "mine": Verb("BUCC-style parallel sentence mining (ratio margin over the pooled splits, threshold F1-tuned on "
                 "the tuning split's sources): precision/recall/F1",
                 _mine_arguments, _mine),
}
