"""`xlt compare-layers`: per-layer distance / CKA between a model and a reference model."""
from __future__ import annotations

import argparse
from pathlib import Path

from xlt.families.adapt.similarity import LEVELS, MEASURES, check_comparison, compare_models
from xlt.core.errors import XltError
from xlt.core.io import read_jsonl
from xlt.core.metrics import MetricsFile
from xlt.families.adapt.mlm import iter_texts
from xlt.core.models import encoder_parts, load_encoder, load_tokenizer, pick_device

HELP = ("per-layer mean Euclidean distance and linear CKA between --model and --reference "
        "on the same sentences (sentence = mean-pooled, word = first sub-word)")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--model", required=True, help="model directory or hub id (e.g. the adapted mBERT)")
    parser.add_argument("--reference", required=True, help="reference model directory or hub id (e.g. BERTje)")
    parser.add_argument("--data", required=True, type=Path, help="JSONL file with a 'text' key per record")
    parser.add_argument("--layers", type=int, nargs="+", default=None,
                        help="hidden-state indices to compare (0 = embeddings; default: all both models have)")
    parser.add_argument("--levels", nargs="+", default=list(LEVELS), choices=LEVELS)
    parser.add_argument("--measures", nargs="+", default=None, choices=MEASURES,
                        help="default: CKA, plus Euclidean distance when the hidden sizes match")
    parser.add_argument("--max-sentences", type=int, default=512, help="use the first N non-empty sentences")
    parser.add_argument("--max-length", type=int, default=128)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--device", default="auto")
    parser.add_argument("--out", required=True, type=Path, help="metrics JSON to write")


def run(args) -> None:
    if not args.data.is_file():
        raise XltError(f"data file not found: {args.data}")
    if args.max_sentences < 2:
        raise XltError(f"--max-sentences must be at least 2, got {args.max_sentences}")
    texts = []
    for text in iter_texts(read_jsonl(args.data), str(args.data)):
        texts.append(text)
        if len(texts) >= args.max_sentences:
            break
    if len(texts) < 2:
        raise XltError(f"{args.data}: layer comparison needs at least 2 non-empty 'text' records, found {len(texts)}")
    device = pick_device(args.device)
    model, reference = load_encoder(args.model).to(device), load_encoder(args.reference).to(device)
    tok_model, tok_reference = load_tokenizer(args.model), load_tokenizer(args.reference)
    max_layer = min(encoder_parts(model).num_layers, encoder_parts(reference).num_layers)
    layers = args.layers if args.layers is not None else list(range(max_layer + 1))
    if args.measures is not None:
        check_comparison(model, reference, layers, args.levels, args.measures)
    records = compare_models(model, tok_model, reference, tok_reference, texts, layers, levels=args.levels,
                             measures=args.measures, batch_size=args.batch_size, max_length=args.max_length,
                             device=device)
    metrics = MetricsFile(family="mlm", run_id=args.out.parent.name,
                          meta={"model": args.model, "reference": args.reference, "data": str(args.data),
                                "sentences": len(texts), "max_length": args.max_length})
    metrics.extend(records)
    metrics.write(args.out)
