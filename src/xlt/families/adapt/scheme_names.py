"""How the adapt family names its layer schemes in a run's `scheme` axis, and their order: its
plan writes the names, its tables and plots read them, and the paired tests (xlt.analysis.compare)
order by them through the plan's ORDERS."""

from __future__ import annotations

import re

REFERENCE_SCHEME = "pre-trained"  # the `scheme` of the untouched reference models (before adaptation)
_RANGE = re.compile(r"^(\d+)-(\d+)$")


def scheme_order(scheme: str) -> tuple:
    """Ranges first (0-12, 6-12, 9-12, 11-12: most layers trained first), then gradual, then references."""
    match = _RANGE.match(str(scheme))
    if match:
        return (0, int(match.group(1)), int(match.group(2)), "")
    return (1 if str(scheme).startswith("gradual") else 2, 0, 0, str(scheme))


def scheme_label(scheme: str) -> str:
    match = _RANGE.match(str(scheme))
    if match:
        return f"layers {scheme}"
    found = re.match(r"^gradual-start(\d+)-step(\d+)-every(\d+)(steps|epochs)$", str(scheme))
    if found:
        start, step, every, unit = found.groups()
        unit = unit[:-1] if every == "1" else unit
        return f"gradual (top {start}, +{step} every {every} {unit})".replace("every 1 ", "every ")
    return str(scheme)
