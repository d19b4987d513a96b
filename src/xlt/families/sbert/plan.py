"""The sbert sweep: config checks and one row per job."""
from __future__ import annotations

import math
from pathlib import Path

from xlt.core import settings
from xlt.core.errors import XltError
from xlt.core.settings import dataset_languages, depth_label, model_layers
from xlt.core.settings import number_label as _number
from xlt.core.settings import require as _require
from xlt.core.settings import require_split as _require_split


def training_settings(config: dict, family: str) -> dict:
    return settings.training(config, family)

def _check_sbert(config: dict, family: dict) -> None:
    for model in family["models"]:
        _require(config, "models", model, "sbert.models")
        n = model_layers(config, model)
        for layer in family.get("layers", [-1]):
            if not -(n + 1) <= layer <= n:
                raise XltError(f"layer {layer} in sbert.layers is out of range for model {model!r} with {n} layers; "
                               f"allowed: 0 (embeddings) .. {n}, or -1 (last) .. -{n + 1}")
        settings.freeze_depths(config, family.get("depths", [-1]), model, "sbert.depths")
    _require(config, "datasets", family["train"]["dataset"], "sbert.train.dataset")
    _require_split(config, family["train"]["dataset"], "train", [family["train"]["lang"]], "sbert.train")
    dev = family["dev"]
    _require(config, "datasets", dev["dataset"], "sbert.dev.dataset")
    if config["datasets"][dev["dataset"]]["task"] not in ("sts", "nli"):
        raise XltError(f"sbert.dev.dataset: {dev['dataset']!r} must be an sts or nli dataset")
    _require_split(config, dev["dataset"], dev.get("split", "dev"), [dev["lang"]], "sbert.dev")
    if not family.get("eval"):
        raise XltError("sbert.eval: declare at least one of sts or bitext")
    for kind, task in (("sts", "sts"), ("bitext", "bitext")):
        spec = family["eval"].get(kind)
        if spec:
            _require(config, "datasets", spec["dataset"], f"sbert.eval.{kind}.dataset")
            if config["datasets"][spec["dataset"]]["task"] != task:
                raise XltError(f"sbert.eval.{kind}.dataset: {spec['dataset']!r} is not a {task} dataset")
            _require_split(config, spec["dataset"], spec.get("split", "test"), spec["langs"], f"sbert.eval.{kind}")


def sbert_runs(config: dict) -> list[dict]:
    """One row per evaluation: trained runs (model x pooling x layer x depth x seed) and,
    with `baselines`, the untrained model per (model, pooling, layer)."""
    family = config.get("sbert")
    if not family or not family.get("enabled", True):
        return []
    rows = []
    for model in family["models"]:
        for pooling in family.get("poolings", ["mean"]):
            for layer in family.get("layers", [-1]):
                stem = f"{model}-{pooling}-L{layer}"
                if family.get("baselines", True):
                    rows.append({"run_id": f"{stem}-untrained", "model": model, "pooling": pooling, "layer": layer,
                                 "trained": False, "freeze_depth": None, "seed": None})
                for depth in family.get("depths", [-1]):
                    for seed in family.get("seeds", [1]):
                        rows.append({"run_id": f"{stem}-depth{depth_label(depth)}-seed{seed}", "model": model,
                                     "pooling": pooling, "layer": layer, "trained": True, "freeze_depth": depth,
                                     "seed": seed})
    return rows




def check(config):
    _check_sbert(config, config["sbert"])


runs = sbert_runs
