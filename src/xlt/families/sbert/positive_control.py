"""sbert's positive control: training raises source-language STS above the untrained model's."""

from __future__ import annotations

from typing import Mapping

import pandas as pd

from xlt.families.sbert import plan as sbert
from xlt.report.positive_control.rows import missing, need_columns, num, row

CHECK_NAMES = ("training raises source-language STS",)


def spec(config: dict) -> dict:
    """What the checks need from the config: each trained run's untrained baseline and the
    source-language STS set; `not_run`: checks the sweep cannot answer."""
    family = config["sbert"]
    (name,) = CHECK_NAMES
    rows = sbert.runs(config)
    untrained = {(r["model"], r["pooling"], r["layer"]): r["run_id"] for r in rows if not r["trained"]}
    lang, sts = family["train"]["lang"], family["eval"].get("sts")
    not_run = {}
    if sts is None or lang not in sts["langs"]:
        not_run[name] = f"no {lang} STS set in sbert.eval.sts"
    if not untrained:
        not_run[name] = "sbert.baselines is false: no untrained model to compare with"
    return {
        "pairs": {
            r["run_id"]: untrained[(r["model"], r["pooling"], r["layer"])] for r in rows if r["trained"] and untrained
        },
        "lang": lang,
        "dataset": sts["dataset"] if sts else None,
        "split": sts["split"] if sts else None,
        "not_run": not_run,
    }


def checks(table: pd.DataFrame, spec: dict, world: Mapping, thresholds: dict) -> list[dict]:
    """Cosine Spearman on the source-language STS test set: each trained run against the
    untrained model with the same model, pooling and layer.

    spec: pairs (trained run id -> untrained run id), lang, dataset, split."""
    family = "sbert"
    name = CHECK_NAMES[0]
    need_columns(table, family, ["run_id", "lang", "similarity", "dataset", "split", "metric", "value"])
    sts = table[
        (table.metric == "spearman")
        & (table.similarity == "cosine")
        & (table.lang == spec["lang"])
        & (table.dataset == spec["dataset"])
        & (table.split == spec["split"])
    ]
    spearman = sts.groupby("run_id")["value"].mean()
    gain = thresholds["spearman_gain"]
    rows = []
    for run, baseline in spec["pairs"].items():
        before, after = spearman.get(baseline), spearman.get(run)
        what = f"{spec['dataset']} {spec['lang']} {spec['split']}, Spearman of cosine"
        if before is None or after is None:
            absent = [r for r, v in ((baseline, before), (run, after)) if v is None]
            rows.append(missing(family, name, run, f">= untrained + {gain:g}", f"{' and '.join(absent)} ({what})"))
            continue
        expected = f">= untrained {num(before)} + {gain:g} = {num(before + gain)} ({what})"
        rows.append(row(family, name, run, expected, num(after), after >= before + gain))
    return rows
