"""`xlt positive-control`: run every enabled family's positive-control checks on its tidy table and
write the check table; fails when a check fails that is no known failure."""

from __future__ import annotations

import json
from pathlib import Path

from xlt.core import registry
from xlt.core.errors import XltError
from xlt.core.io import atomic_path
from xlt.core.settings import load
from xlt.core.tables import read_table
from xlt.report.positive_control import plan
from xlt.report.positive_control.checks import (
    NOT_RUN,
    PASS,
    check_names,
    failed,
    format_checks,
    known_failed,
    positive_control,
    stale_known_failures,
)

FAILED_STATUS = 1  # the exit status when a check fails that is no known failure


def resolve(spec: dict) -> dict:
    """The spec with its data files counted: each family's `resolve` (its positive_control.py,
    where it has one) turns the paths of its entry into counts (freeze_depth's `label_files`
    become `labels`, the distinct gold labels of the evaluation sets; alignment's
    `bitext_files` become `candidates`, language -> sentences in its test bitext)."""

    spec = dict(spec)
    for family in registry.names():
        module = registry.positive_control(family) if family in spec else None
        if module is not None and hasattr(module, "resolve"):
            spec[family] = module.resolve(spec[family])
    return spec


def read_tables(spec: dict, paths: dict[str, str]) -> dict:
    """The table of every family the spec checks; a missing one is a clear error."""

    tables = {}
    for family in check_names():
        if family not in spec:
            continue
        if family not in paths:
            raise XltError(
                f"no table for {family}: pass --table {family}=results/tables/{family}.csv "
                f"(its checks run because the spec has a {family} entry)"
            )
        if not Path(paths[family]).is_file():
            raise XltError(
                f"{paths[family]} not found: the {family} checks read the {family} family's table "
                f"(run the workflow, or disable the family)"
            )
        tables[family] = read_table(paths[family])
    return tables


def main(args) -> int:
    if args.config:
        config = load(args.config)
        spec, paths = plan.spec(config), {**plan.tables(config), **dict(args.table)}
    else:
        spec, paths = json.loads(args.spec), dict(args.table)
    spec = resolve(spec)
    checks = positive_control(read_tables(spec, paths), spec)
    with atomic_path(args.out) as tmp:
        checks.to_csv(tmp, index=False)
    counts = checks["pass"].value_counts()
    print(format_checks(checks))
    bad, known = failed(checks), known_failed(checks)
    summary = (
        f"{counts.get(PASS, 0)} passed, {len(bad)} failed, {len(known)} known failures, "
        f"{counts.get(NOT_RUN, 0)} not run -> {args.out}"
    )
    print(f"\npositive control: {summary}", flush=True)
    status = 0
    if not bad.empty:
        print(
            f"\nFAILED ({len(bad)}): the demo does not show what its synthetic world must show:\n" + format_checks(bad),
            flush=True,
        )
        status = FAILED_STATUS
    stale = stale_known_failures(checks, spec.get("known_failures", {}))
    if stale:
        print(
            f"\nFAILED: listed as known failures but passing now; take them off positive_control.known_failures: "
            f"{'; '.join(stale)}",
            flush=True,
        )
        status = FAILED_STATUS
    return status
