"""Load and check the workflow config, and turn its sweeps into one row per job.

The JSON schema (workflow/schemas/config.schema.yaml) checks shapes and allowed values;
`check` adds what a schema cannot: cross references (a family naming a model or dataset
that is not declared) and freeze depths against each model's number of layers. Both run
before any job, so a bad config fails with a message that names the key.
"""
from __future__ import annotations

import json
from pathlib import Path

import yaml

from .errors import XltError

SCHEMA_PATH = Path(__file__).resolve().parents[2] / "workflow" / "schemas" / "config.schema.yaml"


def load_config(path: str | Path) -> dict:
    with open(path, encoding="utf-8") as f:
        config = yaml.safe_load(f)
    validate(config)
    return config


def validate(config: dict, schema_path: str | Path = SCHEMA_PATH) -> None:
    """Schema validation with defaults filled in, then the cross-reference checks."""
    import jsonschema

    with open(schema_path, encoding="utf-8") as f:
        schema = yaml.safe_load(f)
    validator_cls = jsonschema.validators.validator_for(schema)
    errors = sorted(validator_cls(schema).iter_errors(config), key=lambda e: list(e.absolute_path))
    if errors:
        err = errors[0]
        where = ".".join(map(str, err.absolute_path)) or "(top level)"
        raise XltError(f"config error at {where}: {err.message}")
    check(config)


def model_layers(config: dict, name: str, root: str | Path = ".") -> int:
    """Number of encoder layers of a declared model, read without loading weights."""
    spec = config["models"][name]
    if "layers" in spec:
        return int(spec["layers"])
    if spec["source"] == "local":
        cfg_file = Path(root) / spec["path"] / "config.json"
        if not cfg_file.is_file():
            raise XltError(f"models.{name}.path: {cfg_file} not found; point it at a save_pretrained directory")
        cfg = json.loads(cfg_file.read_text())
        for key in ("num_hidden_layers", "n_layers", "num_layers"):
            if key in cfg:
                return int(cfg[key])
        raise XltError(f"models.{name}: cannot read the number of layers from {cfg_file}; set models.{name}.layers")
    raise XltError(f"models.{name}: set `layers` (e.g. 12 for bert-base-multilingual-cased) so the sweep "
                   f"can be planned without downloading the model")


def depths(config: dict, family: dict, model: str) -> list[int]:
    n = model_layers(config, model)
    wanted = family.get("depths", "all")
    values = list(range(-1, n + 1)) if wanted == "all" else list(wanted)
    for d in values:
        if not -1 <= d <= n:
            raise XltError(f"freeze depth {d} in freeze_depth.depths is out of range for model {model!r} with "
                           f"{n} layers; allowed: -1 (nothing frozen), 0 (embeddings) .. {n}")
    return values


def _require(config: dict, kind: str, name: str, where: str) -> None:
    if name not in config.get(kind, {}):
        declared = ", ".join(sorted(config.get(kind, {}))) or "none"
        raise XltError(f"{where}: unknown {kind[:-1]} {name!r}; declared {kind}: {declared}")


def dataset_languages(config: dict, dataset: str, split: str) -> list[str]:
    from .data.prepare import split_languages

    return split_languages(config["datasets"][dataset]).get(split, [])


def _require_split(config: dict, dataset: str, split: str, langs: list[str], where: str) -> None:
    available = dataset_languages(config, dataset, split)
    missing = [lang for lang in langs if lang not in available]
    if missing:
        raise XltError(f"{where}: dataset {dataset!r} has no {split} split for {missing}; "
                       f"it declares {split} for {available} (datasets.{dataset}.splits)")


def check(config: dict) -> None:
    if config.get("sbert") and config["sbert"].get("enabled", True):
        _check_sbert(config, config["sbert"])
    family = config.get("freeze_depth")
    if family and family.get("enabled", True):
        for model in family["models"]:
            _require(config, "models", model, "freeze_depth.models")
            depths(config, family, model)
        for role in ("train", "eval"):
            _require(config, "datasets", family[role]["dataset"], f"freeze_depth.{role}.dataset")
        _require_split(config, family["train"]["dataset"], "train", [family["train"]["lang"]], "freeze_depth.train")
        _require_split(config, family["train"]["dataset"], "dev", [family["train"]["lang"]], "freeze_depth.train")
        _require_split(config, family["eval"]["dataset"], family["eval"].get("split", "test"),
                       family["eval"]["langs"], "freeze_depth.eval")


def _check_sbert(config: dict, family: dict) -> None:
    for model in family["models"]:
        _require(config, "models", model, "sbert.models")
        n = model_layers(config, model)
        for layer in family.get("layers", [-1]):
            if not -(n + 1) <= layer <= n:
                raise XltError(f"layer {layer} in sbert.layers is out of range for model {model!r} with {n} layers; "
                               f"allowed: 0 (embeddings) .. {n}, or -1 (last) .. -{n + 1}")
        depths(config, {"depths": family.get("depths", [-1])}, model)
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


def depth_label(depth: int) -> str:
    return "none" if depth == -1 else f"{depth:02d}"


def freeze_depth_runs(config: dict) -> list[dict]:
    """One row per fine-tuning job: model x freeze depth x seed."""
    family = config.get("freeze_depth")
    if not family or not family.get("enabled", True):
        return []
    rows = []
    for model in family["models"]:
        for depth in depths(config, family, model):
            for seed in family.get("seeds", [1]):
                rows.append({
                    "run_id": f"{model}-depth{depth_label(depth)}-seed{seed}",
                    "model": model, "freeze_depth": depth, "seed": seed,
                })
    return rows


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


def training_settings(config: dict, family: str) -> dict:
    """Shared `training` defaults with the family's own `training` overrides on top."""
    return {**config.get("training", {}), **config.get(family, {}).get("training", {})}


# family -> function expanding the config into one row per training job
SWEEPS = {"freeze_depth": freeze_depth_runs, "sbert": sbert_runs}
