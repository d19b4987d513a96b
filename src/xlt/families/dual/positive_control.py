"""dual's positive control: training lowers the Tatoeba retrieval error below the untrained encoder's."""
from __future__ import annotations

from typing import Mapping

import pandas as pd

from xlt.core import settings
from xlt.report.positive_control.rows import missing, need_columns, num, row
from xlt.report.positive_control.world import describe as language

CHECK_NAMES = ("training lowers the retrieval error",)


def spec(config: dict) -> dict:
    """What the checks need from the config: each trained run's untrained baseline, the demo
    languages with bitext; `not_run`: checks the sweep cannot answer."""
    from xlt.families.dual import plan as dual

    (name,) = CHECK_NAMES
    langs = [lang for lang in config["dual"]["tatoeba"]["langs"] if lang in settings.demo_world(config)]
    baseline = {(row["model"], row["pooling"]): row["run_id"] for row in dual.baselines(config)}
    not_run = {}
    if not langs:
        not_run[name] = "no demo_world language in dual.tatoeba.langs"
    if not baseline:
        not_run[name] = "dual.baselines is false: no untrained encoder to compare with"
    return {"pairs": {row["run_id"]: baseline[(row["model"], row["pooling"])] for row in dual.runs(config) if baseline},
            "langs": langs, "not_run": not_run}


def checks(table: pd.DataFrame, spec: dict, world: Mapping, thresholds: dict) -> list[dict]:
    """Tatoeba error (mean_error: both directions averaged) of every trained run against the
    untrained encoder with the same model and pooling, per demo language.

    spec: pairs (trained run id -> baseline run id), langs (the demo languages with bitext)."""
    family = "dual"
    name = CHECK_NAMES[0]
    need_columns(table, family, ["run_id", "lang", "metric", "value"])
    error = table[table.metric == "mean_error"].groupby(["run_id", "lang"])["value"].mean()
    drop = thresholds["error_drop"]
    rows = []
    for run, baseline in spec["pairs"].items():
        for lang in spec["langs"]:
            subject = f"{language(world, lang)}, {run}"
            before, after = error.get((baseline, lang)), error.get((run, lang))
            if before is None or after is None:
                absent = [r for r, v in ((baseline, before), (run, after)) if v is None]
                rows.append(missing(family, name, subject, f"<= untrained error - {drop:g}",
                                    f"{' and '.join(absent)} on {lang} (mean_error)"))
                continue
            expected = f"<= untrained {num(before)} - {drop:g} = {num(before - drop)} (mean of both directions)"
            rows.append(row(family, name, subject, expected, num(after), after <= before - drop))
    return rows
