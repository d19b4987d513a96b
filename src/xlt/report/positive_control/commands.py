"""`xlt positive-control`: the demo's positive control over the families' tables.

Writes the check table (family, check, subject, expected, observed, pass), prints it, and
exits with status 1 when any check failed (after writing the table), 2 on bad input (a
missing table or data file). The workflow passes `--spec` and `--table` from
`xlt.report.positive_control.plan`; by hand, `--config FILE` builds both from a config.
"""

from __future__ import annotations

from xlt.core.verbs import ANALYSIS, Verb, key_values

GROUP = ANALYSIS


def _arguments(p) -> None:
    source = p.add_mutually_exclusive_group(required=True)
    source.add_argument(
        "--spec", help="what the checks need as JSON (xlt.report.positive_control.plan.spec; the workflow passes it)"
    )
    source.add_argument(
        "--config", help="a workflow config: the spec and the family tables from it (results/tables/...)"
    )
    p.add_argument(
        "--table",
        **key_values("FAMILY=CSV", "myfamily=results/tables/myfamily.csv"),
        help="a family's tidy table, repeatable (with --config: overrides that family's default path)",
    )
    p.add_argument("--out", required=True, help="CSV of the checks")


VERBS = {
    "positive-control": Verb(
        "xlt.report.positive_control.job:main",
        "Check that the demo shows the effects its synthetic world must show; exit 1 if any check fails",
        _arguments,
    )
}
