"""The positive-control job: which tables it reads and what the checks need from the config.

One job (`positive_control`, `xlt positive-control`) reads the tidy table of every enabled
family and writes results/tables/positive_control.csv. Its `--spec` carries, from the
validated config, the demo world, the thresholds (`positive_control`) and per enabled family
what the checks need: the source language, which runs pair with which untrained baselines,
and the data files whose size sets the chance level (the label count of the evaluation
sets, the number of candidate sentences in a test bitext), counted by the job itself.
A check that the sweep cannot answer (e.g. no depth -1 in freeze_depth) is passed as
`not_run` with the reason, and reported as not run; rows the sweep promises but a table lacks
fail. Nothing here imports torch.
"""
from __future__ import annotations

import json

from xlt.core import settings
from xlt.core.errors import XltError
from xlt.core.plan import RESULTS, Job, data_file, data_info
from xlt.report.positive_control.world import high_overlap as highest, overlap_ranking

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


def _all_layers_scheme(config: dict, model: str) -> str | None:
    """The adapt scheme of `model` that trains every layer (range 0-L), if the sweep has one."""
    from xlt.families.adapt import plan as adapt
    from xlt.families.adapt.schemes import RangeScheme

    n = settings.model_layers(config, model)
    return next((s.name for s in adapt.schemes(config, model) if s == RangeScheme(0, n)), None)


def check(config: dict) -> None:
    """The checks compare the demo world's languages: it must have some. (A sweep that cannot
    answer a check is no error: that check is reported as not run, with the reason.)"""
    if not world(config):
        raise XltError(f"{SECTION}: demo_world.languages is empty; the checks compare the synthetic languages")
    from xlt.report.positive_control.checks import CHECK_NAMES, check_key

    known = {check_key(family, name) for family, names in CHECK_NAMES.items() for name in names}
    for key in config[SECTION]["known_failures"]:
        if key not in known:
            raise XltError(f"{SECTION}.known_failures: {key!r} names no check; use \"family: check\" as the "
                           f"table writes it, one of: {'; '.join(sorted(known))}")


def _names(family: str) -> tuple[str, ...]:
    from xlt.report.positive_control.checks import CHECK_NAMES  # pandas: imported when a job is planned only

    return CHECK_NAMES[family]


def _freeze_depth_spec(config: dict) -> dict:
    family = config["freeze_depth"]
    evaluation = family["eval"]
    source, high, langs = family["train"]["lang"], high_overlap(config), list(world(config))
    names, not_run = _names("freeze_depth"), {}
    if high not in evaluation["langs"]:
        not_run[names[1]] = not_run[names[3]] = f"the high-overlap language {high} is not in freeze_depth.eval.langs"
    absent = [lang for lang in langs if lang not in evaluation["langs"]]
    if absent:
        not_run[names[2]] = f"{', '.join(absent)} not in freeze_depth.eval.langs"
    if source not in evaluation["langs"]:
        not_run[names[0]] = f"the training language {source} is not in freeze_depth.eval.langs"
    for model in family["models"]:
        n = settings.model_layers(config, model)
        depths = settings.freeze_depths(config, family["depths"], model, "freeze_depth.depths")
        if -1 not in depths:
            for name in names[:3]:
                not_run[name] = "depth -1 (nothing frozen) is not in freeze_depth.depths"
        if n not in depths:
            not_run[names[3]] = f"depth {n} (every layer of {model} frozen) is not in freeze_depth.depths"
    return {"source_lang": source,
            # keyed as the table names a model: by its config name (the path is in the manifests)
            "models": {m: {"name": m, "layers": settings.model_layers(config, m)} for m in family["models"]},
            "label_files": [data_file(evaluation["dataset"], lang, evaluation["split"]) for lang in evaluation["langs"]],
            "not_run": not_run}


def _alignment_spec(config: dict) -> dict:
    from xlt.families.alignment import plan as alignment

    family = config["alignment"]
    data = family["data"]
    metric = "bitext_retrieval_acc" + ("_centered" if family["center"] else "")  # xlt.evaluate.alignment's names
    names, not_run, high = _names("alignment"), {}, high_overlap(config)
    runs = [row["run_id"] for row in alignment.runs(config) if row["source"] == "pretrained"]
    if family["layers"] != "all" and 0 not in family["layers"]:
        not_run[names[1]] = "layer 0 (the embeddings) is not in alignment.layers"
    if high not in data["langs"]:
        not_run = dict.fromkeys(names, f"the high-overlap language {high} is not in alignment.data.langs")
    if not runs:
        not_run = dict.fromkeys(names, "alignment.models is empty: no pretrained model is analysed")
    return {"runs": runs, "metric": metric,
            "bitext_files": {lang: data_file(data["dataset"], lang, data["split"]) for lang in data["langs"]
                             if lang in world(config)},
            "not_run": not_run}


def _dual_spec(config: dict) -> dict:
    from xlt.families.dual import plan as dual

    name = _names("dual")[0]
    langs = [lang for lang in config["dual"]["tatoeba"]["langs"] if lang in world(config)]
    baseline = {(row["model"], row["pooling"]): row["run_id"] for row in dual.baselines(config)}
    not_run = {}
    if not langs:
        not_run[name] = "no demo_world language in dual.tatoeba.langs"
    if not baseline:
        not_run[name] = "dual.baselines is false: no untrained encoder to compare with"
    # the additive-margin runs; a distilled student is held to its teacher by the distillation check
    additive = [row for row in dual.runs(config) if row["objective"] == dual.ADDITIVE]
    return {"pairs": {row["run_id"]: baseline[(row["model"], row["pooling"])] for row in additive if baseline},
            "langs": langs, "not_run": not_run, **_dual_distill_spec(config, langs, not_run)}


def _dual_distill_spec(config: dict, langs: list[str], not_run: dict) -> dict:
    """The distillation check's part of the dual spec: each distilled run with the teacher's
    evaluation row, on the lowest-overlap demo language (or the reason it is not run)."""
    from xlt.families.dual import distill_plan, plan as dual

    name = _names("dual")[1]
    teacher = distill_plan.teacher_row(config, dual.FAMILY)
    distilled = [row["run_id"] for row in dual.runs(config) if row["objective"] == distill_plan.DISTILL]
    if not distilled:
        not_run[name] = "no distilled runs: mse_distill is not in dual.objectives"
    elif teacher is None:
        not_run[name] = "dual.distill.evaluate_teacher is false: no zero-shot teacher to compare with"
    elif not langs:
        not_run[name] = "no demo_world language in dual.tatoeba.langs"
    if name in not_run:
        return {}
    lowest = [lang for lang in overlap_ranking(world(config)) if lang in langs][-1]
    return {"distill": {run: teacher["run_id"] for run in distilled}, "distill_lang": lowest}


def _monox_spec(config: dict) -> dict:
    family = config["monox"]
    source = family["source_lang"]
    missing = [spec["dataset"] for spec in family["tasks"] if source not in spec["eval"]["langs"]]
    not_run = {_names("monox")[0]: f"{source} is not among the test languages of {', '.join(missing)}"} if missing else {}
    return {"source_lang": source, "modes": list(family["modes"]), "not_run": not_run}


def _sbert_spec(config: dict) -> dict:
    from xlt.families.sbert import plan as sbert

    family = config["sbert"]
    (name,) = _names("sbert")
    rows = sbert.runs(config)
    untrained = {(r["model"], r["pooling"], r["layer"]): r["run_id"] for r in rows if not r["trained"]}
    lang, sts = family["train"]["lang"], family["eval"].get("sts")
    not_run = {}
    if sts is None or lang not in sts["langs"]:
        not_run[name] = f"no {lang} STS set in sbert.eval.sts"
    if not untrained:
        not_run[name] = "sbert.baselines is false: no untrained model to compare with"
    return {"pairs": {r["run_id"]: untrained[(r["model"], r["pooling"], r["layer"])] for r in rows
                      if r["trained"] and untrained},
            "lang": lang, "dataset": sts["dataset"] if sts else None, "split": sts["split"] if sts else None,
            "not_run": not_run}


def _adapt_spec(config: dict) -> dict:
    from xlt.families.adapt import plan as adapt

    family = config["adapt"]
    all_layers = {m: _all_layers_scheme(config, m) for m in family["models"]}
    lacking = [m for m, scheme in all_layers.items() if scheme is None]
    not_run = {_names("adapt")[1]: f"no scheme in adapt.schemes trains every layer of {', '.join(lacking)} "
                                   f"(e.g. \"0-{settings.model_layers(config, lacking[0])}\")"} if lacking else {}
    return {"target": family["target"]["lang"], "target_split": family["target"]["test_split"],
            "multilingual": adapt.MULTILINGUAL, "multilingual_split": family["multilingual"]["split"],
            "references": {m: f"{adapt.REFERENCE_PREFIX}{m}" for m in family["models"]},
            "all_layers": all_layers, "not_run": not_run}


FAMILY_SPECS = {"freeze_depth": _freeze_depth_spec, "alignment": _alignment_spec, "dual": _dual_spec,
                "monox": _monox_spec, "sbert": _sbert_spec, "adapt": _adapt_spec}


def spec(config: dict) -> dict:
    """What `xlt positive-control --spec` gets: world, thresholds and one entry per enabled
    family (a family without an entry is reported as not run). Data files appear by path
    (`label_files`, `bitext_files`); the job counts them."""
    thresholds = {k: v for k, v in config[SECTION].items() if k not in ("enabled", "known_failures")}
    out = {"world": world(config), "thresholds": thresholds, "known_failures": config[SECTION]["known_failures"]}
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
