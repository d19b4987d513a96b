"""`xlt align`: per-layer cross-lingual alignment of an encoder on parallel sentences.

Each --bitext is a normalised JSONL file (text = non-English side, text_pair = English).
Its language comes from --langs (same order as the files) or else from the file's parent
directory name (results/data/tatoeba/deu/test.jsonl -> deu). Besides retrieval accuracy every
layer gets the cosine gap of translations (xlt.evaluate.cosine_gap); `xlt align-gap-plot` draws
it per analysed model from the aggregated table. A saved encoder with a trained projection (a
distilled student narrower or wider than its teacher) gets one more index, its last layer + 1:
its pooled layer through the projection, the sentence vector it emits to every other evaluator.
"""

from __future__ import annotations

from xlt.core.verbs import Verb, add_run_arguments, family_group

GROUP = family_group("alignment", "per-layer cross-lingual alignment of an encoder: retrieval, cosine gap")


def _align_arguments(p):
    from xlt.core.choices import POOLING_MODES
    from xlt.evaluate.alignment import PROJECTION_METHODS

    p.add_argument("--model", required=True, help="model directory or hub id")
    p.add_argument(
        "--bitext",
        action="append",
        required=True,
        metavar="FILE.jsonl",
        help="normalised bitext records (text = non-English, text_pair = English); repeat for more languages",
    )
    p.add_argument(
        "--langs", help="comma-separated language codes, one per --bitext (default: each file's parent directory name)"
    )
    p.add_argument(
        "--layers", default="all", help="'all' or comma-separated hidden-state indices, 0 = embeddings (default all)"
    )
    p.add_argument(
        "--pooling",
        default="mean",
        choices=POOLING_MODES,
        help="how token vectors become one sentence vector (default mean)",
    )
    p.add_argument(
        "--prompt",
        default="",
        help="text put before every sentence before encoding, e.g. "
        "'query: ' for E5 (the config's models.<name>.prompt; default none)",
    )
    p.add_argument(
        "--center",
        action="store_true",
        help="also report accuracy and cosine gap after subtracting each language's mean vector "
        "(metrics bitext_retrieval_acc_centered, cosine_gap_centered)",
    )
    p.add_argument(
        "--tsne-layers", default="", help="comma-separated hidden-state indices to project in 2-D (needs --out-plots)"
    )
    p.add_argument(
        "--tsne-sample", type=int, default=200, help="parallel pairs per language in the 2-D pictures (default 200)"
    )
    p.add_argument(
        "--projection", default="tsne", choices=PROJECTION_METHODS, help="2-D projection method (default tsne)"
    )
    p.add_argument(
        "--english-label",
        default="en",
        help="language label of the English side in the pictures (default en; eng for Tatoeba codes)",
    )
    p.add_argument("--tsne-threads", type=int, default=1, help="OpenMP threads for t-SNE (default 1)")
    p.add_argument(
        "--seed",
        type=int,
        default=0,
        help="seed of the pair sample, the projection and the cosine gap's random pairs (default 0)",
    )
    p.add_argument("--batch-size", type=int, default=64, help="sentences encoded at once (default 64)")
    p.add_argument(
        "--max-length", type=int, default=128, help="tokens per sentence; longer ones are truncated (default 128)"
    )
    add_run_arguments(
        p, "--device", "--run-id", "--axes", "--out-metrics", run_id_default="the --model directory's name"
    )
    p.add_argument("--out-table", help="CSV: one row per layer, one column per language/direction")
    p.add_argument("--out-plots", help="directory for retrieval_by_layer.png and the projection grid")


def layer_table(records: list[dict]) -> str:
    """CSV text: a row per layer, a column per (metric variant, lang, direction)."""
    import csv
    import io

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


def _align(args):
    import logging
    from pathlib import Path

    from xlt.core.errors import XltError
    from xlt.core.io import write_text
    from xlt.core.metrics import MetricsFile, parse_axes
    from xlt.core.models import config_num_layers
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

    from xlt.core.models import load_encoder, load_tokenizer, pick_device
    from xlt.core.sentence_encoder import read_pooling, saved_projection

    # a saved encoder's trained projection (a distilled student's): its output is one more index,
    # depth + 1, the projection of its pooled layer (checked against --pooling before loading)
    saved = read_pooling(args.model)
    projected_layer = saved.get("layer", -1) % (depth + 1)
    projection = saved_projection(args.model, args.pooling, projected_layer, depth) if "projection" in saved else None
    device = pick_device(args.device)
    tokenizer = load_tokenizer(args.model)
    model = load_encoder(args.model).to(device)
    encoded_layers = sorted(set(layers) | set(tsne_layers) | ({projected_layer} if projection else set()))
    encoded = encode_bitexts(
        model,
        tokenizer,
        bitexts,
        encoded_layers,
        pooling=args.pooling,
        batch_size=args.batch_size,
        max_length=args.max_length,
        device=device,
        prompt=args.prompt,
    )
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
        from xlt.families.alignment.plots import plot_projection_grid, plot_retrieval_by_layer

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


def _gap_plot_arguments(p):
    p.add_argument("--table", required=True, help="the alignment family's tidy CSV from `xlt aggregate`")
    add_run_arguments(p, "--run-id")  # required: the analysed run's rows, e.g. pretrained-mbert
    p.add_argument("--out", required=True, help="PNG path")
    p.add_argument(
        "--title", default="", help="figure title (default: '<run id>: cosine gap of translations by layer')"
    )


def _gap_plot(args):
    from xlt.core.io import atomic_path
    from xlt.families.alignment.plots import cosine_gap_by_layer
    from xlt.core.tables import read_table

    with atomic_path(args.out) as tmp:
        cosine_gap_by_layer(read_table(args.table), tmp, args.run_id, title=args.title)


VERBS = {
    "align": Verb(
        "Per-layer bitext retrieval accuracy (both directions) and cosine gap of translations of an "
        "encoder, with optional centring and t-SNE pictures",
        _align_arguments,
        _align,
    ),
    "align-gap-plot": Verb(
        "One analysed model's cosine gap of translations by layer (a line per language, raw and "
        "centred panels, bootstrap bands) from the alignment table",
        _gap_plot_arguments,
        _gap_plot,
    ),
}
