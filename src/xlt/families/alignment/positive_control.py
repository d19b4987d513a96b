"""alignment's positive control: a pretrained model retrieves the high-overlap language's
translations well above chance at its best layer, and that layer is above the embeddings. The
job counts the test bitext's sentences (`resolve`): chance is one over their number."""

from __future__ import annotations

from typing import Mapping

import pandas as pd

from xlt.core import settings
from xlt.core.errors import XltError
from xlt.core.io import read_jsonl
from xlt.core.plan import data_file, data_info
from xlt.families.alignment import plan as alignment
from xlt.report.positive_control.rows import missing, need_columns, num, row
from xlt.report.positive_control.world import describe as language
from xlt.report.positive_control.world import high_overlap

CHECK_NAMES = ("high-overlap retrieval at the best layer above chance", "best layer above the embedding layer")


def spec(config: dict) -> dict:
    """What the checks need from the config: the pretrained models' run ids, the metric (centred
    or raw), the test bitext files; `not_run`: checks the sweep cannot answer."""
    family = config["alignment"]
    data = family["data"]
    metric = "bitext_retrieval_acc" + ("_centered" if family["center"] else "")  # xlt.evaluate.alignment's names
    names, not_run, high = CHECK_NAMES, {}, high_overlap(settings.demo_world(config))
    runs = [row["run_id"] for row in alignment.runs(config) if row["source"] == "pretrained"]
    if family["layers"] != "all" and 0 not in family["layers"]:
        not_run[names[1]] = "layer 0 (the embeddings) is not in alignment.layers"
    if high not in data["langs"]:
        not_run = dict.fromkeys(names, f"the high-overlap language {high} is not in alignment.data.langs")
    if not runs:
        not_run = dict.fromkeys(names, "alignment.models is empty: no pretrained model is analysed")
    return {
        "runs": runs,
        "metric": metric,
        "bitext_files": {
            lang: data_file(data["dataset"], lang, data["split"])
            for lang in data["langs"]
            if lang in settings.demo_world(config)
        },
        "not_run": not_run,
    }


def checks(table: pd.DataFrame, spec: dict, world: Mapping, thresholds: dict) -> list[dict]:
    """Per-layer retrieval accuracy of the pretrained models on the high-overlap language.

    spec: runs (the pretrained models' run ids), metric (the centred or raw accuracy),
    candidates (language -> sentences in its test bitext: chance is 1 / candidates)."""
    family = "alignment"
    names = CHECK_NAMES
    need_columns(table, family, ["run_id", "lang", "layer", "direction", "metric", "value"])
    high = high_overlap(world)
    if high not in spec["candidates"]:
        return [missing(family, name, language(world, high), "", f"the test bitext of {high}") for name in names]
    chance = 1.0 / spec["candidates"][high]
    bar = thresholds["chance_factor"] * chance
    how = f"mean of xx->en and en->xx, {spec['metric']}"
    rows = []
    for run in spec["runs"]:
        subject = f"{language(world, high)}, {run}"
        part = table[(table.run_id == run) & (table.metric == spec["metric"]) & (table.lang == high)]
        by_layer = part.groupby("layer")["value"].mean()  # both directions averaged
        expected = f">= {thresholds['chance_factor']:g} x chance 1/{spec['candidates'][high]} = {num(bar)} ({how})"
        if by_layer.empty:
            rows.append(missing(family, names[0], subject, expected, f"{run} on {high} ({spec['metric']})"))
            rows.append(missing(family, names[1], subject, "> layer 0", f"{run} on {high} ({spec['metric']})"))
            continue
        best = by_layer.idxmax()
        observed = f"layer {int(best)}: {num(by_layer[best])}"
        rows.append(row(family, names[0], subject, expected, observed, by_layer[best] >= bar))
        if 0 not in by_layer.index:
            rows.append(missing(family, names[1], subject, "> layer 0", f"{run} at layer 0 on {high}"))
            continue
        rows.append(
            row(
                family,
                names[1],
                subject,
                f"> layer 0 (embeddings): {num(by_layer[0])} ({how})",
                observed,
                by_layer[best] > by_layer[0],
            )
        )
    return rows


def datasets(config: dict) -> list[str]:
    """The prepared data the job reads: the bitext dataset's info.json (its test files)."""
    return [data_info(config["alignment"]["data"]["dataset"])]


def resolve(entry: dict) -> dict:
    """The spec entry with its `bitext_files` counted: `candidates`, language -> sentences."""
    if "bitext_files" not in entry:
        return entry
    entry = dict(entry)
    counts = {lang: len(read_jsonl(path)) for lang, path in entry.pop("bitext_files").items()}
    empty = [lang for lang, n in counts.items() if n == 0]
    if empty:
        raise XltError(f"the alignment test bitext of {empty} is empty")
    return {**entry, "candidates": counts}
