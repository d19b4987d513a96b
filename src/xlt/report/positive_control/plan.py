"""The positive-control job: which tables it reads and what the checks need from the config.

One job (`positive_control`, `xlt positive-control`) reads the tidy table of every enabled
family and writes results/tables/positive_control.csv. Its `--spec` carries, from the
validated config, the demo world, the thresholds (`positive_control`) and per enabled family
what the checks need: the source language, which runs pair with which untrained baselines,
and the data files whose size sets the chance level (the label count of the evaluation
sets, the number of candidate sentences in a test bitext), counted by the job itself.
`check` stops a config whose sweep cannot answer a check (e.g. no depth -1 in freeze_depth)
before any job runs. Nothing here imports torch.
"""
from __future__ import annotations

import json

from xlt.core import settings
from xlt.core.errors import XltError
from xlt.core.plan import RESULTS, Job, data_file, data_info, model_ref
from xlt.report.positive_control.world import high_overlap as highest

SECTION = "positive_control"
TABLE = f"{RESULTS}/tables/{SECTION}.csv"
CATEGORY = "Positive control"
RULE = "positive_control"


def world(config: dict) -> dict:
    return settings.demo_world(config)


def high_overlap(config: dict) -> str:
    return highest(world(config))


def enabled_families(config: dict) -> list[str]:
    return [name for name in settings.FAMILIES if settings.family(config, name) is not None]


def _fail(family: str, what: str) -> None:
    raise XltError(f"{SECTION}: the {family} checks need {what}; change the {family} section or set "
                   f"{SECTION}.enabled: false")


def _all_layers_scheme(config: dict, model: str) -> str | None:
    """The adapt scheme of `model` that trains every layer (range 0-L), if the sweep has one."""
    from xlt.families.adapt import plan as adapt
    from xlt.families.adapt.schemes import RangeScheme

    n = settings.model_layers(config, model)
    return next((s.name for s in adapt.schemes(config, model) if s == RangeScheme(0, n)), None)


def check(config: dict) -> None:
    """Every check of an enabled family must be answerable by its sweep."""
    langs = list(world(config))
    if not langs:
        raise XltError(f"{SECTION}: demo_world.languages is empty; the checks compare the synthetic languages")
    high = high_overlap(config)
    families = enabled_families(config)
    if "freeze_depth" in families:
        family = config["freeze_depth"]
        wanted = [family["train"]["lang"], *langs]
        missing = [lang for lang in wanted if lang not in family["eval"]["langs"]]
        if missing:
            _fail("freeze_depth", f"freeze_depth.eval.langs to include {missing} (the source language and every "
                                  "demo_world language)")
        for model in family["models"]:
            n = settings.model_layers(config, model)
            depths = settings.freeze_depths(config, family["depths"], model, "freeze_depth.depths")
            if -1 not in depths or n not in depths:
                _fail("freeze_depth", f"freeze_depth.depths to include -1 (nothing frozen) and {n} (every layer of "
                                      f"model {model!r} frozen)")
    if "alignment" in families:
        family = config["alignment"]
        if not family["models"]:
            _fail("alignment", "a pretrained model in alignment.models")
        if high not in family["data"]["langs"]:
            _fail("alignment", f"the high-overlap language {high!r} in alignment.data.langs")
        if family["layers"] != "all" and (0 not in family["layers"] or len(family["layers"]) < 2):
            _fail("alignment", "alignment.layers to include 0 (the embeddings) and another layer")
    if "dual" in families:
        if not config["dual"]["baselines"]:
            _fail("dual", "dual.baselines: true (the untrained encoder's error)")
        if not [lang for lang in config["dual"]["tatoeba"]["langs"] if lang in langs]:
            _fail("dual", f"a demo_world language ({', '.join(langs)}) in dual.tatoeba.langs")
    if "monox" in families:
        family = config["monox"]
        missing = [mode for mode in config[SECTION]["monox"]["modes"] if mode not in family["modes"]]
        if missing:
            _fail("monox", f"monox.modes to include {missing} ({SECTION}.monox.modes)")
        for i, task in enumerate(family["tasks"]):
            if family["source_lang"] not in task["eval"]["langs"]:
                _fail("monox", f"the source language {family['source_lang']!r} in monox.tasks[{i}].eval.langs")
    if "sbert" in families:
        family = config["sbert"]
        if not family["baselines"]:
            _fail("sbert", "sbert.baselines: true (the untrained model's STS)")
        if "sts" not in family["eval"] or family["train"]["lang"] not in family["eval"]["sts"]["langs"]:
            _fail("sbert", f"sbert.eval.sts with the training language {family['train']['lang']!r} in its langs")
    if "adapt" in families:
        for model in config["adapt"]["models"]:
            if _all_layers_scheme(config, model) is None:
                n = settings.model_layers(config, model)
                _fail("adapt", f"the scheme \"0-{n}\" (every layer of model {model!r} trained) in adapt.schemes")


def _freeze_depth_spec(config: dict) -> dict:
    family = config["freeze_depth"]
    evaluation = family["eval"]
    return {"source_lang": family["train"]["lang"],
            "models": {model_ref(config, m): {"name": m, "layers": settings.model_layers(config, m)}
                       for m in family["models"]},
            "label_files": [data_file(evaluation["dataset"], lang, evaluation["split"]) for lang in evaluation["langs"]]}


def _alignment_spec(config: dict) -> dict:
    from xlt.families.alignment import plan as alignment

    family = config["alignment"]
    data = family["data"]
    metric = "bitext_retrieval_acc" + ("_centered" if family["center"] else "")  # xlt.evaluate.alignment's names
    return {"runs": [row["run_id"] for row in alignment.runs(config) if row["source"] == "pretrained"],
            "metric": metric,
            "bitext_files": {lang: data_file(data["dataset"], lang, data["split"]) for lang in data["langs"]
                             if lang in world(config)}}


def _dual_spec(config: dict) -> dict:
    from xlt.families.dual import plan as dual

    baseline = {(row["model"], row["pooling"]): row["run_id"] for row in dual.baselines(config)}
    return {"pairs": {row["run_id"]: baseline[(row["model"], row["pooling"])] for row in dual.runs(config)},
            "langs": [lang for lang in config["dual"]["tatoeba"]["langs"] if lang in world(config)]}


def _monox_spec(config: dict) -> dict:
    return {"source_lang": config["monox"]["source_lang"]}


def _sbert_spec(config: dict) -> dict:
    from xlt.families.sbert import plan as sbert

    rows = sbert.runs(config)
    untrained = {(r["model"], r["pooling"], r["layer"]): r["run_id"] for r in rows if not r["trained"]}
    sts = config["sbert"]["eval"]["sts"]
    return {"pairs": {r["run_id"]: untrained[(r["model"], r["pooling"], r["layer"])] for r in rows if r["trained"]},
            "lang": config["sbert"]["train"]["lang"], "dataset": sts["dataset"], "split": sts["split"]}


def _adapt_spec(config: dict) -> dict:
    from xlt.families.adapt import plan as adapt

    family = config["adapt"]
    return {"target": family["target"]["lang"], "target_split": family["target"]["test_split"],
            "multilingual": adapt.MULTILINGUAL, "multilingual_split": family["multilingual"]["split"],
            "references": {m: f"{adapt.REFERENCE_PREFIX}{m}" for m in family["models"]},
            "all_layers": {m: _all_layers_scheme(config, m) for m in family["models"]}}


FAMILY_SPECS = {"freeze_depth": _freeze_depth_spec, "alignment": _alignment_spec, "dual": _dual_spec,
                "monox": _monox_spec, "sbert": _sbert_spec, "adapt": _adapt_spec}


def spec(config: dict) -> dict:
    """What `xlt positive-control --spec` gets: world, thresholds and one entry per enabled
    family (a family without an entry is reported as not run). Data files appear by path
    (`label_files`, `bitext_files`); the job counts them."""
    thresholds = {k: v for k, v in config[SECTION].items() if k != "enabled"}
    out = {"world": world(config), "thresholds": thresholds}
    for name in enabled_families(config):
        out[name] = FAMILY_SPECS[name](config)
    return out


def tables(config: dict) -> dict[str, str]:
    """family -> its tidy table, for every enabled family."""
    return {name: settings.plan_module(name).TABLE for name in enabled_families(config)}


def data_inputs(config: dict) -> list[str]:
    """The prepared datasets whose files the job counts (info.json: the prepare_data output)."""
    datasets = []
    families = enabled_families(config)
    if "freeze_depth" in families:
        datasets.append(config["freeze_depth"]["eval"]["dataset"])
    if "alignment" in families:
        datasets.append(config["alignment"]["data"]["dataset"])
    return [data_info(d) for d in dict.fromkeys(datasets)]


def jobs(config: dict) -> dict[str, dict[str, Job]]:
    """rule -> key -> Job: one `positive_control` job, keyed "" (its rule has no wildcards)."""
    if settings.family(config, SECTION) is None:
        return {RULE: {}}
    table_args = [arg for name, path in tables(config).items() for arg in ("--table", f"{name}={path}")]
    job = Job(SECTION, inputs={"tables": list(tables(config).values()), "data": data_inputs(config)},
              args=["--spec", json.dumps(spec(config)), *table_args, "--out", TABLE])
    return {RULE: {"": job}}


def targets(config: dict) -> list[str]:
    return [TABLE] if settings.family(config, SECTION) is not None else []
