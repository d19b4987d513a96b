"""The positive control of the demo: effects the synthetic world must show, checked on the
families' tidy tables.

The demo world (`demo_world` in the config) gives each synthetic language a share of content
words spelled as in English (its overlap). A demo that works shows transfer that follows the
overlap; each family's `positive_control.checks` (xlt.families.<name>.positive_control,
xlt.core.family_plan.PositiveControl) turns its table into check rows

    family, check, subject, expected, observed, pass

with `pass` one of "yes", "no" or "not run" (the family is disabled, or its sweep cannot
answer the check, e.g. no depth -1: the spec's `not_run` says why; never counted as passed).
A table that lacks the rows a check needs fails that check ("no"): the sweep promised them, so
their absence is a defect, not a skip. Nothing here reads files: the spec carries what the
config and the data say (label count, bitext sizes, which runs pair with which baselines;
`xlt.report.positive_control.plan.spec`), and the thresholds are `positive_control` settings.
"""

from __future__ import annotations

from typing import Mapping

import pandas as pd

from xlt.core import registry
from xlt.core.check_names import check_key, check_names
from xlt.core.errors import XltError
from xlt.report.positive_control.rows import COLUMNS, FAIL, NOT_RUN, PASS, row  # noqa: F401  (the table's names)


def not_run(family: str, reason: str) -> list[dict]:
    """The rows of a family that was not run: one per check, none passed."""
    return [row(family, name, "", "", reason, None) for name in check_names()[family]]


def positive_control(tables: Mapping[str, pd.DataFrame], spec: dict) -> pd.DataFrame:
    """Every check of every family, one row each (columns COLUMNS).

    spec: world (demo_world.languages), thresholds (the positive_control settings, one mapping
    per family), and one entry per family whose checks run (what the family's
    positive_control.checks needs, and `not_run`: check -> the reason the sweep cannot answer
    it). A family without an entry is disabled and its checks are reported as not run. Each
    family with an entry needs its table in `tables`."""
    rows, names = [], check_names()
    for family in names:
        if family not in spec:
            rows += not_run(family, f"{family} is disabled in this config")
            continue
        if family not in tables:
            raise XltError(f"no {family} table given; the {family} checks need results/tables/{family}.csv")
        skipped = spec[family].get("not_run", {})  # check -> why the sweep cannot answer it
        found = (
            []
            if set(names[family]) <= set(skipped)
            else registry.positive_control(family).checks(
                tables[family], spec[family], spec["world"], spec["thresholds"].get(family, {})
            )
        )
        found = [one for one in found if one["check"] not in skipped]
        found += [row(family, name, "", "", skipped[name], None) for name in names[family] if name in skipped]
        rows += sorted(found, key=lambda one: names[family].index(one["check"]))  # stable: subjects keep order
    known = spec.get("known_failures", {})
    for one in rows:
        one["known_failure"] = known.get(check_key(one["family"], one["check"]), "")
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
    for one in checks.to_dict("records"):
        subject = f" [{one['subject']}]" if one["subject"] else ""
        known = f" (known failure: {one['known_failure']})" if one.get("known_failure") and one["pass"] == FAIL else ""
        lines.append(f"{one['pass'].upper():>7}  {one['family']}: {one['check']}{subject}{known}")
        expected = f"expected {one['expected']}; " if one["expected"] else ""
        lines.append(f"{'':>7}  {expected}observed {one['observed']}")
    return "\n".join(lines)
