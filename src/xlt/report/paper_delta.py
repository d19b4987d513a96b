"""`xlt paper-delta`: the comparison of a run's tables with the seed studies' published numbers."""

from __future__ import annotations

from xlt.core.io import atomic_path
from xlt.report import paper, paper_overlay


def main(args):
    delta = paper.compare(dict(args.tables), demo=args.demo, models=dict(args.model), splits=dict(args.split))
    with atomic_path(args.out_table) as tmp:
        delta.to_csv(tmp, index=False)
    with atomic_path(args.out_plot) as tmp:
        paper_overlay.overlay_plot(delta, tmp, demo=args.demo, rehearsal=args.rehearsal)
    key = ["family", "setting", "lang", "metric"]  # one published number
    published, matched = len(delta[key].drop_duplicates()), delta[delta["matched"] == "yes"]
    print(
        f"{len(matched[key].drop_duplicates())} of {published} published numbers match a run "
        f"({len(matched)} run-table rows) -> {args.out_table}"
    )
