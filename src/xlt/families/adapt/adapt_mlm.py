"""`xlt adapt-mlm`: one adaptation run: continue masked-LM training of a model on a target
language's text with a scheme of trainable layers, scoring perplexity along the way."""

from __future__ import annotations

from xlt.analysis.intervals import RepeatedSetIntervals
from xlt.core.checkpoint import model_inputs, remove_checkpoint, run_identity
from xlt.core.errors import XltError
from xlt.core.freezing import count_parameters
from xlt.core.metrics import MetricsFile, parse_axes
from xlt.core.models import config_num_layers, load_encoder, load_tokenizer, pick_device
from xlt.core.training import result_meta, train_args_from
from xlt.families.adapt.adaptation import EvalSet, NativeComparison, adapt, file_dims
from xlt.families.adapt.mlm import load_masked_lm, read_texts
from xlt.families.adapt.plan import check_grad_accum
from xlt.families.adapt.schemes import parse_scheme, parse_scheme_arg
from xlt.families.adapt.word_level import word_level_settings


def _validate_adapt_mlm(args) -> tuple[object, dict]:
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
    word_level_settings(args)
    axes = parse_axes(args.axes)
    scheme = parse_scheme(parse_scheme_arg(args.scheme), config_num_layers(args.model))
    return scheme, axes


def main(args):
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
        word_level=word_level_settings(args),
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
