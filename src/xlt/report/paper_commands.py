"""`xlt paper-delta`: ours minus the seed studies' published numbers, as a table and a figure."""
from __future__ import annotations

from xlt.cli import Verb


def _arguments(p):
    p.add_argument("tables", nargs="+", help="FAMILY=CSV run tables from `xlt aggregate`")
    p.add_argument("--demo", action="store_true", help="a demo run: no overlay, and the figure says why")
    p.add_argument("--out-table", required=True, help="paper_delta CSV path")
    p.add_argument("--out-plot", required=True, help="overlay PNG path")


def _run(args):
    from xlt.core.errors import XltError
    from xlt.core.io import atomic_path
    from xlt.report import paper

    tables = {}
    for item in args.tables:
        family, sep, path = item.partition("=")
        if not sep:
            raise XltError(f"{item!r}: give run tables as FAMILY=CSV, e.g. freeze_depth=results/tables/freeze_depth.csv")
        tables[family] = path
    delta = paper.compare(tables, demo=args.demo)
    with atomic_path(args.out_table) as tmp:
        delta.to_csv(tmp, index=False)
    with atomic_path(args.out_plot) as tmp:
        paper.overlay_plot(delta, tmp, demo=args.demo)
    print(f"{len(delta)} matches with published numbers -> {args.out_table}")


VERBS = {"paper-delta": Verb("Ours minus the seed studies' published numbers (paper_delta.csv + overlay figure)", _arguments, _run)}
