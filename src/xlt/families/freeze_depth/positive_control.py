"""freeze_depth's positive control: with nothing frozen the model learns its training
language, transfers to the high-overlap language above chance and in the order of overlap; a
shallower freeze beats freezing every layer. The job counts the gold labels of the evaluation
sets (`resolve`): chance accuracy is one over their number."""

from __future__ import annotations

from typing import Mapping

import pandas as pd

from xlt.core import settings
from xlt.core.errors import XltError
from xlt.core.io import read_jsonl
from xlt.core.plan import data_file, data_info
from xlt.families.freeze_depth.plan import model_depths
from xlt.report.positive_control.rows import missing, need_columns, num, row
from xlt.report.positive_control.world import describe as language
from xlt.report.positive_control.world import high_overlap, overlap_ranking

CHECK_NAMES = (
    "source-language accuracy, nothing frozen",
    "high-overlap language above chance, nothing frozen",
    "accuracy ordered by overlap, nothing frozen",
    "a shallower freeze depth beats the deepest",
)


def spec(config: dict) -> dict:
    """What the checks need from the config: the source language, each model's layer count (its
    deepest freeze), the label files; `not_run`: checks the sweep cannot answer."""
    family = config["freeze_depth"]
    evaluation = family["eval"]
    world = settings.demo_world(config)
    source, high, langs = family["train"]["lang"], high_overlap(world), list(world)
    names, not_run = CHECK_NAMES, {}
    if high not in evaluation["langs"]:
        not_run[names[1]] = not_run[names[3]] = f"the high-overlap language {high} is not in freeze_depth.eval.langs"
    absent = [lang for lang in langs if lang not in evaluation["langs"]]
    if absent:
        not_run[names[2]] = f"{', '.join(absent)} not in freeze_depth.eval.langs"
    if source not in evaluation["langs"]:
        not_run[names[0]] = f"the training language {source} is not in freeze_depth.eval.langs"
    for model in family["models"]:
        n = settings.model_layers(config, model)
        depths = model_depths(config, model)
        if -1 not in depths:
            for name in names[:3]:
                not_run[name] = "depth -1 (nothing frozen) is not in freeze_depth.depths"
        if n not in depths:
            not_run[names[3]] = f"depth {n} (every layer of {model} frozen) is not in freeze_depth.depths"
    return {
        "source_lang": source,
        # keyed as the table names a model: by its config name (the path is in the manifests)
        "models": {m: {"name": m, "layers": settings.model_layers(config, m)} for m in family["models"]},
        "label_files": [data_file(evaluation["dataset"], lang, evaluation["split"]) for lang in evaluation["langs"]],
        "not_run": not_run,
    }


def checks(table: pd.DataFrame, spec: dict, world: Mapping, thresholds: dict) -> list[dict]:
    """Zero-shot accuracy (mean over seeds and other runs at a depth) per model.

    spec: source_lang, labels (the number of gold labels of the evaluation data: chance is 1 /
    labels), models (model as the table names it -> {name, layers}; depth `layers` is the
    deepest, every layer frozen)."""
    family = "freeze_depth"
    names = CHECK_NAMES
    need_columns(table, family, ["model", "freeze_depth", "lang", "metric", "value"])
    acc = table[table.metric == "accuracy"]
    source, chance = spec["source_lang"], 1.0 / spec["labels"]
    ranking = overlap_ranking(world)
    high = ranking[0]
    rows = []
    for model, info in spec["models"].items():
        who = f" ({info['name']})" if len(spec["models"]) > 1 else ""
        runs = acc[acc.model == model]
        by_depth_lang = runs.groupby(["freeze_depth", "lang"])["value"].mean()
        unfrozen = {lang: v for (depth, lang), v in by_depth_lang.items() if depth == -1}  # per language, depth -1

        expected = f">= {num(thresholds['source_accuracy'])}"
        value = unfrozen.get(source)
        rows.append(
            missing(family, names[0], f"{source}{who}", expected, f"{source} at depth -1")
            if value is None
            else row(family, names[0], f"{source}{who}", expected, num(value), value >= thresholds["source_accuracy"])
        )

        bar = chance + thresholds["above_chance"]
        expected = f">= chance 1/{spec['labels']} + {thresholds['above_chance']:g} = {num(bar)}"
        value = unfrozen.get(high)
        subject = f"{language(world, high)}{who}"
        rows.append(
            missing(family, names[1], subject, expected, f"{high} at depth -1")
            if value is None
            else row(family, names[1], subject, expected, num(value), value >= bar)
        )

        tolerance = thresholds["order_tolerance"]
        expected = " >= ".join(language(world, lang) for lang in ranking)
        expected += f" (each at least the next lower overlap's - {tolerance:g})" if tolerance else ""
        values = {lang: unfrozen.get(lang) for lang in ranking}
        absent = [lang for lang, v in values.items() if v is None]
        subject = f"{', '.join(ranking)}{who}"
        if absent:
            rows.append(missing(family, names[2], subject, expected, f"{', '.join(absent)} at depth -1"))
        else:
            ordered = all(
                values[a] >= values[b] - tolerance
                for a in ranking
                for b in ranking
                if float(world[a]["overlap"]) > float(world[b]["overlap"])
            )
            observed = ", ".join(f"{lang} {num(values[lang])}" for lang in ranking)
            rows.append(row(family, names[2], subject, expected, observed, ordered))

        deepest, gain = info["layers"], thresholds["depth_gain"]
        expected = f"best other depth >= depth {deepest} + {gain:g}"
        subject = f"{language(world, high)}{who}"
        on_high = {depth: v for (depth, lang), v in by_depth_lang.items() if lang == high}
        others = {depth: v for depth, v in on_high.items() if depth != deepest}
        if deepest not in on_high or not others:
            rows.append(
                missing(family, names[3], subject, expected, f"{high} at depth {deepest} and at a shallower depth")
            )
        else:
            best = max(others, key=others.get)
            observed = f"depth {best}: {num(others[best])}, depth {deepest}: {num(on_high[deepest])}"
            rows.append(row(family, names[3], subject, expected, observed, others[best] >= on_high[deepest] + gain))
    return rows


def datasets(config: dict) -> list[str]:
    """The prepared data the job reads: the evaluation dataset's info.json (its label files)."""
    return [data_info(config["freeze_depth"]["eval"]["dataset"])]


def resolve(entry: dict) -> dict:
    """The spec entry with its `label_files` counted: `labels`, the distinct gold labels."""
    if "label_files" not in entry:
        return entry
    entry = dict(entry)
    labels = {item["label"] for path in entry.pop("label_files") for item in read_jsonl(path)}
    if len(labels) < 2:
        raise XltError(
            f"the freeze_depth evaluation sets have {len(labels)} distinct label(s); "
            "chance accuracy needs the label count of a classification task"
        )
    return {**entry, "labels": len(labels)}
