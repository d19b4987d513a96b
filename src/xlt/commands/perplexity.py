"""`xlt perplexity`: masked-LM perplexity of a model on fixed-masked JSONL text files."""
from __future__ import annotations

import argparse
import logging
from pathlib import Path

from xlt.core.errors import XltError
from xlt.core.metrics import MetricsFile, parse_axes
from xlt.families.adapt.mlm import FixedMasking, load_masked_lm, perplexity, read_texts
from xlt.core.models import load_tokenizer, pick_device

HELP = "masked-LM perplexity per data file, with masks fixed by --mask-seed (comparable across runs)"
log = logging.getLogger(__name__)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--model", required=True, help="masked-LM directory or hub id")
    parser.add_argument("--data", required=True, action="append", type=Path,
                        help="JSONL file with a 'text' key per record; repeat for several files")
    parser.add_argument("--langs", nargs="+", default=None,
                        help="language of each --data file, in order (default: each file's parent directory name)")
    parser.add_argument("--mask-seed", type=int, default=1234, help="seed of the fixed evaluation masks")
    parser.add_argument("--mlm-probability", type=float, default=0.15)
    parser.add_argument("--max-sentences", type=int, default=None, help="use the first N non-empty sentences per file")
    parser.add_argument("--max-length", type=int, default=128)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--device", default="auto")
    parser.add_argument("--family", default="mlm", help="family name in the metrics file (e.g. adapt)")
    parser.add_argument("--run-id", default=None, help="run id in the metrics file (default: --out's directory name)")
    parser.add_argument("--axes", default="{}", help="JSON object stored as meta.axes (columns in `xlt aggregate`)")
    parser.add_argument("--out", required=True, type=Path, help="metrics JSON to write")


def _validate(args) -> tuple[list[str], dict]:
    """(language per --data file, meta.axes), checked before any model loads."""
    missing = [str(p) for p in args.data if not p.is_file()]
    if missing:
        raise XltError(f"data file(s) not found: {', '.join(missing)}")
    if args.langs is not None and len(args.langs) != len(args.data):
        raise XltError(f"--langs has {len(args.langs)} entries but --data has {len(args.data)} files; "
                       "give one language per file, in the same order, or omit --langs")
    if args.max_sentences is not None and args.max_sentences < 1:
        raise XltError(f"--max-sentences must be at least 1, got {args.max_sentences}")
    if not 0.0 < args.mlm_probability < 1.0:
        raise XltError(f"--mlm-probability must be in (0, 1), got {args.mlm_probability}")
    axes = parse_axes(args.axes)
    langs = args.langs or [p.resolve().parent.name for p in args.data]
    if len(set(zip(langs, (p.stem for p in args.data)))) != len(langs):
        raise XltError(f"two --data files share language and split {list(zip(langs, (p.stem for p in args.data)))}; "
                       "their metrics would be indistinguishable")
    return langs, axes


def run(args) -> None:
    langs, axes = _validate(args)
    corpora = [read_texts(path, args.max_sentences) for path in args.data]
    device = pick_device(args.device)
    tokenizer = load_tokenizer(args.model)
    model = load_masked_lm(args.model).to(device)
    metrics = MetricsFile(family=args.family, run_id=args.run_id or args.out.parent.name, axes=axes,
                          meta={"model": args.model, "mask_seed": args.mask_seed,
                                "mlm_probability": args.mlm_probability, "max_length": args.max_length,
                                "files": {}})
    for path, lang, texts in zip(args.data, langs, corpora):
        fixed = FixedMasking(tokenizer, texts, seed=args.mask_seed, mlm_probability=args.mlm_probability,
                             max_length=args.max_length)
        result = perplexity(model, fixed.batches(args.batch_size), device)
        dims = {"lang": lang, "split": path.stem}
        metrics.add("perplexity", result.perplexity, **dims)
        metrics.add("mlm_loss", result.loss, **dims)
        metrics.add("masked_tokens", result.tokens, **dims)
        metrics.meta["files"][str(path)] = {"lang": lang, "sentences": len(texts), "mask_fingerprint": fixed.fingerprint}
        log.info("%s (%s): perplexity %.4f over %d masked tokens", path, lang, result.perplexity, result.tokens)
    metrics.write(args.out)
