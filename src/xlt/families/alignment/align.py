"""`xlt align`: per-layer cross-lingual alignment of an encoder on bitext: retrieval accuracy in
both directions (raw and centered) and the cosine gap between translations and non-translations."""

from __future__ import annotations

import csv
import io
import logging
from pathlib import Path

from xlt.core.embeddings import encoding_options
from xlt.core.errors import XltError
from xlt.core.io import write_text
from xlt.core.metrics import MetricsFile, parse_axes
from xlt.core.models import config_num_layers, load_encoder, load_tokenizer, pick_device
from xlt.core.sentence_encoder import read_pooling, saved_projection
from xlt.data.bitext_files import load_bitexts, resolve_langs
from xlt.evaluate.alignment import (
    MATCH,
    alignment_records,
    encode_bitexts,
    only_layers,
    parse_layers,
    project_layers,
    with_projection,
)
from xlt.evaluate.cosine_gap import cosine_gap_records
from xlt.families.alignment.plots import plot_projection_grid, plot_retrieval_by_layer


def layer_table(records: list[dict]) -> str:
    """CSV text: a row per layer, a column per (metric variant, lang, direction)."""

    columns: dict[str, dict[int, float]] = {}
    for rec in records:
        variant = " centered" if rec["metric"].endswith("_centered") else ""
        columns.setdefault(f"{rec['lang']} {rec['direction']}{variant}", {})[rec["layer"]] = rec["value"]
    layers = sorted({layer for col in columns.values() for layer in col})
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["layer", *columns])
    for layer in layers:
        writer.writerow([layer, *(f"{col[layer]:.4f}" if layer in col else "" for col in columns.values())])
    return out.getvalue()


def main(args):
    log = logging.getLogger(__name__)
    metrics = MetricsFile(
        family="alignment",
        run_id=args.run_id or Path(args.model).name,  # starts the wall clock
        axes=parse_axes(args.axes) | {"match": MATCH},
    )  # the rule is a table column
    # everything that can be wrong with the input is checked before the model is loaded
    if args.tsne_sample < 2:
        raise XltError(f"--tsne-sample must be at least 2, got {args.tsne_sample}")
    if args.tsne_layers and not args.out_plots:
        raise XltError("--tsne-layers draws pictures; give --out-plots DIR as well")
    codes = resolve_langs(args.bitext, args.langs)
    bitexts = load_bitexts(args.bitext, codes)
    depth = config_num_layers(args.model)
    layers = parse_layers(args.layers, depth)
    tsne_layers = parse_layers(args.tsne_layers, depth) if args.tsne_layers else []

    # a saved encoder's trained projection (a distilled student's): its output is one more index,
    # depth + 1, the projection of its pooled layer (checked against --pooling before loading)
    saved = read_pooling(args.model)
    projected_layer = saved.get("layer", -1) % (depth + 1)
    projection = saved_projection(args.model, args.pooling, projected_layer, depth) if "projection" in saved else None
    device = pick_device(args.device)
    tokenizer = load_tokenizer(args.model)
    model = load_encoder(args.model).to(device)
    encoded_layers = sorted(set(layers) | set(tsne_layers) | ({projected_layer} if projection else set()))
    encoded = encode_bitexts(model, tokenizer, bitexts, encoded_layers, **encoding_options(args, device))
    if projection is not None:
        encoded = with_projection(encoded, projected_layer, projection, depth + 1)
        layers = [*layers, depth + 1]
    in_table = [only_layers(e, layers) for e in encoded]
    records = alignment_records(in_table, examples_out=metrics.examples)
    if args.center:
        records += alignment_records(in_table, center_languages=True, examples_out=metrics.examples)
    for rec in records:
        log.info("%s %s layer %d %s: %.4f", rec["metric"], rec["lang"], rec["layer"], rec["direction"], rec["value"])
    # the cosine gap has no direction; kept apart so layers.csv and the run's line picture stay retrieval only
    gaps = cosine_gap_records(in_table, seed=args.seed, examples_out=metrics.examples)
    if args.center:
        gaps += cosine_gap_records(in_table, center_languages=True, seed=args.seed, examples_out=metrics.examples)
    for rec in gaps:
        log.info("%s %s layer %d: %.4f", rec["metric"], rec["lang"], rec["layer"], rec["value"])

    metrics.meta.update(
        {
            "model": args.model,
            "pooling": args.pooling,
            "prompt": args.prompt,
            "layers": layers,
            "center": args.center,
            "max_length": args.max_length,
            "projection": None
            if projection is None
            else {
                "index": depth + 1,
                "layer": projected_layer,
                "shape": [projection.in_features, projection.out_features],
            },
            "cosine_gap": {"random_pairs": "sattolo_derangement", "seed": args.seed},
            "bitexts": {b.lang: {"path": str(p), "pairs": len(b.texts)} for b, p in zip(bitexts, args.bitext)},
        }
    )
    metrics.extend(records + gaps)
    if args.out_plots:
        plots = Path(args.out_plots)
        plot_retrieval_by_layer(
            records, plots / "retrieval_by_layer.png", title=f"{metrics.run_id}: retrieval accuracy by layer"
        )
        if tsne_layers:
            projections = project_layers(
                encoded,
                tsne_layers,
                sample=args.tsne_sample,
                method=args.projection,
                center_languages=args.center,
                seed=args.seed,
                threads=args.tsne_threads,
                english=args.english_label,
            )
            plot_projection_grid(
                projections,
                plots / f"{args.projection}_layers.png",
                title=f"{metrics.run_id}: parallel sentences by layer" + (" (centred)" if args.center else ""),
            )
            metrics.meta["projection"] = {
                "layers": tsne_layers,
                "sample": args.tsne_sample,
                "method": [p.method for p in projections],
            }
    if args.out_table:
        write_text(args.out_table, layer_table(records))
    metrics.write(args.out_metrics)
