"""The rows of the positive control's check table, and the helpers every family's checks
(`xlt.families.<name>.positive_control`) build them with.

A row is `family, check, subject, expected, observed, pass, known_failure`, `pass` one of
"yes", "no" or "not run". Pandas only, no files.
"""

from __future__ import annotations

import pandas as pd

from xlt.core.errors import XltError

COLUMNS = ("family", "check", "subject", "expected", "observed", "pass", "known_failure")
PASS, FAIL, NOT_RUN = "yes", "no", "not run"


def row(family: str, check: str, subject: str, expected: str, observed: str, passed: bool | None) -> dict:
    """One check row; `passed` None: not run."""
    status = NOT_RUN if passed is None else (PASS if passed else FAIL)
    return {
        "family": family,
        "check": check,
        "subject": subject,
        "expected": expected,
        "observed": observed,
        "pass": status,
        "known_failure": "",
    }


def num(value: float) -> str:
    return f"{value:.3f}"


def missing(family: str, check: str, subject: str, expected: str, what: str) -> dict:
    """A check whose rows the table lacks: a failure that says what is missing."""
    return row(family, check, subject, expected, f"no rows for {what} in {family}.csv", False)


def is_false(series: pd.Series) -> pd.Series:
    """True where a boolean column read from CSV says false (bool, "False", 0)."""
    return series.astype(str).str.lower().isin(["false", "0", "0.0"])


def is_true(series: pd.Series) -> pd.Series:
    return series.astype(str).str.lower().isin(["true", "1", "1.0"])


def need_columns(table: pd.DataFrame, family: str, columns: list[str]) -> None:
    missing = [c for c in columns if c not in table.columns]
    if missing:
        raise XltError(
            f"{family}.csv has no column(s) {missing}: is it the tidy table `xlt aggregate` writes "
            f"for the {family} family?"
        )
