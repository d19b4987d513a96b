"""dual's positive control: additive-margin training lowers the Tatoeba retrieval error below the
untrained encoder's; a distilled student's error falls below its zero-shot teacher's without overlap."""

from __future__ import annotations

from typing import Mapping

import pandas as pd

from xlt.core import settings
from xlt.families.dual import distill_plan
from xlt.families.dual import plan as dual
from xlt.report.positive_control.rows import missing, need_columns, num, row
from xlt.report.positive_control.world import describe as language
from xlt.report.positive_control.world import overlap_ranking

CHECK_NAMES = ("training lowers the retrieval error", "distillation beats the zero-shot teacher without overlap")


def spec(config: dict) -> dict:
    """What the checks need from the config: each trained run's untrained baseline, the demo
    languages with bitext; `not_run`: checks the sweep cannot answer."""
    name = CHECK_NAMES[0]
    langs = [lang for lang in config["dual"]["tatoeba"]["langs"] if lang in settings.demo_world(config)]
    baseline = {(row["model"], row["pooling"]): row["run_id"] for row in dual.baselines(config)}
    not_run = {}
    if not langs:
        not_run[name] = "no demo_world language in dual.tatoeba.langs"
    if not baseline:
        not_run[name] = "dual.baselines is false: no untrained encoder to compare with"
    # the additive-margin runs; a distilled student is held to its teacher by the distillation check
    additive = [row for row in dual.runs(config) if row["objective"] == dual.ADDITIVE]
    return {
        "pairs": {row["run_id"]: baseline[(row["model"], row["pooling"])] for row in additive if baseline},
        "langs": langs,
        "not_run": not_run,
        **_distill_spec(config, langs, not_run),
    }


def _distill_spec(config: dict, langs: list[str], not_run: dict) -> dict:
    """The distillation check's part of the spec: each distilled run with the teacher's
    evaluation row, on the lowest-overlap demo language (or the reason it is not run)."""
    name = CHECK_NAMES[1]
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
    lowest = [lang for lang in overlap_ranking(settings.demo_world(config)) if lang in langs][-1]
    return {"distill": {run: teacher["run_id"] for run in distilled}, "distill_lang": lowest}


def checks(table: pd.DataFrame, spec: dict, world: Mapping, thresholds: dict) -> list[dict]:
    """Tatoeba error (mean_error: both directions averaged) of every additive-margin run against
    the untrained encoder with the same model and pooling, per demo language; and of every
    distilled student against its teacher scored zero-shot by the same evaluation, on the language
    that shares no words with English (the teacher learnt English only, the student was shown the
    translations).

    spec: pairs (trained run id -> baseline run id), langs (the demo languages with bitext);
    distill (distilled run id -> the teacher's run id) and distill_lang (the lowest-overlap demo
    language with bitext), absent when that check is in not_run."""
    need_columns(table, "dual", ["run_id", "lang", "metric", "value"])
    error = table[table.metric == "mean_error"].groupby(["run_id", "lang"])["value"].mean()
    return _error_drops(
        error, world, CHECK_NAMES[0], "untrained", spec["pairs"], spec["langs"], thresholds["error_drop"]
    ) + _error_drops(
        error,
        world,
        CHECK_NAMES[1],
        "zero-shot teacher",
        spec.get("distill", {}),
        [spec.get("distill_lang")],
        thresholds["distill_gain"],
    )


def _error_drops(
    error: pd.Series, world: Mapping, name: str, reference: str, pairs: dict, langs: list, drop: float
) -> list[dict]:
    """One row per run and language: the run's error at most its reference run's minus `drop`."""
    rows = []
    for run, baseline in pairs.items():
        for lang in langs:
            subject = f"{language(world, lang)}, {run}"
            before, after = error.get((baseline, lang)), error.get((run, lang))
            if before is None or after is None:
                absent = [r for r, v in ((baseline, before), (run, after)) if v is None]
                rows.append(
                    missing(
                        "dual",
                        name,
                        subject,
                        f"<= {reference} error - {drop:g}",
                        f"{' and '.join(absent)} on {lang} (mean_error)",
                    )
                )
                continue
            expected = f"<= {reference} {num(before)} - {drop:g} = {num(before - drop)} (mean of both directions)"
            rows.append(row("dual", name, subject, expected, num(after), after <= before - drop))
    return rows
