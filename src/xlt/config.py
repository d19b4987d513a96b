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
    _check_adapt(config)


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


# ---------------------------------------------------------------- adapt: target-language MLM adaptation (seed 003)
ADAPT_MULTILINGUAL = "multilingual"  # `lang` of the pooled multilingual evaluation set
ADAPT_COMPARE = "compare"  # `split` name of the fixed sentences of the native-model comparison


def _adapt_enabled(config: dict) -> dict | None:
    family = config.get("adapt")
    return family if family and family.get("enabled", True) else None


def adapt_schemes(config: dict, model: str) -> list:
    """The family's layer schemes parsed for `model`; an error names the offending key."""
    from .layer_schemes import parse_scheme

    n = model_layers(config, model)
    parsed = []
    for i, scheme in enumerate(config["adapt"]["schemes"]):
        try:
            parsed.append(parse_scheme(scheme, n))
        except XltError as err:
            raise XltError(f"adapt.schemes[{i}] (model {model!r}, {n} layers): {err}") from None
    names = [s.name for s in parsed]
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:
        raise XltError(f"adapt.schemes lists {repeated} more than once; each scheme is one sweep value")
    return parsed


def _check_adapt(config: dict) -> None:
    family = _adapt_enabled(config)
    if family is None:
        return
    for model in family["models"]:
        _require(config, "models", model, "adapt.models")
        adapt_schemes(config, model)
    _require(config, "models", family["native"], "adapt.native")
    target, multi = family["target"], family["multilingual"]
    _require(config, "datasets", target["dataset"], "adapt.target.dataset")
    _require(config, "datasets", multi["dataset"], "adapt.multilingual.dataset")
    splits = {key: target.get(key, default) for key, default in
              (("train_split", "train"), ("eval_split", "dev"), ("test_split", "test"))}
    for key, split in splits.items():
        _require_split(config, target["dataset"], split, [target["lang"]], f"adapt.target.{key}")
    if splits["eval_split"] == splits["test_split"]:
        raise XltError(f"adapt.target: eval_split and test_split are both {splits['eval_split']!r}; the test "
                       "perplexity must come from sentences that never chose a checkpoint")
    if ADAPT_COMPARE in (splits["eval_split"], splits["test_split"]):
        raise XltError(f"adapt.target: split name {ADAPT_COMPARE!r} is reserved for the comparison sentences")
    if target["lang"] == ADAPT_MULTILINGUAL:
        raise XltError(f"adapt.target.lang: {ADAPT_MULTILINGUAL!r} names the pooled multilingual set; "
                       "use the target language's code")
    _require_split(config, multi["dataset"], multi.get("split", "dev"), multi["langs"], "adapt.multilingual")
    k = training_settings(config, "adapt").get("eval_every", 0)
    if k < 1:
        raise XltError(f"adapt.training.eval_every (K, steps between perplexity/distance checkpoints) must be "
                       f"at least 1, got {k}")
    layers = family.get("compare", {}).get("layers", "all")
    if layers != "all":
        top = min(model_layers(config, m) for m in [*family["models"], family["native"]])
        bad = [layer for layer in layers if not 0 <= layer <= top]
        if bad:
            raise XltError(f"adapt.compare.layers {bad} are outside 0..{top} (hidden-state indices; 0 = embeddings, "
                           f"{top} = the last layer both compared models have)")


def adapt_scheme_label(scheme) -> str:
    """Run-id part of a scheme: layers9-12, gradual-start4-step4-every1epochs."""
    from .layer_schemes import RangeScheme

    return f"layers{scheme.name}" if isinstance(scheme, RangeScheme) else scheme.name


def adapt_runs(config: dict) -> list[dict]:
    """One row per adaptation job: model x layer scheme x seed."""
    family = _adapt_enabled(config)
    if family is None:
        return []
    rows = []
    for model in family["models"]:
        for spec, scheme in zip(family["schemes"], adapt_schemes(config, model)):
            for seed in family.get("seeds", [1]):
                rows.append({
                    "run_id": f"{model}-{adapt_scheme_label(scheme)}-seed{seed}",
                    "model": model, "scheme": scheme.name, "seed": seed, "scheme_spec": spec,
                })
    return rows


def adapt_references(config: dict) -> list[dict]:
    """The untouched models whose perplexities are the reference lines: the native model and
    every model that is adapted (its step-0 state)."""
    family = _adapt_enabled(config)
    if family is None:
        return []
    rows = [{"model": family["native"], "role": "native"}]
    rows += [{"model": m, "role": "transfer"} for m in family["models"] if m != family["native"]]
    return rows


def adapt_eval_sets(config: dict) -> dict[str, dict]:
    """"<lang>/<split>" -> how the fixed evaluation file is drawn (xlt sample-texts): the
    held-out target set, the test set, the multilingual set size-matched to the target set,
    and the comparison sentences (from the target's held-out split)."""
    family = _adapt_enabled(config)
    if family is None:
        return {}
    target, multi = family["target"], family["multilingual"]
    lang, eval_split = target["lang"], target.get("eval_split", "dev")
    cap = family.get("eval_sentences", 10000)
    target_key = f"{lang}/{eval_split}"
    return {
        target_key: {"sources": [(target["dataset"], lang, eval_split)], "fields": ["text"], "max_size": cap},
        f"{lang}/{target.get('test_split', 'test')}": {
            "sources": [(target["dataset"], lang, target.get("test_split", "test"))], "fields": ["text"], "max_size": cap},
        f"{ADAPT_MULTILINGUAL}/{multi.get('split', 'dev')}": {
            "sources": [(multi["dataset"], x, multi.get("split", "dev")) for x in multi["langs"]],
            "fields": multi.get("fields", ["text"]), "size_of": target_key},
        f"{lang}/{ADAPT_COMPARE}": {"sources": [(target["dataset"], lang, eval_split)], "fields": ["text"],
                                    "max_size": family.get("compare", {}).get("sentences", 256)},
    }


SWEEPS["adapt"] = adapt_runs
