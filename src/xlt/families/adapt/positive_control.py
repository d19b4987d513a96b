"""adapt's positive control: adaptation lowers the target language's perplexity, and training
every layer costs the other languages the most."""

from __future__ import annotations

from typing import Mapping

import pandas as pd

from xlt.core import settings
from xlt.families.adapt import plan as adapt
from xlt.families.adapt.schemes import RangeScheme
from xlt.report.positive_control.rows import missing, need_columns, num, row

CHECK_NAMES = ("target perplexity falls", "training all layers costs the other languages most")


def _all_layers_scheme(config: dict, model: str) -> str | None:
    """The adapt scheme of `model` that trains every layer (range 0-L), if the sweep has one."""
    n = settings.model_layers(config, model)
    return next((s.name for s in adapt.schemes(config, model) if s == RangeScheme(0, n)), None)


def spec(config: dict) -> dict:
    """What the checks need from the config: the target language and splits, each model's
    reference run and all-layers scheme; `not_run`: checks the sweep cannot answer."""
    family = config["adapt"]
    all_layers = {m: _all_layers_scheme(config, m) for m in family["models"]}
    lacking = [m for m, scheme in all_layers.items() if scheme is None]
    not_run = (
        {
            CHECK_NAMES[1]: f"no scheme in adapt.schemes trains every layer of {', '.join(lacking)} "
            f'(e.g. "0-{settings.model_layers(config, lacking[0])}")'
        }
        if lacking
        else {}
    )
    return {
        "target": family["target"]["lang"],
        "target_split": family["target"]["test_split"],
        "multilingual": adapt.MULTILINGUAL,
        "multilingual_split": family["multilingual"]["split"],
        "references": {m: f"{adapt.REFERENCE_PREFIX}{m}" for m in family["models"]},
        "all_layers": all_layers,
        "not_run": not_run,
    }


def checks(table: pd.DataFrame, spec: dict, world: Mapping, thresholds: dict) -> list[dict]:
    """Final perplexities (records without a step; mean over seeds) of every layer scheme
    against the untouched model (its reference run: the step-0 state, the same fixed masks).

    spec: target (language), target_split (held-out test split of the final perplexity),
    multilingual (the pooled other-languages set's `lang`), multilingual_split,
    references (model -> reference run id), all_layers (model -> the scheme that trains every layer)."""
    family = "adapt"
    names = CHECK_NAMES
    need_columns(table, family, ["run_id", "model", "role", "scheme", "lang", "split", "metric", "value"])
    step = table["step"] if "step" in table.columns else pd.Series(float("nan"), index=table.index)
    final = table[(table.metric == "perplexity") & step.isna()]
    target = (spec["target"], spec["target_split"])
    multi = (spec["multilingual"], spec["multilingual_split"])
    rows = []
    for model, reference in spec["references"].items():
        untouched = final[final.run_id == reference].groupby(["lang", "split"])["value"].mean()
        adapted = final[(final.model == model) & (final.role == "adapted")]
        per_scheme = adapted.groupby(["scheme", "lang", "split"])["value"].mean()
        schemes = list(dict.fromkeys(adapted["scheme"]))
        before = untouched.get(target)
        what = f"{target[0]} {target[1]} perplexity"
        if before is None or not schemes:
            absent = f"{reference} (untouched model)" if before is None else f"adapted runs of {model}"
            rows.append(missing(family, names[0], model, f"final < untouched ({what})", f"{absent}, {what}"))
        else:
            expected = f"< untouched {num(before)} ({what}, the selected model)"
            for scheme in schemes:
                after, subject = per_scheme.get((scheme, *target)), f"{model}, scheme {scheme}"
                rows.append(
                    missing(family, names[0], subject, expected, f"scheme {scheme}, {what}")
                    if after is None
                    else row(family, names[0], subject, expected, num(after), after < before)
                )

        everything = spec["all_layers"][model]
        base = untouched.get(multi)
        increases = {
            scheme: per_scheme.get((scheme, *multi)) - base
            for scheme in schemes
            if base is not None and per_scheme.get((scheme, *multi)) is not None
        }
        expected = (
            f"scheme {everything} (every layer trained) raises the {multi[0]} {multi[1]} perplexity "
            "at least as much as every other scheme"
        )
        if everything not in increases or len(increases) < len(schemes):
            rows.append(
                missing(family, names[1], model, expected, f"{reference} or the adapted runs on {multi[0]} {multi[1]}")
            )
            continue
        observed = ", ".join(
            f"{scheme} {increases[scheme]:+.3f}" for scheme in sorted(increases, key=increases.get, reverse=True)
        )
        rows.append(
            row(
                family, names[1], model, expected, observed, all(increases[everything] >= v for v in increases.values())
            )
        )
    return rows
