"""`xlt plot`: draw one figure kind (a family's PLOTS) from a tidy metrics table."""

from __future__ import annotations

from xlt.core.errors import XltError
from xlt.core.io import atomic_path
from xlt.core.tables import read_table
from xlt.report.plots import plot_functions


def main(args):
    kinds = plot_functions()
    if args.kind not in kinds:
        raise XltError(f"unknown plot kind {args.kind!r}; choose one of {', '.join(sorted(kinds))}")
    table = read_table(args.table)
    with atomic_path(args.out) as tmp:
        kinds[args.kind](table, tmp, title=args.title)
