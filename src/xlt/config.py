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
    _check_dual(config)
    _check_alignment(config)


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


# ---------------------------------------------------------------- dual: LaBSE-style dual encoder (seed 004)
DUAL_DEFAULTS = {"margins": [0.3], "scales": [10], "poolings": ["mean"], "freeze_depths": [-1], "seeds": [1],
                 "symmetric": "sum"}
DUAL_MINING_DEFAULTS = {"english": "en", "gold_fraction": 0.5, "path": "mteb/bucc-bitext-mining", "hub_split": "test",
                        "tune_fraction": 0.2, "tune_split": "dev", "test_split": "test", "k": 4, "strategy": "max",
                        "seed": 1}


def dual_settings(config: dict) -> dict | None:
    """The `dual` section with defaults filled in (dev defaults to the train dataset's dev
    split, batch sizes to training.batch_size), or None when absent or disabled."""
    family = config.get("dual")
    if not family or not family.get("enabled", True):
        return None
    out = {**DUAL_DEFAULTS, **family}
    train = {"split": "train", **family["train"]}
    out["train"] = train
    out["dev"] = {"dataset": train["dataset"], "langs": train["langs"], "split": "dev", **family.get("dev", {})}
    out["tatoeba"] = {"split": "test", "match": "text", **family["tatoeba"]}
    out.setdefault("batch_sizes", [training_settings(config, "dual").get("batch_size", 32)])
    if "mining" in family:
        out["mining"] = {**DUAL_MINING_DEFAULTS, **family["mining"]}
    return out


def dual_mining_pairs(family: dict) -> list[str]:
    """Language pairs mined, as in the BUCC file names (bitext source: LANG-english)."""
    mining = family.get("mining")
    if not mining:
        return []
    if mining["source"] == "bitext":
        return [f"{lang}-{mining['english']}" for lang in mining["langs"]]
    return list(mining["pairs"])


def _require_bitext(config: dict, dataset: str, where: str) -> None:
    _require(config, "datasets", dataset, where)
    task = config["datasets"][dataset]["task"]
    if task != "bitext":
        raise XltError(f"{where}: dataset {dataset!r} is a {task} dataset; this needs a bitext dataset "
                       f"(task: bitext, text = non-English side, text_pair = English)")


def _check_dual(config: dict) -> None:
    from .evaluate.mining import parse_pair

    family = dual_settings(config)
    if family is None:
        return
    for model in family["models"]:
        _require(config, "models", model, "dual.models")
        n = model_layers(config, model)
        for d in family["freeze_depths"]:
            if not -1 <= d < n:
                raise XltError(f"freeze depth {d} in dual.freeze_depths leaves nothing to train in model {model!r} "
                               f"with {n} layers; allowed: -1 (nothing frozen), 0 (embeddings) .. {n - 1}")
    for role in ("train", "dev", "tatoeba"):
        spec = family[role]
        _require_bitext(config, spec["dataset"], f"dual.{role}.dataset")
        _require_split(config, spec["dataset"], spec["split"], spec["langs"], f"dual.{role}")
    for axis in ("margins", "scales", "poolings", "batch_sizes", "freeze_depths", "seeds"):
        values = family[axis]
        if len(set(values)) != len(values):
            raise XltError(f"dual.{axis} lists a value more than once ({values}); each value is one sweep point")
    mining = family.get("mining")
    if mining:
        if mining["tune_split"] == mining["test_split"]:
            raise XltError(f"dual.mining: tune_split and test_split are both {mining['tune_split']!r}; "
                           "the threshold must be tuned on another split than the one it is scored on")
        if mining["source"] == "bitext":
            _require_bitext(config, mining["dataset"], "dual.mining.dataset")
            for split in (mining["tune_split"], mining["test_split"]):
                _require_split(config, mining["dataset"], split, mining["langs"], "dual.mining")
        if mining["source"] == "local" and not Path(mining["dir"]).is_dir():
            raise XltError(f"dual.mining.dir: {mining['dir']} is not a directory; point it at BUCC-layout files "
                           "({src}-{tgt}.{split}.{src|tgt|gold})")
        pairs = dual_mining_pairs(family)
        for pair in pairs:
            try:
                parse_pair(pair)
            except XltError as err:
                raise XltError(f"dual.mining: {err}") from None
        if len(set(pairs)) != len(pairs):
            raise XltError(f"dual.mining lists a language pair more than once: {pairs}")


def _number(value: float) -> str:
    return f"{value:g}"


def dual_runs(config: dict) -> list[dict]:
    """One row per dual-encoder training job: model x margin x scale x pooling x batch size x freeze depth x seed."""
    family = dual_settings(config)
    if family is None:
        return []
    rows = []
    for model in family["models"]:
        for margin in family["margins"]:
            for scale in family["scales"]:
                for pooling in family["poolings"]:
                    for batch_size in family["batch_sizes"]:
                        for depth in family["freeze_depths"]:
                            for seed in family["seeds"]:
                                rows.append({
                                    "run_id": f"{model}-margin{_number(margin)}-scale{_number(scale)}-{pooling}"
                                              f"-bs{batch_size}-depth{depth_label(depth)}-seed{seed}",
                                    "model": model, "margin": margin, "scale": scale, "pooling": pooling,
                                    "batch_size": batch_size, "freeze_depth": depth, "seed": seed,
                                })
    return rows


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


SWEEPS["dual"] = dual_runs
SWEEPS["alignment"] = alignment_runs
