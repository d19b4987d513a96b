"""What `xlt eval-embeddings` needs besides the model: its inputs read and checked, the
layer checked against the model's config, a default run id and the printed summary table.

Not a command module (commands never import each other): the verb in
xlt.evaluate.commands calls these, and every input is checked before a model is loaded.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from xlt.core.errors import XltError
from xlt.data.bitext_files import (
    BitextSource,
    available_tatoeba_langs,
    describe_bitext_jsonl,
    load_bitext_jsonl,
    load_tatoeba,
)
from xlt.data.sts_files import StsPairs, StsSource, describe_sts_file, load_sts
from xlt.evaluate.retrieval import EN_TO_XX, XX_TO_EN
from xlt.evaluate.sts import SIMILARITIES


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
    """Number of encoder layers read from a local config.json (None for a hub id: known once
    it is loaded); checks --layer."""
    path = Path(model)
    if not path.exists():
        if model.startswith((".", "/", "~")) or model.count("/") > 1 or "\\" in model:
            raise XltError(f"model directory {model} does not exist; pass a local directory or a hub id (org/name)")
        return None
    if not (path / "config.json").is_file():
        raise XltError(f"{model} has no config.json; pass a model directory in transformers layout (save_pretrained)")
    from xlt.core.models import config_num_layers  # deferred: imports torch

    num_layers = config_num_layers(model)
    check_layer(layer, num_layers, model)
    return num_layers


def check_layer(layer: int, num_layers: int, model: str) -> None:
    if not -(num_layers + 1) <= layer <= num_layers:
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
        labels = [
            s.lang if s.dataset == "tatoeba" else "/".join(str(p) for p in s if p is not None) for s, _ in bitext_rows
        ]
        width = max(8, *(len(label) + 2 for label in labels))
        lines.append("Bitext retrieval error % (cosine nearest neighbour over the whole test set)")
        lines.append(f"{'lang':<{width}}{'n':>6}{XX_TO_EN:>10}{EN_TO_XX:>10}{'mean':>10}")
        for label, (_, r) in zip(labels, bitext_rows):
            lines.append(
                f"{label:<{width}}{r.n:>6}{100 * r.error_xx_to_en:>10.2f}"
                f"{100 * r.error_en_to_xx:>10.2f}{100 * r.mean_error:>10.2f}"
            )
        if len(bitext_rows) > 1:
            average = [
                np.mean([getattr(r, a) for _, r in bitext_rows])
                for a in ("error_xx_to_en", "error_en_to_xx", "mean_error")
            ]
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
