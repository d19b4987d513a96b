"""monox's positive control: headline students learn the source language, and none gives one
class to nearly every example."""

from __future__ import annotations

from typing import Mapping

import pandas as pd

from xlt.report.positive_control.rows import is_true, missing, need_columns, num, row

CHECK_NAMES = ("student accuracy in the source language", "no student collapses onto one class")


def spec(config: dict) -> dict:
    """What the checks need from the config: the source language and the modes the sweep trains;
    `not_run`: checks the sweep cannot answer."""
    family = config["monox"]
    source = family["source_lang"]
    missing = [spec["dataset"] for spec in family["tasks"] if source not in spec["eval"]["langs"]]
    not_run = {CHECK_NAMES[0]: f"{source} is not among the test languages of {', '.join(missing)}"} if missing else {}
    return {"source_lang": source, "modes": list(family["modes"]), "not_run": not_run}


def checks(table: pd.DataFrame, spec: dict, world: Mapping, thresholds: dict) -> list[dict]:
    """Headline students (the config's size and, for kd, temperature): test accuracy in the
    source language for the listed modes; for every mode, the largest share of a test set
    given one class (`majority_share`, over the test languages) stays below the bar.

    spec: source_lang, modes (the modes the sweep trains; a listed mode it lacks is not run)."""
    family = "monox"
    names = CHECK_NAMES
    need_columns(table, family, ["run_id", "mode", "headline", "lang", "split", "metric", "value"])
    source = spec["source_lang"]
    students = table[is_true(table["headline"]) & (table["mode"] != "teacher") & (table.split == "test")]
    rows = []
    for mode in thresholds["modes"]:
        subject = f"{mode} students"
        expected = f">= {num(thresholds['source_accuracy'])} ({source} test accuracy)"
        if mode not in spec["modes"]:
            rows.append(row(family, names[0], subject, expected, f"{mode} is not in monox.modes", None))
            continue
        runs = students[(students["mode"] == mode) & (students.metric == "accuracy") & (students.lang == source)]
        if runs.empty:
            rows.append(missing(family, names[0], subject, expected, f"headline {mode} students in {source}"))
        for run, value in runs.groupby("run_id")["value"].mean().items():
            rows.append(row(family, names[0], run, expected, num(value), value >= thresholds["source_accuracy"]))
    shares = students[students.metric == "majority_share"]
    expected = f"largest share of a test set given one class <= {num(thresholds['max_majority_share'])}"
    if shares.empty:
        rows.append(missing(family, names[1], "headline students", expected, "majority_share"))
    for run, part in shares.groupby("run_id"):
        worst = part.loc[part["value"].idxmax()]
        rows.append(
            row(
                family,
                names[1],
                run,
                expected,
                f"{num(worst['value'])} ({worst['lang']})",
                worst["value"] <= thresholds["max_majority_share"],
            )
        )
    return rows
