"""`xlt adapt-mlm`: MLM adaptation of a (multilingual) masked LM to a target language under a layer scheme."""
from __future__ import annotations

import json
from pathlib import Path

HELP = ("MLM-train a masked LM on a target-language corpus under a layer scheme; perplexity and distance "
        "to a native model at step 0 and every --eval-every steps (fixed masks), final perplexities")


def add_arguments(p):
    from xlt.families.adapt.similarity import LEVELS
    from xlt.families.adapt.adaptation import SELECT
    from xlt.core.training import add_train_arguments

    p.add_argument("--model", required=True, help="masked LM to adapt: directory or hub id (e.g. mBERT)")
    p.add_argument("--train", required=True, type=Path, help="normalised JSONL of target-language sentences ('text')")
    p.add_argument("--target", required=True, type=Path,
                   help="held-out target-language JSONL: curves and checkpoint selection (dims from the path: "
                        "lang = directory name, split = file stem, as in `xlt perplexity`)")
    p.add_argument("--eval", action="append", type=Path, default=[],
                   help="further JSONL evaluated at every checkpoint (e.g. the multilingual set); repeatable")
    p.add_argument("--test", action="append", type=Path, default=[],
                   help="JSONL evaluated only once, after training, on the selected model; repeatable")
    p.add_argument("--scheme", required=True,
                   help="trained layers: 'A-B' (layers A+1..B, embeddings frozen) or JSON, e.g. "
                        "'{\"gradual\": {\"every_epochs\": 1, \"step\": 4, \"start\": 4}}'")
    p.add_argument("--select", choices=SELECT, default="best",
                   help="keep the checkpoint with the best target perplexity (the seed's early stopping) or the last")
    p.add_argument("--native", default=None, help="native target-language model to compare layers with (optional)")
    p.add_argument("--compare", type=Path, default=None, help="JSONL of sentences for the layer comparison")
    p.add_argument("--compare-layers", type=int, nargs="+", default=None,
                   help="hidden-state indices (0 = embeddings; default: all both models have)")
    p.add_argument("--compare-levels", nargs="+", choices=LEVELS, default=list(LEVELS))
    p.add_argument("--mask-seed", type=int, default=1234, help="seed of the fixed evaluation masks")
    p.add_argument("--mlm-probability", type=float, default=0.15)
    p.add_argument("--eval-batch-size", type=int, default=16)
    p.add_argument("--run-id", default=None)
    p.add_argument("--axes", default="{}", help="JSON object: the sweep row, stored as meta.axes")
    p.add_argument("--out", required=True, type=Path, help="metrics JSON to write")
    p.add_argument("--checkpoint-dir", type=Path, default=None,
                   help="resumable training state (default: <--out's directory>/checkpoint, not an output); "
                        "removed once the metrics are written")
    add_train_arguments(p)


def parse_scheme_arg(text: str):
    """The --scheme value: a range string, or a JSON mapping for gradual unfreezing."""
    from xlt.core.errors import XltError

    text = text.strip()
    if text.startswith("{"):
        try:
            return json.loads(text)
        except json.JSONDecodeError as err:
            raise XltError(f"--scheme {text!r} is not valid JSON ({err})") from None
    return text


def _validate(args) -> tuple[object, dict]:
    from xlt.families.adapt.adaptation import file_dims
    from xlt.core.errors import XltError
    from xlt.families.adapt.layer_schemes import parse_scheme
    from xlt.core.metrics import parse_axes

    files = [args.train, args.target, *args.eval, *args.test] + ([args.compare] if args.compare else [])
    missing = [str(f) for f in files if not f.is_file()]
    if missing:
        raise XltError(f"data file(s) not found: {', '.join(missing)}")
    dims = [tuple(file_dims(f).values()) for f in [args.target, *args.eval, *args.test]]
    if len(set(dims)) != len(dims):
        raise XltError(f"evaluation files share (language, split) {dims}; their records would be "
                       "indistinguishable: name them <dir>/<lang>/<split>.jsonl")
    if (args.native is None) != (args.compare is None):
        raise XltError("give --native and --compare together (the layer comparison needs both) or neither")
    if not 0.0 < args.mlm_probability < 1.0:
        raise XltError(f"--mlm-probability must be in (0, 1), got {args.mlm_probability}")
    if args.eval_every < 0:
        raise XltError(f"--eval-every must be >= 0 (0 = every epoch), got {args.eval_every}")
    axes = parse_axes(args.axes)
    from xlt.core.models import config_num_layers

    scheme = parse_scheme(parse_scheme_arg(args.scheme), config_num_layers(args.model))
    return scheme, axes


def run(args):
    from xlt.families.adapt.adaptation import EvalSet, NativeComparison, adapt
    from xlt.families.adapt.mlm import read_texts
    from xlt.core.checkpoint import remove_checkpoint
    from xlt.core.freezing import count_parameters
    from xlt.core.metrics import MetricsFile
    from xlt.families.adapt.mlm import load_masked_lm
    from xlt.core.models import load_encoder, load_tokenizer, pick_device
    from xlt.core.training import result_meta, train_args_from

    scheme, axes = _validate(args)
    metrics = MetricsFile("adapt", args.run_id or args.out.parent.name, axes=axes)  # its clock times the job
    targs = train_args_from(args)
    texts = read_texts(args.train)
    device = pick_device(targs.device)
    tokenizer = load_tokenizer(args.model)
    model = load_masked_lm(args.model).to(device)

    def eval_set(path):
        return EvalSet.from_file(path, tokenizer, args.mask_seed, args.mlm_probability, targs.max_length)

    target, others, final_only = eval_set(args.target), [eval_set(p) for p in args.eval], [eval_set(p) for p in args.test]
    comparison = None
    if args.native is not None:
        native = load_encoder(args.native).to(device)
        comparison = NativeComparison(model, tokenizer, native, load_tokenizer(args.native),
                                      read_texts(args.compare), layers=args.compare_layers,
                                      levels=args.compare_levels, max_length=targs.max_length, device=device)
        del native  # its vectors are cached; free the memory for training

    checkpoint_dir = args.checkpoint_dir or args.out.parent / "checkpoint"
    result = adapt(model, tokenizer, texts, scheme, targs, target, others, final_only, comparison,
                   select=args.select, mlm_probability=args.mlm_probability, eval_batch_size=args.eval_batch_size,
                   checkpoint_dir=checkpoint_dir)

    metrics.meta.update(result_meta(result.train, targs) | count_parameters(model))
    metrics.meta.update({
        "model": args.model, "native": args.native, "scheme": scheme.name, "select": args.select,
        "mask_seed": args.mask_seed, "mlm_probability": args.mlm_probability, "train_sentences": len(texts),
        "eval_sets": {f"{s.lang}/{s.split}": s.describe() for s in [target, *others, *final_only]},
        "trainable_layers": {str(step): layers for step, layers in result.trainable.items()},
    })
    if comparison is not None:
        metrics.meta["comparison"] = {"sentences": len(comparison.sentences), "vectors": comparison.vectors,
                                      "measures": comparison.measures, "layers": comparison.layers}
    metrics.extend(result.records)
    metrics.write(args.out)
    remove_checkpoint(checkpoint_dir)
