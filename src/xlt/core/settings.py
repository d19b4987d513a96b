"""Load and check the workflow config, and turn its sweeps into one row per job.

The JSON schema (workflow/schemas/config.schema.yaml) checks shapes and allowed values;
`check` adds what a schema cannot: cross references (a family naming a model or dataset
that is not declared) and freeze depths against each model's number of layers. Both run
before any job, so a bad config fails with a message that names the key.
"""
from __future__ import annotations

import json
import math
from pathlib import Path

import yaml

from xlt.core.errors import XltError

SCHEMA_PATH = Path(__file__).resolve().parents[3] / "workflow" / "schemas" / "config.schema.yaml"


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
    from xlt.data.prepare import split_languages

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
    check_monox(config)
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


# ---------------------------------------------------------------- MonoX teacher -> student

MONOX_MODES = ("finetune", "self_train", "kd", "pl")
MONOX_TEACHER_MODES = ("kd", "pl")  # modes that read the teacher's logits
MONOX_DEFAULTS = {"modes": list(MONOX_MODES), "source_lang": "en", "seeds": [1], "size": "all",
                  "temperature": 0.1, "threshold": 0.0, "self_train_rounds": 1}


def monox_settings(config: dict) -> dict | None:
    """The `monox` section with its defaults filled in, or None when absent or disabled."""
    family = config.get("monox")
    if not family or not family.get("enabled", True):
        return None
    return {**MONOX_DEFAULTS, **family}


def monox_tasks(family: dict) -> dict[str, dict]:
    """dataset name -> its entry of `monox.tasks` (a list in the config)."""
    return {spec["dataset"]: spec for spec in family["tasks"]}


def monox_training(config: dict, task: str, role: str = "student") -> dict:
    """Shared `training` < `monox.training` < the task's `training` < (teacher jobs) the task's
    `teacher_training`."""
    spec = monox_tasks(config["monox"])[task]
    return {**training_settings(config, "monox"), **spec.get("training", {}),
            **(spec.get("teacher_training", {}) if role == "teacher" else {})}


def check_monox(config: dict) -> None:
    family = monox_settings(config)
    if family is None:
        return
    from xlt.data.records import NUM_LABELS

    for key in ("students", "tasks"):
        if not family.get(key):
            raise XltError(f"monox.{key} is required when the family is enabled (or set monox.enabled: false)")
    needs_teacher = [m for m in family["modes"] if m in MONOX_TEACHER_MODES]
    if needs_teacher and not family.get("teachers"):
        raise XltError(f"monox.modes has {needs_teacher}, which distil from a teacher, but monox.teachers is "
                       f"not set; declare a teacher model or drop those modes")
    for role in ("teachers", "students"):
        for model in family.get(role, []):
            _require(config, "models", model, f"monox.{role}")
    source = family["source_lang"]
    names = [spec["dataset"] for spec in family["tasks"]]
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise XltError(f"monox.tasks: dataset(s) {repeated} listed more than once; list each dataset once")
    for i, spec in enumerate(family["tasks"]):
        task = spec["dataset"]
        where = f"monox.tasks[{i}] ({task})"
        _require(config, "datasets", task, f"monox.tasks[{i}].dataset")
        kind = config["datasets"][task]["task"]
        if kind not in NUM_LABELS:
            raise XltError(f"{where}: dataset {task!r} is a {kind} dataset; MonoX needs a classification "
                           f"dataset (task {' or '.join(NUM_LABELS)})")
        if ("labelled_fraction" in spec) == ("unlabelled_split" in spec):
            raise XltError(f"{where}: set exactly one of labelled_fraction (split the train set into labelled "
                           f"and unlabelled, as for XNLI) or unlabelled_split (a separate unlabelled split, as for CLS)")
        if ("dev_split" in spec) == ("dev_fraction" in spec):
            raise XltError(f"{where}: set exactly one of dev_split (a dataset split, e.g. dev) or dev_fraction "
                           f"(hold out part of the labelled data, as for CLS)")
        _require_split(config, task, "train", [source], f"{where} (monox.source_lang)")
        for key in ("unlabelled_split", "dev_split"):
            if key in spec:
                _require_split(config, task, spec[key], [source], f"{where}.{key}")
        _require_split(config, task, spec["eval"].get("split", "test"), spec["eval"]["langs"], f"{where}.eval")
        _check_monox_sizes(config, family, task, spec)


def _check_monox_sizes(config: dict, family: dict, task: str, spec: dict) -> None:
    """Training sizes against the labelled split, where its size is known before any job runs
    (demo datasets declare their sizes); other datasets fail in the job with the same message."""
    dataset = config["datasets"][task]
    n_train = dataset.get("sizes", {}).get("train") if dataset["source"] == "demo" else None
    if n_train is None:
        return
    labelled = n_train
    if "labelled_fraction" in spec:
        labelled = math.floor(spec["labelled_fraction"] * n_train + 0.5)
    if "dev_fraction" in spec:
        labelled -= math.floor(spec["dev_fraction"] * labelled + 0.5)
    for size in monox_task_sizes(family, spec):
        if size != "all" and size > labelled:
            raise XltError(f"monox.tasks ({task}).sizes: training size {size} is larger than the {labelled} labelled "
                           f"examples of dataset {task!r} ({n_train} train examples after the configured "
                           f"split); use a size <= {labelled} or 'all'")


def monox_task_sizes(family: dict, spec: dict) -> list:
    """The headline size followed by the task's size sweep, without repeats."""
    return list(dict.fromkeys([family["size"], *spec.get("sizes", [])]))


def size_label(size: int | str) -> str:
    return f"n{size}"


def temperature_label(temperature: float) -> str:
    return f"T{temperature:g}"


def monox_runs(config: dict) -> list[dict]:
    """One row per training job: the teachers first (role teacher: one per teacher x task x
    training size x seed, and only where a kd/pl student needs it), then the students.

    Student jobs are the headline grid (every mode at the headline size, kd at the headline
    temperature), the size sweep (every mode at each of the task's `sizes`) and the temperature
    sweep (kd at each of the task's `temperatures`), without repeats. `headline` marks the rows
    of the headline grid (the per-language table); `teacher_run_id` names the teacher job whose
    logits a kd/pl student reads."""
    family = monox_settings(config)
    if family is None:
        return []
    teachers, students = {}, []
    for task, spec in monox_tasks(family).items():
        grid = {}  # (mode, size, temperature) -> headline?
        for size in monox_task_sizes(family, spec):
            for mode in family["modes"]:
                temperature = family["temperature"] if mode == "kd" else None
                headline = size == family["size"]
                grid[(mode, size, temperature)] = grid.get((mode, size, temperature), False) or headline
        if "kd" in family["modes"]:
            for temperature in spec.get("temperatures", []):
                grid.setdefault(("kd", family["size"], temperature), temperature == family["temperature"])
        for seed in family["seeds"]:
            for student in family["students"]:
                for (mode, size, temperature), headline in grid.items():
                    uses = family["teachers"] if mode in MONOX_TEACHER_MODES else [None]
                    for teacher in uses:
                        teacher_run = None
                        if teacher is not None:
                            teacher_run = f"{teacher}-{task}-{size_label(size)}-seed{seed}"
                            teachers.setdefault(teacher_run, {
                                "run_id": teacher_run, "role": "teacher", "task": task, "mode": "teacher",
                                "student": None, "teacher": teacher, "size": size, "temperature": None,
                                "seed": seed, "headline": size == family["size"], "teacher_run_id": None,
                            })
                        parts = [student, task, mode] + ([teacher] if teacher else []) + \
                                ([temperature_label(temperature)] if temperature is not None else []) + \
                                [size_label(size), f"seed{seed}"]
                        students.append({
                            "run_id": "-".join(parts), "role": "student", "task": task, "mode": mode,
                            "student": student, "teacher": teacher, "size": size, "temperature": temperature,
                            "seed": seed, "headline": headline, "teacher_run_id": teacher_run,
                        })
    return list(teachers.values()) + students


# family -> function expanding the config into one row per training job
SWEEPS = {"freeze_depth": freeze_depth_runs, "sbert": sbert_runs, "monox": monox_runs}


# ---------------------------------------------------------------- adapt: target-language MLM adaptation (seed 003)
ADAPT_MULTILINGUAL = "multilingual"  # `lang` of the pooled multilingual evaluation set
ADAPT_COMPARE = "compare"  # `split` name of the fixed sentences of the native-model comparison


def _adapt_enabled(config: dict) -> dict | None:
    family = config.get("adapt")
    return family if family and family.get("enabled", True) else None


def adapt_schemes(config: dict, model: str) -> list:
    """The family's layer schemes parsed for `model`; an error names the offending key."""
    from xlt.families.adapt.layer_schemes import parse_scheme

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
    from xlt.families.adapt.layer_schemes import RangeScheme

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
    from xlt.evaluate.mining import parse_pair

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
