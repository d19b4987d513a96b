"""The adapt family's jobs: `xlt sample-texts` (fixed evaluation sentences), `xlt adapt-mlm`
(one adaptation run), `xlt perplexity` (a model on fixed-masked sets) and `xlt adapt-summary`
(the final-perplexity table). Heavy imports stay inside the functions."""

from __future__ import annotations

from xlt.core.verbs import Verb, add_run_arguments, family_group

GROUP = family_group("adapt", "adapt a masked LM to a target language, perplexity and summaries")


def _sample_texts_arguments(p):
    from pathlib import Path

    from xlt.data.sample import TEXT_FIELDS

    p.add_argument("--data", required=True, nargs="+", type=Path, help="normalised JSONL files (e.g. one per language)")
    p.add_argument(
        "--fields",
        nargs="+",
        default=["text"],
        choices=TEXT_FIELDS,
        help="record fields that hold sentences (XNLI: text = premise, text_pair = hypothesis)",
    )
    size = p.add_mutually_exclusive_group(required=True)
    size.add_argument("--max-size", type=int, help="at most this many sentences (all of them when fewer)")
    size.add_argument("--size-of", type=Path, help="exactly as many sentences as this JSONL file has (size matching)")
    p.add_argument("--seed", type=int, default=1, help="seed of the sample")
    p.add_argument("--out", required=True, type=Path, help="JSONL file to write ({'text': ...} per line)")


def _sample_texts(args):
    from xlt.core.errors import XltError
    from xlt.core.io import read_jsonl, write_jsonl
    from xlt.data.sample import sample_texts

    missing = [str(f) for f in args.data + ([args.size_of] if args.size_of else []) if not f.is_file()]
    if missing:
        raise XltError(f"file(s) not found: {', '.join(missing)}")
    size = len(read_jsonl(args.size_of)) if args.size_of else args.max_size
    records = sample_texts(args.data, size, args.seed, args.fields, exact=args.size_of is not None)
    n = write_jsonl(args.out, records)
    print(f"{n} sentences from {len(args.data)} file(s) -> {args.out}")


def _add_word_nll_arguments(p):
    p.add_argument(
        "--pll-sentences",
        type=int,
        default=0,
        help="sentences per set (spread over it) scored for NLL per word and per character, the "
        "tokenizer-independent measure (word-level pseudo-log-likelihood; 0 = none)",
    )
    p.add_argument("--pll-words", type=int, default=40, help="first words of each of those sentences scored")
    p.add_argument(
        "--max-unk-share",
        type=float,
        default=0.01,
        help="a language whose scored pieces are more often the unknown token is flagged (unk_flagged)",
    )


def _word_level(args):
    from xlt.core.errors import XltError
    from xlt.families.adapt.adaptation import WordNllSettings

    if args.pll_sentences < 0 or args.pll_words < 1 or not 0 <= args.max_unk_share < 1:
        raise XltError(
            f"--pll-sentences must be >= 0, --pll-words >= 1 and --max-unk-share in [0, 1), got "
            f"{args.pll_sentences}, {args.pll_words} and {args.max_unk_share}"
        )
    return WordNllSettings(args.pll_sentences, args.pll_words, args.max_unk_share) if args.pll_sentences else None


def _adapt_mlm_arguments(p):
    from pathlib import Path

    from xlt.analysis.bootstrap import DEFAULT_CONFIDENCE, DEFAULT_RESAMPLES, DEFAULT_SEED
    from xlt.core.train_args import add_train_arguments
    from xlt.families.adapt.choices import ADAPT_SELECT, SIMILARITY_LEVELS

    p.add_argument("--model", required=True, help="masked LM to adapt: directory or hub id (e.g. mBERT)")
    p.add_argument("--train", required=True, type=Path, help="normalised JSONL of target-language sentences ('text')")
    p.add_argument(
        "--target",
        required=True,
        type=Path,
        help="held-out target-language JSONL: curves and checkpoint selection (dims from the path: "
        "lang = directory name, split = file stem, as in `xlt perplexity`)",
    )
    p.add_argument(
        "--eval",
        action="append",
        type=Path,
        default=[],
        help="further JSONL evaluated at every checkpoint (e.g. the multilingual set); repeatable",
    )
    p.add_argument(
        "--test",
        action="append",
        type=Path,
        default=[],
        help="JSONL evaluated only once, after training, on the selected model; repeatable",
    )
    p.add_argument(
        "--scheme",
        required=True,
        help="trained layers: 'A-B' (layers A+1..B, embeddings frozen) or JSON, e.g. "
        '\'{"gradual": {"every_epochs": 1, "step": 4, "start": 4}}\'',
    )
    p.add_argument(
        "--select",
        choices=ADAPT_SELECT,
        default="best",
        help="keep the checkpoint with the best target perplexity (the seed's early stopping) or the last",
    )
    p.add_argument("--native", default=None, help="native target-language model to compare layers with (optional)")
    p.add_argument("--compare", type=Path, default=None, help="JSONL of sentences for the layer comparison")
    p.add_argument(
        "--compare-layers",
        type=int,
        nargs="+",
        default=None,
        help="hidden-state indices (0 = embeddings; default: all both models have)",
    )
    p.add_argument(
        "--compare-levels",
        nargs="+",
        choices=SIMILARITY_LEVELS,
        default=list(SIMILARITY_LEVELS),
        help="sentence = mean-pooled sentence vectors, word = each word's first sub-word",
    )
    p.add_argument("--mask-seed", type=int, default=1234, help="seed of the fixed evaluation masks")
    p.add_argument("--mlm-probability", type=float, default=0.15, help="share of tokens masked (80/10/10 rule)")
    p.add_argument("--eval-batch-size", type=int, default=16, help="batch size of the perplexity evaluations")
    # the per-step intervals are computed here, so they need `xlt aggregate`'s bootstrap settings
    p.add_argument(
        "--bootstrap-resamples",
        type=int,
        default=DEFAULT_RESAMPLES,
        help="bootstrap resamples of each checkpoint's perplexity interval (config statistics.resamples)",
    )
    p.add_argument("--bootstrap-seed", type=int, default=DEFAULT_SEED, help="bootstrap seed (config statistics.seed)")
    p.add_argument(
        "--bootstrap-confidence",
        type=float,
        default=DEFAULT_CONFIDENCE,
        help="interval level (config statistics.confidence)",
    )
    _add_word_nll_arguments(p)
    add_run_arguments(p, "--run-id", "--axes", run_id_default="--out's directory name")
    p.add_argument("--out", required=True, type=Path, help="metrics JSON to write")
    p.add_argument(
        "--checkpoint-dir",
        type=Path,
        default=None,
        help="resumable training state (default: <--out's directory>/checkpoint, not an output); "
        "removed once the metrics are written",
    )
    add_train_arguments(p)


def _validate_adapt_mlm(args) -> tuple[object, dict]:
    from xlt.core.errors import XltError
    from xlt.core.metrics import parse_axes
    from xlt.core.models import config_num_layers
    from xlt.families.adapt.adaptation import file_dims
    from xlt.families.adapt.plan import check_grad_accum
    from xlt.families.adapt.schemes import parse_scheme, parse_scheme_arg

    check_grad_accum(args.grad_accum, "--grad-accum")
    files = [args.train, args.target, *args.eval, *args.test] + ([args.compare] if args.compare else [])
    missing = [str(f) for f in files if not f.is_file()]
    if missing:
        raise XltError(f"data file(s) not found: {', '.join(missing)}")
    dims = [tuple(file_dims(f).values()) for f in [args.target, *args.eval, *args.test]]
    if len(set(dims)) != len(dims):
        raise XltError(
            f"evaluation files share (language, split) {dims}; their records would be "
            "indistinguishable: name them <dir>/<lang>/<split>.jsonl"
        )
    if (args.native is None) != (args.compare is None):
        raise XltError("give --native and --compare together (the layer comparison needs both) or neither")
    if not 0.0 < args.mlm_probability < 1.0:
        raise XltError(f"--mlm-probability must be in (0, 1), got {args.mlm_probability}")
    if args.eval_every < 0:
        raise XltError(f"--eval-every must be >= 0 (0 = every epoch), got {args.eval_every}")
    if args.bootstrap_resamples < 1 or not 0.0 < args.bootstrap_confidence < 1.0:
        raise XltError(
            f"--bootstrap-resamples must be >= 1 and --bootstrap-confidence in (0, 1), got "
            f"{args.bootstrap_resamples} and {args.bootstrap_confidence}"
        )
    _word_level(args)
    axes = parse_axes(args.axes)
    scheme = parse_scheme(parse_scheme_arg(args.scheme), config_num_layers(args.model))
    return scheme, axes


def _adapt_mlm(args):
    from xlt.analysis.intervals import RepeatedSetIntervals
    from xlt.core import monitor
    from xlt.core.checkpoint import remove_checkpoint
    from xlt.core.freezing import count_parameters
    from xlt.core.metrics import MetricsFile
    from xlt.core.models import load_encoder, load_tokenizer, pick_device
    from xlt.core.train_args import train_args_from
    from xlt.core.training import result_meta
    from xlt.families.adapt.adaptation import EvalSet, NativeComparison, adapt
    from xlt.families.adapt.mlm import load_masked_lm, read_texts

    scheme, axes = _validate_adapt_mlm(args)
    metrics = MetricsFile("adapt", args.run_id or args.out.parent.name, axes=axes)  # its clock times the job
    targs = train_args_from(args)
    texts = read_texts(args.train)
    device = pick_device(targs.device)
    tokenizer = load_tokenizer(args.model)
    model = load_masked_lm(args.model).to(device)

    def eval_set(path):
        return EvalSet.from_file(path, tokenizer, args.mask_seed, args.mlm_probability, targs.max_length)

    target, others, final_only = (
        eval_set(args.target),
        [eval_set(p) for p in args.eval],
        [eval_set(p) for p in args.test],
    )
    comparison = None
    if args.native is not None:
        native = load_encoder(args.native).to(device)
        comparison = NativeComparison(
            model,
            tokenizer,
            native,
            load_tokenizer(args.native),
            read_texts(args.compare),
            layers=args.compare_layers,
            levels=args.compare_levels,
            max_length=targs.max_length,
            device=device,
        )
        del native  # its vectors are cached; free the memory for training

    checkpoint_dir = args.checkpoint_dir or args.out.parent / "checkpoint"
    bootstrap = {
        "resamples": args.bootstrap_resamples,
        "seed": args.bootstrap_seed,
        "confidence": args.bootstrap_confidence,
    }
    with monitor.run(args.tensorboard, args.out.parent, axes, vars(args)):
        result = adapt(
            model,
            tokenizer,
            texts,
            scheme,
            targs,
            target,
            others,
            final_only,
            comparison,
            select=args.select,
            mlm_probability=args.mlm_probability,
            eval_batch_size=args.eval_batch_size,
            checkpoint_dir=checkpoint_dir,
            intervals=RepeatedSetIntervals(**bootstrap),
            identity=_adapt_mlm_identity(args, bootstrap),
            word_level=_word_level(args),
        )

    metrics.curve = result.train.curve
    metrics.meta.update(result_meta(result.train, targs) | count_parameters(model))
    metrics.meta.update(
        {
            "model": args.model,
            "native": args.native,
            "scheme": scheme.name,
            "select": args.select,
            "mask_seed": args.mask_seed,
            "mlm_probability": args.mlm_probability,
            "train_sentences": len(texts),
            "step_intervals": bootstrap,  # how the per-step records' ci_low / ci_high were drawn
            "word_nll": {"sentences": args.pll_sentences, "words": args.pll_words},
            "eval_sets": {f"{s.lang}/{s.split}": s.describe() for s in [target, *others, *final_only]},
            "trainable_layers": {str(step): layers for step, layers in result.trainable.items()},
        }
    )
    if comparison is not None:
        metrics.meta["comparison"] = {
            "sentences": len(comparison.sentences),
            "vectors": comparison.vectors,
            "measures": comparison.measures,
            "layers": comparison.layers,
        }
    metrics.extend(result.records)
    metrics.examples = result.examples
    metrics.write(args.out)
    remove_checkpoint(checkpoint_dir)


def _adapt_mlm_identity(args, bootstrap: dict) -> dict:
    """What a resumed adapt-mlm job must share with the one that wrote its checkpoint, besides the
    training settings (xlt.core.training keys those): model, scheme, masking, the evaluations in
    its checkpointed history and their inputs. The --test files are read after training only."""
    from xlt.core.checkpoint import model_inputs, run_identity
    from xlt.families.adapt.adaptation import file_dims

    settings = {
        "family": "adapt",
        "model": args.model,
        "scheme": args.scheme,
        "select": args.select,
        "eval_sets": [file_dims(f) for f in [args.target, *args.eval]],  # the records' lang and split
        "mask_seed": args.mask_seed,
        "mlm_probability": args.mlm_probability,
        "eval_batch_size": args.eval_batch_size,
        "bootstrap": bootstrap,
        "native": args.native,
        "compare_layers": args.compare_layers,
        "compare_levels": args.compare_levels,
    }
    inputs = [
        args.train,
        args.target,
        *args.eval,
        *([args.compare] if args.compare else []),
        *model_inputs(args.model),
        *(model_inputs(args.native) if args.native else []),
    ]
    return run_identity(settings, inputs)


def _perplexity_arguments(p):
    from pathlib import Path

    p.add_argument("--model", required=True, help="masked-LM directory or hub id")
    p.add_argument(
        "--data",
        required=True,
        action="append",
        type=Path,
        help="JSONL file with a 'text' key per record; repeat for several files",
    )
    p.add_argument(
        "--langs",
        nargs="+",
        default=None,
        help="language of each --data file, in order (default: each file's parent directory name)",
    )
    p.add_argument("--mask-seed", type=int, default=1234, help="seed of the fixed evaluation masks")
    p.add_argument("--mlm-probability", type=float, default=0.15, help="share of tokens masked (80/10/10 rule)")
    p.add_argument("--max-sentences", type=int, default=None, help="use the first N non-empty sentences per file")
    p.add_argument("--max-length", type=int, default=128, help="tokens per sentence (longer ones are cut)")
    p.add_argument("--batch-size", type=int, default=16, help="sentences per forward pass")
    add_run_arguments(p, "--device")
    _add_word_nll_arguments(p)
    p.add_argument("--family", default="mlm", help="family name in the metrics file (e.g. adapt)")
    add_run_arguments(p, "--run-id", "--axes", run_id_default="--out's directory name")
    p.add_argument("--out", required=True, type=Path, help="metrics JSON to write")


def _validate_perplexity(args) -> tuple[list[str], dict]:
    """(language per --data file, meta.axes), checked before any model loads."""
    from xlt.core.errors import XltError
    from xlt.core.metrics import parse_axes

    missing = [str(p) for p in args.data if not p.is_file()]
    if missing:
        raise XltError(f"data file(s) not found: {', '.join(missing)}")
    if args.langs is not None and len(args.langs) != len(args.data):
        raise XltError(
            f"--langs has {len(args.langs)} entries but --data has {len(args.data)} files; "
            "give one language per file, in the same order, or omit --langs"
        )
    if args.max_sentences is not None and args.max_sentences < 1:
        raise XltError(f"--max-sentences must be at least 1, got {args.max_sentences}")
    if not 0.0 < args.mlm_probability < 1.0:
        raise XltError(f"--mlm-probability must be in (0, 1), got {args.mlm_probability}")
    _word_level(args)
    axes = parse_axes(args.axes)
    langs = args.langs or [p.resolve().parent.name for p in args.data]
    if len(set(zip(langs, (p.stem for p in args.data)))) != len(langs):
        raise XltError(
            f"two --data files share language and split {list(zip(langs, (p.stem for p in args.data)))}; "
            "their metrics would be indistinguishable"
        )
    return langs, axes


def _perplexity(args):
    import logging

    from xlt.core.metrics import MetricsFile
    from xlt.core.models import load_tokenizer, pick_device
    from xlt.families.adapt.mlm import (
        FixedMasking,
        load_masked_lm,
        perplexity,
        perplexity_examples,
        read_text_langs,
        read_texts,
    )
    from xlt.families.adapt.word_nll import spread_subset, word_nll, word_nll_records

    log = logging.getLogger("xlt.families.adapt.commands")
    langs, axes = _validate_perplexity(args)
    corpora = [read_texts(path, args.max_sentences) for path in args.data]
    device = pick_device(args.device)
    tokenizer = load_tokenizer(args.model)
    model = load_masked_lm(args.model).to(device)
    metrics = MetricsFile(
        family=args.family,
        run_id=args.run_id or args.out.parent.name,
        axes=axes,
        meta={
            "model": args.model,
            "mask_seed": args.mask_seed,
            "mlm_probability": args.mlm_probability,
            "max_length": args.max_length,
            "word_nll": {"sentences": args.pll_sentences, "words": args.pll_words},
            "files": {},
        },
    )
    word_level = _word_level(args)
    for path, lang, texts in zip(args.data, langs, corpora):
        fixed = FixedMasking(
            tokenizer, texts, seed=args.mask_seed, mlm_probability=args.mlm_probability, max_length=args.max_length
        )
        result = perplexity(model, fixed.batches(args.batch_size), device, per_sentence=True)
        dims = {"lang": lang, "split": path.stem}
        metrics.add("perplexity", result.perplexity, **dims)
        metrics.add("mlm_loss", result.loss, **dims)
        metrics.add("masked_tokens", result.tokens, **dims)
        if word_level is not None:  # the tokenizer-independent counterpart (word_nll)
            text_langs = read_text_langs(path, lang)[: len(texts)]
            scored = word_nll(
                model,
                tokenizer,
                spread_subset(texts, word_level.sentences),
                word_level.max_words,
                args.max_length,
                args.batch_size,
                device,
                spread_subset(text_langs, word_level.sentences),
            )
            metrics.extend(word_nll_records(scored, word_level.max_unk_share, **dims))
        metrics.examples.append(perplexity_examples(result, fixed, **dims))
        metrics.meta["files"][str(path)] = {
            "lang": lang,
            "sentences": len(texts),
            "mask_fingerprint": fixed.fingerprint,
        }
        log.info("%s (%s): perplexity %.4f over %d masked tokens", path, lang, result.perplexity, result.tokens)
    metrics.write(args.out)


def _adapt_summary_arguments(p):
    p.add_argument("--table", required=True, help="tidy CSV from `xlt aggregate` (adapt runs + references)")
    p.add_argument("--out", required=True, help="CSV path")
    p.add_argument(
        "--word-nll-out",
        default=None,
        help="CSV path of the NLL per word / character table (header only where no run scored them)",
    )


def _adapt_summary(args):
    import pandas as pd

    from xlt.core.io import atomic_path
    from xlt.families.adapt.tables import WORD_METRICS, final_perplexity_table, word_nll_table
    from xlt.report.aggregate import read_table

    table = read_table(args.table)
    summary = final_perplexity_table(table)
    with atomic_path(args.out) as tmp:
        summary.to_csv(tmp, index=False, float_format="%.4f")
    print(summary.to_string(index=False))
    if args.word_nll_out:
        # config adapt.word_nll.sentences 0 scores none: a header-only table, not a failed job
        scored = bool(set(WORD_METRICS) & set(table.metric))
        words = (
            word_nll_table(table) if scored else pd.DataFrame(columns=["metric", "model", "role", "scheme", "seeds"])
        )
        with atomic_path(args.word_nll_out) as tmp:
            words.to_csv(tmp, index=False, float_format="%.4f")
        print(words.to_string(index=False) if scored else "no NLL per word records (--pll-sentences 0)")


VERBS = {
    "sample-texts": Verb(
        "Draw a fixed evaluation sentence set (seeded, balanced across files) into one JSONL file",
        _sample_texts_arguments,
        _sample_texts,
    ),
    "adapt-mlm": Verb(
        "MLM-train a masked LM on a target-language corpus under a layer scheme; perplexity and distance "
        "to a native model at step 0 and every --eval-every steps (fixed masks), final perplexities",
        _adapt_mlm_arguments,
        _adapt_mlm,
    ),
    "perplexity": Verb(
        "masked-LM perplexity per data file, with masks fixed by --mask-seed (comparable across runs)",
        _perplexity_arguments,
        _perplexity,
    ),
    "adapt-summary": Verb(
        "Final perplexity (and NLL per word / character) per layer scheme and reference model "
        "(mean/sd over seeds) from the adapt tidy table",
        _adapt_summary_arguments,
        _adapt_summary,
    ),
}
