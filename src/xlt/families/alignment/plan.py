"""The alignment sweep: config checks and one row per job."""
from __future__ import annotations

import math
from pathlib import Path

from xlt.core import settings
from xlt.core.errors import XltError
from xlt.core.settings import dataset_languages, depth_label, model_layers
from xlt.core.settings import number_label as _number
from xlt.core.settings import require as _require
from xlt.core.settings import require_split as _require_split
from xlt.families.dual.plan import _require_bitext, dual_runs
from xlt.families.freeze_depth.plan import runs as freeze_depth_runs


def training_settings(config: dict, family: str) -> dict:
    return settings.training(config, family)

# ---------------------------------------------------------------- alignment: per-layer analysis (seed 001)
ALIGNMENT_DEFAULTS = {"models": [], "dual_runs": "all", "freeze_depths": [], "layers": "all", "pooling": "mean",
                      "center": True, "tsne_layers": [], "tsne_sample": 100, "projection": "tsne",
                      "english_label": "en", "max_length": 128}


def alignment_settings(config: dict) -> dict | None:
    family = config.get("alignment")
    if not family or not family.get("enabled", True):
        return None
    return {**ALIGNMENT_DEFAULTS, **family, "data": {"split": "test", **family["data"]}}


def alignment_runs(config: dict) -> list[dict]:
    """One row per analysed model: declared (pretrained) models, dual-encoder runs, and the
    freeze_depth family's fine-tuned models at the chosen depths (first seed). `source`
    says which; `source_run` is the training run's id (None for a pretrained model)."""
    family = alignment_settings(config)
    if family is None:
        return []
    rows = [{"run_id": f"pretrained-{model}", "source": "pretrained", "model": model, "source_run": None}
            for model in family["models"]]
    dual = {row["run_id"]: row for row in dual_runs(config)}
    chosen = list(dual) if family["dual_runs"] == "all" else family["dual_runs"]
    rows += [{"run_id": f"dual-{run}", "source": "dual", "model": dual[run]["model"], "source_run": run}
             for run in chosen if run in dual]
    if family["freeze_depths"]:
        freeze_rows = freeze_depth_runs(config)
        first_seed = {}
        for row in freeze_rows:
            first_seed.setdefault(row["model"], row["seed"])
        rows += [{"run_id": f"freeze_depth-{row['run_id']}", "source": "freeze_depth", "model": row["model"],
                  "source_run": row["run_id"]}
                 for row in freeze_rows
                 if row["freeze_depth"] in family["freeze_depths"] and row["seed"] == first_seed[row["model"]]]
    return rows


def _check_alignment(config: dict) -> None:
    family = alignment_settings(config)
    if family is None:
        return
    data = family["data"]
    _require_bitext(config, data["dataset"], "alignment.data.dataset")
    _require_split(config, data["dataset"], data["split"], data["langs"], "alignment.data")
    for model in family["models"]:
        _require(config, "models", model, "alignment.models")
    if family["dual_runs"] != "all":
        known = [row["run_id"] for row in dual_runs(config)]
        unknown = [run for run in family["dual_runs"] if run not in known]
        if unknown:
            raise XltError(f"alignment.dual_runs: unknown dual run(s) {unknown}; the dual sweep has "
                           f"{', '.join(known) if known else 'no runs (dual is absent or disabled)'}")
    if family["freeze_depths"]:
        swept = sorted({row["freeze_depth"] for row in freeze_depth_runs(config)})
        missing = [d for d in family["freeze_depths"] if d not in swept]
        if missing:
            raise XltError(f"alignment.freeze_depths: depth(s) {missing} are not in the freeze_depth sweep "
                           f"({swept if swept else 'freeze_depth is absent or disabled'}); add them to "
                           f"freeze_depth.depths or drop them here")
    runs = alignment_runs(config)
    if not runs:
        raise XltError("alignment: nothing to analyse; list alignment.models, or enable the dual family or "
                       "alignment.freeze_depths")
    for model in sorted({row["model"] for row in runs}):
        n = model_layers(config, model)
        for key in ("layers", "tsne_layers"):
            values = family[key]
            bad = [] if values == "all" else [layer for layer in values if layer > n]
            if bad:
                raise XltError(f"alignment.{key}: hidden-state index(es) {bad} out of range for model {model!r} "
                               f"with {n} layers; use 0 (embeddings) .. {n}")




check = _check_alignment
runs = alignment_runs
