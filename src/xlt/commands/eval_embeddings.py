"""`xlt eval-embeddings`: Tatoeba bitext retrieval error and STS correlations of a sentence encoder.

Any encoder in plain transformers layout (local directory or hub id) is pooled into sentence
vectors (`--pooling`, `--layer`), optionally scaled to unit length (`--normalize`, what a
sentence-transformers pipeline ending in a Normalize module does), then scored:

- Tatoeba (LASER layout, `--tatoeba-dir`, `--langs`; or normalised bitext JSONL, `--bitext`):
  cosine nearest-neighbour retrieval over each language's whole test set, error in both
  directions (``xx->en``, ``en->xx``), their mean and accuracy@1; see `xlt.evaluate.retrieval`
  for the definitions and the duplicates rule.
- STS (`--sts FILE`, repeatable): Pearson and Spearman of cosine, -euclidean, -manhattan and
  dot similarity against the gold scores; see `xlt.evaluate.sts`.

All input files are read and checked before the model is loaded. Metrics are written as one
MetricsFile (family "sbert"): values are fractions; the printed table shows them x100.
"""
from __future__ import annotations

import argparse
import logging
import re
from pathlib import Path

import numpy as np

from xlt.data.sts_files import STS_FORMATS, StsPairs, StsSource, describe_sts_file, load_sts
from xlt.data.bitext_files import (
    BitextSource,
    available_tatoeba_langs,
    describe_bitext_jsonl,
    load_bitext_jsonl,
    load_tatoeba,
)
from xlt.core.errors import XltError
from xlt.evaluate.retrieval import EN_TO_XX, MATCH_RULES, XX_TO_EN, bitext_retrieval, retrieval_records
from xlt.evaluate.sts import SIMILARITIES, sts_records, unit_rows
from xlt.core.metrics import MetricsFile, parse_axes
from xlt.core.pooling import POOLING_MODES

HELP = "Evaluate sentence embeddings: Tatoeba retrieval error (both directions) and STS correlations."

log = logging.getLogger(__name__)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--model", required=True, help="local model directory (transformers layout) or hub id")
    parser.add_argument("--pooling", choices=POOLING_MODES, default="mean")
    parser.add_argument(
        "--layer", type=int, default=-1,
        help="hidden-state index to pool: 0 = embeddings, -1 = last layer (default), -2 = second-to-last",
    )
    parser.add_argument(
        "--normalize", action="store_true",
        help="scale sentence vectors to unit length before scoring (as a sentence-transformers Normalize "
        "module does); leaves cosine unchanged, changes dot/euclidean/manhattan",
    )
    parser.add_argument("--tatoeba-dir", help="folder with LASER-layout tatoeba.xxx-eng.xxx / tatoeba.xxx-eng.eng files")
    parser.add_argument("--langs", help="comma-separated Tatoeba codes, e.g. deu,fra (default: every code found)")
    parser.add_argument(
        "--bitext", action="append", default=[], metavar="FILE",
        help="bitext JSONL (text = non-English, text_pair = English), repeatable, e.g. "
        "results/data/{dataset}/{lang}/{split}.jsonl; dataset, lang and split come from that path",
    )
    parser.add_argument(
        "--match", choices=MATCH_RULES, default="text",
        help="Tatoeba correctness: text = retrieved string equals the gold string (sentence-transformers' "
        "TranslationEvaluator, default); index = retrieved index is the gold index (LASER)",
    )
    parser.add_argument(
        "--sts", action="append", default=[], metavar="FILE",
        help="STS file (repeatable): original STS-b sts-*.csv, stsb_multi_mt stsb-xx-*.csv, or JSONL "
        "with text/text_pair/score; dataset, lang and split are taken from the file name",
    )
    parser.add_argument("--sts-format", choices=STS_FORMATS, help="force the STS format (default: detect per file)")
    parser.add_argument("--out", required=True, help="metrics JSON to write")
    parser.add_argument("--axes", default="{}", help="extra sweep axes as JSON, stored in the metrics meta (the workflow passes them)")
    parser.add_argument("--run-id", help="run id stored in the metrics file (default: from model, pooling, layer)")
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--max-length", type=int, default=128, help="tokens per sentence after truncation")
    parser.add_argument("--device", default="auto", help="auto, cpu, cuda, cuda:1 ...")


def run(args: argparse.Namespace) -> None:
    bitext = read_bitext_inputs(args.tatoeba_dir, args.langs, args.bitext)
    sts = read_sts_inputs(args.sts, args.sts_format)
    if not bitext and not sts:
        raise XltError("nothing to evaluate: pass --tatoeba-dir, --bitext FILE and/or --sts FILE")
    if args.batch_size < 1 or args.max_length < 2:
        raise XltError(f"--batch-size must be >= 1 and --max-length >= 2 (got {args.batch_size}, {args.max_length})")
    num_layers = check_model_and_layer(args.model, args.layer)
    axes = parse_axes(args.axes)

    from xlt.core.embeddings import encode
    from xlt.core.models import load_encoder, load_tokenizer, pick_device

    device = pick_device(args.device)
    tokenizer = load_tokenizer(args.model)
    model = load_encoder(args.model).to(device)
    if num_layers is None:  # hub id: the layer count is known only now
        num_layers = _config_layers(model.config)
        _check_layer(args.layer, num_layers, args.model)

    def embed(sentences: list[str]) -> np.ndarray:
        vectors = encode(
            model, tokenizer, sentences, pooling=args.pooling, layer=args.layer,
            batch_size=args.batch_size, max_length=args.max_length, device=device,
        )
        return unit_rows(vectors).astype(np.float32) if args.normalize else vectors

    metrics = MetricsFile(
        family="sbert",
        run_id=args.run_id or default_run_id(args.model, args.pooling, args.layer, args.normalize),
        axes=axes | {"pooling": args.pooling, "layer": args.layer, "normalize": args.normalize},
        meta={
            "model": args.model,
            "hidden_state_index": args.layer % (num_layers + 1) if num_layers is not None else args.layer,
            "max_length": args.max_length,
            "batch_size": args.batch_size,
            "device": str(device),
            "tatoeba_dir": args.tatoeba_dir,
            "bitext_files": list(args.bitext),
            "retrieval_match": args.match,
            "sts_files": [str(path) for path, _, _ in sts],
        },
    )
    bitext_rows = []
    for source, (xx, en) in bitext.items():
        log.info("bitext %s: encoding %d pairs", "/".join(map(str, source)), len(xx))
        result = bitext_retrieval(embed(xx), embed(en), xx, en, match=args.match)
        metrics.extend(retrieval_records(result, dataset=source.dataset, lang=source.lang, split=source.split))
        bitext_rows.append((source, result))
    sts_rows = []
    for path, source, pairs in sts:
        log.info("STS %s: encoding %d pairs", path, len(pairs.scores))
        records = sts_records(
            embed(pairs.sentences1), embed(pairs.sentences2), pairs.scores,
            dataset=source.dataset, lang=source.lang, split=source.split,
        )
        metrics.extend(records)
        sts_rows.append((source, len(pairs.scores), records))
    print(format_table(bitext_rows, sts_rows), flush=True)
    metrics.write(args.out)
    log.info("wrote %d metrics to %s", len(metrics.records), args.out)


def read_bitext_inputs(
    directory: str | None, langs: str | None, jsonl_paths: list[str]
) -> dict[BitextSource, tuple[list[str], list[str]]]:
    """{(dataset, lang, split): (xx sentences, en sentences)}, every file read and checked.

    LASER files from `directory` become dataset "tatoeba", split "test".
    """
    inputs: dict[BitextSource, tuple[list[str], list[str]]] = {}
    if directory is None and langs:
        raise XltError("--langs needs --tatoeba-dir")
    if directory is not None:
        codes = [c.strip() for c in langs.split(",") if c.strip()] if langs else available_tatoeba_langs(directory)
        if not codes:
            raise XltError(f"no tatoeba.xxx-eng.xxx files in {directory}; pass the folder with LASER's Tatoeba files")
        if len(set(codes)) != len(codes):
            raise XltError(f"--langs lists a code twice: {langs}")
        for code in codes:
            inputs[BitextSource("tatoeba", code, "test")] = load_tatoeba(directory, code)
    for path in jsonl_paths:
        source = describe_bitext_jsonl(path)
        if source in inputs:
            raise XltError(
                f"bitext {path} maps to dataset={source.dataset} lang={source.lang} split={source.split}, "
                "like another input; their metrics would collide (pass each test set once)"
            )
        inputs[source] = load_bitext_jsonl(path)
    return inputs


def read_sts_inputs(paths: list[str], fmt: str | None) -> list[tuple[str, StsSource, StsPairs]]:
    """(path, dataset/lang/split, pairs) per STS file; two files may not map to the same records."""
    inputs, seen = [], {}
    for path in paths:
        pairs = load_sts(path, fmt)
        source = describe_sts_file(path, fmt)
        if source in seen:
            raise XltError(
                f"STS files {seen[source]} and {path} both map to dataset={source.dataset} lang={source.lang} "
                f"split={source.split}; their metrics would collide (rename one, e.g. to stsb-LANG-SPLIT.csv)"
            )
        seen[source] = path
        inputs.append((path, source, pairs))
    return inputs


def check_model_and_layer(model: str, layer: int) -> int | None:
    """Number of encoder layers read from a local config.json (None for a hub id); checks --layer."""
    path = Path(model)
    if not path.exists():
        if model.startswith((".", "/", "~")) or model.count("/") > 1 or "\\" in model:
            raise XltError(f"model directory {model} does not exist; pass a local directory or a hub id (org/name)")
        return None
    if not (path / "config.json").is_file():
        raise XltError(f"{model} has no config.json; pass a model directory in transformers layout (save_pretrained)")
    from transformers import AutoConfig

    num_layers = _config_layers(AutoConfig.from_pretrained(str(path.resolve())))
    _check_layer(layer, num_layers, model)
    return num_layers


def _config_layers(config) -> int | None:
    return getattr(config, "num_hidden_layers", None) or getattr(config, "n_layers", None)


def _check_layer(layer: int, num_layers: int | None, model: str) -> None:
    if num_layers is not None and not -(num_layers + 1) <= layer <= num_layers:
        raise XltError(
            f"--layer {layer} is out of range for {model}: it has {num_layers} layers, so hidden-state "
            f"indices run 0..{num_layers} (or -{num_layers + 1}..-1)"
        )


def default_run_id(model: str, pooling: str, layer: int, normalize: bool) -> str:
    name = re.sub(r"[^A-Za-z0-9_.-]+", "_", Path(model.rstrip("/")).name) or "model"
    return f"{name}-{pooling}-layer{layer}" + ("-norm" if normalize else "")


def format_table(bitext_rows: list, sts_rows: list) -> str:
    """Readable summary: retrieval error % per direction and mean, STS correlations x100."""
    lines = []
    if bitext_rows:
        labels = [s.lang if s.dataset == "tatoeba" else "/".join(str(p) for p in s if p is not None) for s, _ in bitext_rows]
        width = max(8, *(len(label) + 2 for label in labels))
        lines.append("Bitext retrieval error % (cosine nearest neighbour over the whole test set)")
        lines.append(f"{'lang':<{width}}{'n':>6}{XX_TO_EN:>10}{EN_TO_XX:>10}{'mean':>10}")
        for label, (_, r) in zip(labels, bitext_rows):
            lines.append(
                f"{label:<{width}}{r.n:>6}{100 * r.error_xx_to_en:>10.2f}{100 * r.error_en_to_xx:>10.2f}{100 * r.mean_error:>10.2f}"
            )
        if len(bitext_rows) > 1:
            average = [np.mean([getattr(r, a) for _, r in bitext_rows]) for a in ("error_xx_to_en", "error_en_to_xx", "mean_error")]
            lines.append(f"{'average':<{width}}{'':>6}" + "".join(f"{100 * v:>10.2f}" for v in average))
    if sts_rows:
        if lines:
            lines.append("")
        lines.append("STS correlation x100 (Pearson / Spearman)")
        lines.append(f"{'dataset/lang/split':<28}{'n':>6}" + "".join(f"{s:>16}" for s in SIMILARITIES))
        for source, n, records in sts_rows:
            values = {(r["metric"], r["similarity"]): r["value"] for r in records}
            label = "/".join(str(part) for part in source if part is not None)
            cells = "".join(
                f"{100 * values[('pearson', s)]:>8.2f} /{100 * values[('spearman', s)]:>6.2f}" for s in SIMILARITIES
            )
            lines.append(f"{label:<28}{n:>6}{cells}")
    return "\n".join(lines)
