"""The workflow config: one schema, defaults filled in at validation, checks a schema cannot do.

The schema ships in the package: `core/schema.yaml` holds the shared sections (models,
datasets, training, report) and each family's section is `families/<family>/schema.yaml`,
so a new sweep axis touches its family's folder only. `validate` fills every default into
the config it checks; code then reads settings and never writes a fallback of its own.
Each family's `plan.check` adds what a schema cannot say (an undeclared model, a freeze depth
beyond a model's layers) before any job runs. No torch here: `xlt config check` is quick.
"""

from __future__ import annotations

import copy
import functools
import json
from dataclasses import fields
from pathlib import Path

import yaml

from xlt.core import monitor, registry
from xlt.core.check_names import check_key, check_names
from xlt.core.config_numbers import check_numbers, message, strict_type_checker
from xlt.core.errors import XltError
from xlt.core.family import own_training
from xlt.core.io import read_text
from xlt.core.model_files import model_files_problem
from xlt.core.train_args import NOT_FILLED, TrainArgs

PACKAGE = Path(__file__).resolve().parents[1]
# sections that plan a job of their own over the families' results, like a family (enabled,
# check, jobs, targets): checked after every family
CHECKS = ("positive_control",)  # its plan: xlt.report.positive_control.plan (xlt.report.sections)
POSITIVE_CONTROL_SCHEMA = "positive_control.yaml"  # a family's thresholds, beside its positive_control.py


def __getattr__(name: str):
    # FAMILIES: the registered families in check order (xlt.core.registry), read when asked
    # for, so a family folder on XLT_FAMILY_PATH counts wherever the families are looped over
    if name == "FAMILIES":
        return registry.names()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def schema() -> dict:
    """The whole config schema: the shared part with each family's section (its schema.yaml)
    and its positive-control thresholds (positive_control.yaml, where it has checks) plugged in."""
    return _schema(registry.names())


@functools.cache
def _schema(names: tuple[str, ...]) -> dict:
    with open(PACKAGE / "core" / "schema.yaml", encoding="utf-8") as f:
        whole = yaml.safe_load(f)
    thresholds = whole["properties"]["positive_control"]["properties"]
    for name in names:
        whole["properties"][name] = copy.deepcopy(registry.family(name).schema)  # read and checked once
        if (registry.folder(name) / POSITIVE_CONTROL_SCHEMA).is_file():
            with open(registry.folder(name) / POSITIVE_CONTROL_SCHEMA, encoding="utf-8") as f:
                thresholds[name] = yaml.safe_load(f)
    return whole


def _filling_validator():
    """A jsonschema validator that also sets every missing property that has a default."""
    import jsonschema  # deferred: jsonschema: only when validating

    base = jsonschema.validators.validator_for(schema())
    check_properties = base.VALIDATORS["properties"]

    def properties(validator, props, instance, subschema):
        if isinstance(instance, dict):
            for key, sub in props.items():
                sub = _with_local_ref(sub)
                if "default" in sub and key not in instance:
                    instance[key] = copy.deepcopy(sub["default"])
        yield from check_properties(validator, props, instance, subschema)

    return jsonschema.validators.extend(
        base, {"properties": properties}, type_checker=strict_type_checker(base.TYPE_CHECKER)
    )


def _with_local_ref(sub: dict) -> dict:
    """A property's schema with the default of the `#/$defs/...` schema it refers to, unless
    it sets its own (so `seeds: {$ref: "#/$defs/seeds"}` gets that definition's default)."""
    ref = sub.get("$ref", "")
    if "default" in sub or not ref.startswith("#/$defs/"):
        return sub
    target = schema()["$defs"][ref.removeprefix("#/$defs/")]
    return {**sub, "default": target["default"]} if "default" in target else sub


def validate(config: dict, source: str | Path | None = None) -> dict:
    """Check `config` against the schema, fill in its defaults (in place), then run every
    family's cross checks, and that no two runs share a run id. Returns the same dict. Errors
    name `source` (the config file), when given. See also `require_runs`."""
    try:
        validator = _filling_validator()(schema())
        errors = sorted(validator.iter_errors(config), key=lambda e: list(e.absolute_path))
        if _coerce_command_line_strings(config, errors):
            errors = sorted(validator.iter_errors(config), key=lambda e: list(e.absolute_path))
        check_numbers(config)  # before the schema's errors: a NaN passes every range keyword
        if errors:
            err = errors[0]
            raise XltError(message(err, ".".join(map(str, err.absolute_path)) or "(top level)"))
        _fill_training_defaults(config)
        if config["monitor"]["tensorboard"]:  # checked here, before any job runs
            monitor.require("monitor.tensorboard: true", "monitor.tensorboard: false")
        _check_local_models(config)
        _check_demo_languages(config)
        for name, spec in config["datasets"].items():
            check_sentences(name, spec)
        for name in registry.names():
            if family(config, name) is not None:
                plan_module(name).check(config)
        if family(config, "positive_control") is not None:
            check_positive_control(config)
        _check_run_ids(config)
    except XltError as err:
        raise XltError(f"{source}: {err}" if source is not None else str(err)) from None
    return config


_SCALARS = {"boolean": lambda s: {"true": True, "false": False}[s.lower()], "integer": int, "number": float}


def _coerce_command_line_strings(config: dict, errors: list) -> bool:
    """Snakemake's `--config key={nested: value}` reads nested values as strings only; turn
    a string where the schema wants a boolean or a number into one, when it spells one (so
    `--config "positive_control={enabled: true}"` works). True when anything changed."""
    changed = False
    for err in errors:
        kinds = err.validator_value if isinstance(err.validator_value, list) else [err.validator_value]
        if err.validator != "type" or not isinstance(err.instance, str) or not err.absolute_path:
            continue
        for kind in kinds:
            try:
                value = _SCALARS[kind](err.instance)
            except (KeyError, ValueError):
                continue
            parent = config
            for key in list(err.absolute_path)[:-1]:
                parent = parent[key]
            parent[err.absolute_path[-1]] = value
            changed = True
            break
    return changed


def _check_demo_languages(config: dict) -> None:
    """Every language a demo dataset or model uses is English, `mixed` (models) or a language of demo_world."""
    known = {"en", *demo_world(config)}
    for kind, allowed in (("datasets", known), ("models", known | {"mixed"})):
        for name, spec in config[kind].items():
            if spec["source"] != "demo":
                continue
            unknown = sorted(set(spec.get("languages", [])) - allowed)
            if unknown:
                raise XltError(
                    f"{kind}.{name}.languages: {unknown} not in demo_world.languages "
                    f"({', '.join(sorted(allowed))}); declare them there or drop them"
                )


def _check_local_models(config: dict) -> None:
    """A local model directory that exists must be complete (a missing one is the workflow's
    missing input); transformers would build an empty tokenizer from one without tokenizer files."""
    for name, spec in config["models"].items():
        if spec["source"] == "local" and Path(spec["path"]).is_dir():
            problem = model_files_problem(spec["path"])
            if problem:
                raise XltError(f"models.{name}: {problem}")


def require_runs(config: dict, source: str | Path | None = None) -> None:
    """A validated config whose sweep plans nothing is an error for a workflow or a job (a
    family's own tests validate configs with that family off; `validate` lets them be)."""
    families = registry.names()
    enabled = [name for name in families if family(config, name) is not None]
    problem = None
    if not enabled:
        problem = (
            f"the sweep is empty: no experiment family is enabled; add a section for one of "
            f"{', '.join(families)} (see config/local-example.yaml), or set its enabled: true"
        )
    for name in enabled:
        if not plan_module(name).runs(config):
            problem = (
                f"{name}: the family is enabled but its sweep has no runs; give it models and sweep "
                f"values, or set {name}.enabled: false"
            )
            break
    if problem:
        raise XltError(f"{source}: {problem}" if source is not None else problem)


def _check_run_ids(config: dict) -> None:
    """No two runs of a family share a run id (they would share their outputs)."""
    for name in registry.names():
        if family(config, name) is None:
            continue
        seen: set[str] = set()
        twice = [i for i in (row["run_id"] for row in plan_module(name).runs(config)) if i in seen or seen.add(i)]
        if twice:
            repeated = _repeated_values(config[name], name)
            why = f": {repeated[0]}; remove the duplicate" if repeated else "; make the sweep values distinct"
            raise XltError(
                f"{name}: two runs share run id {twice[0]!r} (they would overwrite each other's outputs){why}"
            )


def _repeated_values(value, where: str) -> list[str]:
    """`<key> lists <value> twice` for every list in `value` that repeats a value."""
    if isinstance(value, dict):
        return [found for key, sub in value.items() for found in _repeated_values(sub, f"{where}.{key}")]
    if isinstance(value, list):
        scalars = [v for v in value if not isinstance(v, (dict, list))]
        repeated = [f"{where} lists {v!r} twice" for i, v in enumerate(scalars) if v in scalars[:i]]
        nested = [
            found
            for i, sub in enumerate(value)
            if isinstance(sub, (dict, list))
            for found in _repeated_values(sub, f"{where}[{i}]")
        ]
        return repeated + nested
    return []


def _fill_training_defaults(config: dict) -> None:
    """The shared `training` section gets TrainArgs' defaults (the one place they live) for
    every key the schema knows; a family's own `training` stays an override."""
    known = schema()["$defs"]["training"]["properties"]
    defaults = {f.name: f.default for f in fields(TrainArgs) if f.name in known and f.name not in NOT_FILLED}
    config["training"] = {**defaults, **config.get("training", {})}


def load(path: str | Path) -> dict:
    """Read a YAML config file and validate it (defaults filled in); its sweep must plan runs."""
    path = Path(path)
    if not path.is_file():
        raise XltError(f"config file {path} not found")
    try:
        config = yaml.safe_load(read_text(path))
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        where = f" line {mark.line + 1}" if mark is not None else ""
        raise XltError(
            f"{path}{where} is not valid YAML ({getattr(err, 'problem', None) or err}); fix the syntax there"
        ) from None
    if not isinstance(config, dict):
        raise XltError(f"{path}: a config is a YAML mapping (models:, datasets:, one section per family)")
    validate(config, path)
    require_runs(config, path)
    return config


def plan_module(name: str):
    """The plan of a family (a FamilyPlan, xlt.core.family_plan); a section of CHECKS has its
    plan above the families' tables (xlt.report.sections.plan_module names both)."""
    if name in CHECKS:
        raise XltError(f"{name} is a check section, planned in the report layer: use xlt.report.sections.plan_module")
    return registry.plan(name)


def check_positive_control(config: dict) -> None:
    """The checks compare the demo world's languages: it must have some; and every
    `known_failures` entry names a check. (A sweep that cannot answer a check is no error: that
    check is reported as not run, with the reason.)"""
    if not demo_world(config):
        raise XltError("positive_control: demo_world.languages is empty; the checks compare the synthetic languages")
    known = {check_key(family, name) for family, names in check_names().items() for name in names}
    for key in config["positive_control"]["known_failures"]:
        if key not in known:
            raise XltError(
                f'positive_control.known_failures: {key!r} names no check; use "family: check" as the '
                f"table writes it, one of: {'; '.join(sorted(known))}"
            )


def family(config: dict, name: str) -> dict | None:
    """A family's (or a CHECKS section's) validated section, or None when it is absent or
    `enabled: false`."""
    section = config.get(name)
    return section if section and section["enabled"] else None


def training(config: dict, family_name: str) -> dict:
    """The shared `training` settings with the family's own `training` overrides on top."""
    return {**config["training"], **own_training(config, family_name)}


def eval_max_length(config: dict) -> int:
    """The one length every sentence-embedding evaluation scores at (`evaluation.max_length`)."""
    return config["evaluation"]["max_length"]


def demo_world(config: dict) -> dict:
    """Synthetic language -> {overlap, order, adjectives}: the world of every demo dataset and model."""
    return config["demo_world"]["languages"]


def resources(config: dict, family_name: str) -> dict:
    """What one of the family's model-loading jobs needs ({cpus, gpus, mem_mb, runtime_min})."""
    return config[family_name]["resources"]


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
    raise XltError(
        f"models.{name}: set `layers` (e.g. 12 for bert-base-multilingual-cased) so the sweep "
        f"can be planned without downloading the model"
    )


def freeze_depths(config: dict, wanted: str | list[int], model: str, where: str, head: bool = True) -> list[int]:
    """Freeze depths for `model` (`all` = -1 .. its deepest), each checked against it. A model with no
    task `head` of its own to train (a dual encoder) must keep its top layer trainable: its deepest
    depth is one below its layer count."""
    n = model_layers(config, model)
    deepest, problem = (n, "is out of range for") if head else (n - 1, "leaves nothing to train in")
    values = list(range(-1, deepest + 1)) if wanted == "all" else list(wanted)
    for d in values:
        if not -1 <= d <= deepest:
            raise XltError(
                f"freeze depth {d} in {where} {problem} model {model!r} with "
                f"{n} layers; allowed: -1 (nothing frozen), 0 (embeddings) .. {deepest}"
            )
    return values


def require(config: dict, kind: str, name: str, where: str) -> None:
    """`name` must be declared under `kind` (models or datasets)."""
    if name not in config.get(kind, {}):
        declared = ", ".join(sorted(config.get(kind, {}))) or "none"
        raise XltError(f"{where}: unknown {kind[:-1]} {name!r}; declared {kind}: {declared}")


def split_languages(spec: dict) -> dict[str, list[str]]:
    """split -> languages. `splits` is a list (every split in every language) or a
    mapping split -> list of languages (e.g. train only in English)."""
    splits = spec.get("splits", ["train", "dev", "test"])
    languages = list(spec.get("languages", ["en"]))
    if isinstance(splits, dict):
        return {s: list(langs) if langs != "all" else languages for s, langs in splits.items()}
    return {s: languages for s in splits}


def check_sentences(name: str, spec: dict) -> None:
    """A dataset drawn as sentences (datasets.<name>.sentences) is a corpus with one size per split."""
    if "sentences" not in spec:
        return
    splits = sorted(split_languages(spec))
    if spec["task"] != "corpus" or sorted(spec["sentences"]["sizes"]) != splits:
        raise XltError(
            f"datasets.{name}.sentences: needs task corpus and one size per split {splits}; it has task "
            f"{spec['task']} and sizes for {sorted(spec['sentences']['sizes'])}: fix datasets.{name}"
        )


def dataset_languages(config: dict, dataset: str, split: str) -> list[str]:
    return split_languages(config["datasets"][dataset]).get(split, [])


def require_split(config: dict, dataset: str, split: str, langs: list[str], where: str) -> None:
    available = dataset_languages(config, dataset, split)
    missing = [lang for lang in langs if lang not in available]
    if missing:
        raise XltError(
            f"{where}: dataset {dataset!r} has no {split} split for {missing}; "
            f"it declares {split} for {available} (datasets.{dataset}.splits)"
        )


def require_task(config: dict, dataset: str, tasks: tuple[str, ...], where: str) -> None:
    """`dataset` must be declared and of one of `tasks` (e.g. a bitext set for retrieval)."""
    require(config, "datasets", dataset, where)
    task = config["datasets"][dataset]["task"]
    if task not in tasks:
        raise XltError(f"{where}: dataset {dataset!r} is a {task} dataset; this needs a {' or '.join(tasks)} dataset")


def depth_label(depth: int) -> str:
    return "none" if depth == -1 else f"{depth:02d}"


def number_label(value: float) -> str:
    return f"{value:g}"
