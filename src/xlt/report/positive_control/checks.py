"""The positive control of the demo: effects the synthetic world must show, checked on the
families' tidy tables.

The demo world (`demo_world` in the config) gives each synthetic language a share of content
words spelled as in English (its overlap). A demo that works shows transfer that follows the
overlap; each function here turns one family's table into check rows

    family, check, subject, expected, observed, pass

with `pass` one of "yes", "no" or "not run" (the family is disabled, or its sweep cannot
answer the check, e.g. no depth -1: the spec's `not_run` says why; never counted as passed).
A table that lacks the rows a check needs fails that check ("no"): the sweep promised them, so
their absence is a defect, not a skip. Nothing here reads files: the spec carries what the
config and the data say (label count, bitext sizes, which runs pair with which baselines;
`xlt.report.positive_control.plan.spec`), and the thresholds are `positive_control` settings.
"""
from __future__ import annotations

from typing import Callable, Mapping

import pandas as pd

from xlt.core.errors import XltError
from xlt.report.positive_control.world import describe as _language, high_overlap, overlap_ranking

COLUMNS = ("family", "check", "subject", "expected", "observed", "pass", "known_failure")
PASS, FAIL, NOT_RUN = "yes", "no", "not run"

# family -> the names of its checks, in report order (also the rows of a disabled family)
CHECK_NAMES = {
    "freeze_depth": ("source-language accuracy, nothing frozen", "high-overlap language above chance, nothing frozen",
                     "accuracy ordered by overlap, nothing frozen", "a shallower freeze depth beats the deepest"),
    "alignment": ("high-overlap retrieval at the best layer above chance", "best layer above the embedding layer"),
    "dual": ("training lowers the retrieval error", "distillation beats the zero-shot teacher without overlap"),
    "monox": ("student accuracy in the source language", "no student collapses onto one class"),
    "sbert": ("training raises source-language STS",),
    "adapt": ("target perplexity falls", "training all layers costs the other languages most"),
}
FAMILY_ORDER = tuple(CHECK_NAMES)


def _row(family: str, check: str, subject: str, expected: str, observed: str, passed: bool | None) -> dict:
    status = NOT_RUN if passed is None else (PASS if passed else FAIL)
    return {"family": family, "check": check, "subject": subject, "expected": expected, "observed": observed,
            "pass": status, "known_failure": ""}


def check_key(family: str, check: str) -> str:
    """How `positive_control.known_failures` names a check."""
    return f"{family}: {check}"


def _num(value: float) -> str:
    return f"{value:.3f}"


def _missing(family: str, check: str, subject: str, expected: str, what: str) -> dict:
    """A check whose rows the table lacks: a failure that says what is missing."""
    return _row(family, check, subject, expected, f"no rows for {what} in {family}.csv", False)


def _is_false(series: pd.Series) -> pd.Series:
    """True where a boolean column read from CSV says false (bool, "False", 0)."""
    return series.astype(str).str.lower().isin(["false", "0", "0.0"])


def _is_true(series: pd.Series) -> pd.Series:
    return series.astype(str).str.lower().isin(["true", "1", "1.0"])


def _need_columns(table: pd.DataFrame, family: str, columns: list[str]) -> None:
    missing = [c for c in columns if c not in table.columns]
    if missing:
        raise XltError(f"{family}.csv has no column(s) {missing}: is it the tidy table `xlt aggregate` writes "
                       f"for the {family} family?")


# ------------------------------------------------------------------ freeze_depth


def freeze_depth_checks(table: pd.DataFrame, spec: dict, world: Mapping, thresholds: dict) -> list[dict]:
    """Zero-shot accuracy (mean over seeds and other runs at a depth) per model.

    spec: source_lang, labels (the number of gold labels of the evaluation data: chance is 1 /
    labels), models (model as the table names it -> {name, layers}; depth `layers` is the
    deepest, every layer frozen)."""
    family = "freeze_depth"
    names = CHECK_NAMES[family]
    _need_columns(table, family, ["model", "freeze_depth", "lang", "metric", "value"])
    acc = table[table.metric == "accuracy"]
    source, chance = spec["source_lang"], 1.0 / spec["labels"]
    ranking = overlap_ranking(world)
    high = ranking[0]
    rows = []
    for model, info in spec["models"].items():
        who = f" ({info['name']})" if len(spec["models"]) > 1 else ""
        runs = acc[acc.model == model]
        by_depth_lang = runs.groupby(["freeze_depth", "lang"])["value"].mean()

        def accuracy(depth, lang):
            return by_depth_lang.get((depth, lang))

        expected = f">= {_num(thresholds['source_accuracy'])}"
        value = accuracy(-1, source)
        rows.append(_missing(family, names[0], f"{source}{who}", expected, f"{source} at depth -1") if value is None
                    else _row(family, names[0], f"{source}{who}", expected, _num(value),
                              value >= thresholds["source_accuracy"]))

        bar = chance + thresholds["above_chance"]
        expected = f">= chance 1/{spec['labels']} + {thresholds['above_chance']:g} = {_num(bar)}"
        value = accuracy(-1, high)
        subject = f"{_language(world, high)}{who}"
        rows.append(_missing(family, names[1], subject, expected, f"{high} at depth -1") if value is None
                    else _row(family, names[1], subject, expected, _num(value), value >= bar))

        tolerance = thresholds["order_tolerance"]
        expected = " >= ".join(_language(world, lang) for lang in ranking)
        expected += f" (each at least the next lower overlap's - {tolerance:g})" if tolerance else ""
        values = {lang: accuracy(-1, lang) for lang in ranking}
        absent = [lang for lang, v in values.items() if v is None]
        subject = f"{', '.join(ranking)}{who}"
        if absent:
            rows.append(_missing(family, names[2], subject, expected, f"{', '.join(absent)} at depth -1"))
        else:
            ordered = all(values[a] >= values[b] - tolerance for a in ranking for b in ranking
                          if float(world[a]["overlap"]) > float(world[b]["overlap"]))
            observed = ", ".join(f"{lang} {_num(values[lang])}" for lang in ranking)
            rows.append(_row(family, names[2], subject, expected, observed, ordered))

        deepest, gain = info["layers"], thresholds["depth_gain"]
        expected = f"best other depth >= depth {deepest} + {gain:g}"
        subject = f"{_language(world, high)}{who}"
        on_high = {depth: v for (depth, lang), v in by_depth_lang.items() if lang == high}
        others = {depth: v for depth, v in on_high.items() if depth != deepest}
        if deepest not in on_high or not others:
            rows.append(_missing(family, names[3], subject, expected,
                                 f"{high} at depth {deepest} and at a shallower depth"))
        else:
            best = max(others, key=others.get)
            observed = f"depth {best}: {_num(others[best])}, depth {deepest}: {_num(on_high[deepest])}"
            rows.append(_row(family, names[3], subject, expected, observed, others[best] >= on_high[deepest] + gain))
    return rows


# ------------------------------------------------------------------ alignment


def alignment_checks(table: pd.DataFrame, spec: dict, world: Mapping, thresholds: dict) -> list[dict]:
    """Per-layer retrieval accuracy of the pretrained models on the high-overlap language.

    spec: runs (the pretrained models' run ids), metric (the centred or raw accuracy),
    candidates (language -> sentences in its test bitext: chance is 1 / candidates)."""
    family = "alignment"
    names = CHECK_NAMES[family]
    _need_columns(table, family, ["run_id", "lang", "layer", "direction", "metric", "value"])
    high = high_overlap(world)
    if high not in spec["candidates"]:
        return [_missing(family, name, _language(world, high), "", f"the test bitext of {high}") for name in names]
    chance = 1.0 / spec["candidates"][high]
    bar = thresholds["chance_factor"] * chance
    how = f"mean of xx->en and en->xx, {spec['metric']}"
    rows = []
    for run in spec["runs"]:
        subject = f"{_language(world, high)}, {run}"
        part = table[(table.run_id == run) & (table.metric == spec["metric"]) & (table.lang == high)]
        by_layer = part.groupby("layer")["value"].mean()  # both directions averaged
        expected = f">= {thresholds['chance_factor']:g} x chance 1/{spec['candidates'][high]} = {_num(bar)} ({how})"
        if by_layer.empty:
            rows.append(_missing(family, names[0], subject, expected, f"{run} on {high} ({spec['metric']})"))
            rows.append(_missing(family, names[1], subject, "> layer 0", f"{run} on {high} ({spec['metric']})"))
            continue
        best = by_layer.idxmax()
        observed = f"layer {int(best)}: {_num(by_layer[best])}"
        rows.append(_row(family, names[0], subject, expected, observed, by_layer[best] >= bar))
        if 0 not in by_layer.index:
            rows.append(_missing(family, names[1], subject, "> layer 0", f"{run} at layer 0 on {high}"))
            continue
        rows.append(_row(family, names[1], subject, f"> layer 0 (embeddings): {_num(by_layer[0])} ({how})", observed,
                         by_layer[best] > by_layer[0]))
    return rows


# ------------------------------------------------------------------ dual


def dual_checks(table: pd.DataFrame, spec: dict, world: Mapping, thresholds: dict) -> list[dict]:
    """Tatoeba error (mean_error: both directions averaged) of every trained run against the
    untrained encoder with the same model and pooling, per demo language.

    spec: pairs (trained run id -> baseline run id), langs (the demo languages with bitext)."""
    family = "dual"
    name = CHECK_NAMES[family][0]
    _need_columns(table, family, ["run_id", "lang", "metric", "value"])
    error = table[table.metric == "mean_error"].groupby(["run_id", "lang"])["value"].mean()
    from xlt.report.positive_control.distill_check import dual_distill_rows  # the mse_distill objective's own check

    return _training_rows(error, spec, world, thresholds) + dual_distill_rows(error, spec, world, thresholds)


def _training_rows(error: pd.Series, spec: dict, world: Mapping, thresholds: dict) -> list[dict]:
    family = "dual"
    name = CHECK_NAMES[family][0]
    drop = thresholds["error_drop"]
    rows = []
    for run, baseline in spec["pairs"].items():
        for lang in spec["langs"]:
            subject = f"{_language(world, lang)}, {run}"
            before, after = error.get((baseline, lang)), error.get((run, lang))
            if before is None or after is None:
                absent = [r for r, v in ((baseline, before), (run, after)) if v is None]
                rows.append(_missing(family, name, subject, f"<= untrained error - {drop:g}",
                                     f"{' and '.join(absent)} on {lang} (mean_error)"))
                continue
            expected = f"<= untrained {_num(before)} - {drop:g} = {_num(before - drop)} (mean of both directions)"
            rows.append(_row(family, name, subject, expected, _num(after), after <= before - drop))
    return rows


# ------------------------------------------------------------------ monox


def monox_checks(table: pd.DataFrame, spec: dict, world: Mapping, thresholds: dict) -> list[dict]:
    """Headline students (the config's size and, for kd, temperature): test accuracy in the
    source language for the listed modes; for every mode, the largest share of a test set
    given one class (`majority_share`, over the test languages) stays below the bar.

    spec: source_lang, modes (the modes the sweep trains; a listed mode it lacks is not run)."""
    family = "monox"
    names = CHECK_NAMES[family]
    _need_columns(table, family, ["run_id", "mode", "headline", "lang", "split", "metric", "value"])
    source = spec["source_lang"]
    students = table[_is_true(table["headline"]) & (table["mode"] != "teacher") & (table.split == "test")]
    rows = []
    for mode in thresholds["modes"]:
        subject = f"{mode} students"
        expected = f">= {_num(thresholds['source_accuracy'])} ({source} test accuracy)"
        if mode not in spec["modes"]:
            rows.append(_row(family, names[0], subject, expected, f"{mode} is not in monox.modes", None))
            continue
        runs = students[(students["mode"] == mode) & (students.metric == "accuracy") & (students.lang == source)]
        if runs.empty:
            rows.append(_missing(family, names[0], subject, expected, f"headline {mode} students in {source}"))
        for run, value in runs.groupby("run_id")["value"].mean().items():
            rows.append(_row(family, names[0], run, expected, _num(value), value >= thresholds["source_accuracy"]))
    shares = students[students.metric == "majority_share"]
    expected = f"largest share of a test set given one class <= {_num(thresholds['max_majority_share'])}"
    if shares.empty:
        rows.append(_missing(family, names[1], "headline students", expected, "majority_share"))
    for run, part in shares.groupby("run_id"):
        worst = part.loc[part["value"].idxmax()]
        rows.append(_row(family, names[1], run, expected, f"{_num(worst['value'])} ({worst['lang']})",
                         worst["value"] <= thresholds["max_majority_share"]))
    return rows


# ------------------------------------------------------------------ sbert


def sbert_checks(table: pd.DataFrame, spec: dict, world: Mapping, thresholds: dict) -> list[dict]:
    """Cosine Spearman on the source-language STS test set: each trained run against the
    untrained model with the same model, pooling and layer.

    spec: pairs (trained run id -> untrained run id), lang, dataset, split."""
    family = "sbert"
    name = CHECK_NAMES[family][0]
    _need_columns(table, family, ["run_id", "lang", "similarity", "dataset", "split", "metric", "value"])
    sts = table[(table.metric == "spearman") & (table.similarity == "cosine") & (table.lang == spec["lang"])
                & (table.dataset == spec["dataset"]) & (table.split == spec["split"])]
    spearman = sts.groupby("run_id")["value"].mean()
    gain = thresholds["spearman_gain"]
    rows = []
    for run, baseline in spec["pairs"].items():
        before, after = spearman.get(baseline), spearman.get(run)
        what = f"{spec['dataset']} {spec['lang']} {spec['split']}, Spearman of cosine"
        if before is None or after is None:
            absent = [r for r, v in ((baseline, before), (run, after)) if v is None]
            rows.append(_missing(family, name, run, f">= untrained + {gain:g}", f"{' and '.join(absent)} ({what})"))
            continue
        expected = f">= untrained {_num(before)} + {gain:g} = {_num(before + gain)} ({what})"
        rows.append(_row(family, name, run, expected, _num(after), after >= before + gain))
    return rows


# ------------------------------------------------------------------ adapt


def adapt_checks(table: pd.DataFrame, spec: dict, world: Mapping, thresholds: dict) -> list[dict]:
    """Final perplexities (records without a step; mean over seeds) of every layer scheme
    against the untouched model (its reference run: the step-0 state, the same fixed masks).

    spec: target (language), target_split (held-out test split of the final perplexity),
    multilingual (the pooled other-languages set's `lang`), multilingual_split,
    references (model -> reference run id), all_layers (model -> the scheme that trains every layer)."""
    family = "adapt"
    names = CHECK_NAMES[family]
    _need_columns(table, family, ["run_id", "model", "role", "scheme", "lang", "split", "metric", "value"])
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
            rows.append(_missing(family, names[0], model, f"final < untouched ({what})", f"{absent}, {what}"))
        else:
            expected = f"< untouched {_num(before)} ({what}, the selected model)"
            for scheme in schemes:
                after, subject = per_scheme.get((scheme, *target)), f"{model}, scheme {scheme}"
                rows.append(_missing(family, names[0], subject, expected, f"scheme {scheme}, {what}") if after is None
                            else _row(family, names[0], subject, expected, _num(after), after < before))

        everything = spec["all_layers"][model]
        base = untouched.get(multi)
        increases = {scheme: per_scheme.get((scheme, *multi)) - base for scheme in schemes
                     if base is not None and per_scheme.get((scheme, *multi)) is not None}
        expected = (f"scheme {everything} (every layer trained) raises the {multi[0]} {multi[1]} perplexity "
                    "at least as much as every other scheme")
        if everything not in increases or len(increases) < len(schemes):
            rows.append(_missing(family, names[1], model, expected,
                                 f"{reference} or the adapted runs on {multi[0]} {multi[1]}"))
            continue
        observed = ", ".join(f"{scheme} {increases[scheme]:+.3f}" for scheme in
                             sorted(increases, key=increases.get, reverse=True))
        rows.append(_row(family, names[1], model, expected, observed,
                         all(increases[everything] >= v for v in increases.values())))
    return rows


FAMILY_CHECKS: dict[str, Callable[[pd.DataFrame, dict, Mapping, dict], list[dict]]] = {
    "freeze_depth": freeze_depth_checks, "alignment": alignment_checks, "dual": dual_checks,
    "monox": monox_checks, "sbert": sbert_checks, "adapt": adapt_checks,
}


def not_run(family: str, reason: str) -> list[dict]:
    """The rows of a family that was not run: one per check, none passed."""
    return [_row(family, name, "", "", reason, None) for name in CHECK_NAMES[family]]


def positive_control(tables: Mapping[str, pd.DataFrame], spec: dict) -> pd.DataFrame:
    """Every check of every family, one row each (columns COLUMNS).

    spec: world (demo_world.languages), thresholds (the positive_control settings, one mapping
    per family), and one entry per family whose checks run (what `FAMILY_CHECKS` needs, and
    `not_run`: check -> the reason the sweep cannot answer it). A family without an entry is
    disabled and its checks are reported as not run. Each family with an entry needs its table
    in `tables`."""
    rows = []
    for family in FAMILY_ORDER:
        if family not in spec:
            rows += not_run(family, f"{family} is disabled in this config")
            continue
        if family not in tables:
            raise XltError(f"no {family} table given; the {family} checks need results/tables/{family}.csv")
        skipped = spec[family].get("not_run", {})  # check -> why the sweep cannot answer it
        found = [] if set(CHECK_NAMES[family]) <= set(skipped) else FAMILY_CHECKS[family](
            tables[family], spec[family], spec["world"], spec["thresholds"].get(family, {}))
        found = [row for row in found if row["check"] not in skipped]
        found += [_row(family, name, "", "", skipped[name], None) for name in CHECK_NAMES[family] if name in skipped]
        rows += sorted(found, key=lambda row: CHECK_NAMES[family].index(row["check"]))  # stable: subjects keep order
    known = spec.get("known_failures", {})
    for row in rows:
        row["known_failure"] = known.get(check_key(row["family"], row["check"]), "")
    return pd.DataFrame(rows, columns=list(COLUMNS))


def failed(checks: pd.DataFrame) -> pd.DataFrame:
    """Failed rows that fail the run: those of checks not listed as known failures."""
    return checks[(checks["pass"] == FAIL) & (checks["known_failure"].fillna("") == "")]


def known_failed(checks: pd.DataFrame) -> pd.DataFrame:
    return checks[(checks["pass"] == FAIL) & (checks["known_failure"].fillna("") != "")]


def stale_known_failures(checks: pd.DataFrame, known: Mapping[str, str]) -> list[str]:
    """Listed known failures whose rows all pass now: the list must drop them."""
    keyed = checks.assign(key=[check_key(f, c) for f, c in zip(checks["family"], checks["check"])])
    return [key for key in known if (rows := keyed[keyed.key == key]).size and (rows["pass"] == PASS).all()]


def format_checks(checks: pd.DataFrame) -> str:
    """The check table for a console or log, two lines a check (the CSV's columns are too wide
    for one): pass, family, check and subject; then expected and observed."""
    lines = []
    for row in checks.to_dict("records"):
        subject = f" [{row['subject']}]" if row["subject"] else ""
        known = f" (known failure: {row['known_failure']})" if row.get("known_failure") and row["pass"] == FAIL else ""
        lines.append(f"{row['pass'].upper():>7}  {row['family']}: {row['check']}{subject}{known}")
        expected = f"expected {row['expected']}; " if row["expected"] else ""
        lines.append(f"{'':>7}  {expected}observed {row['observed']}")
    return "\n".join(lines)
