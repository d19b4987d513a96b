"""`xlt align-gap-plot`: the alignment family's cosine gap by layer, one line per run."""

from __future__ import annotations

from xlt.core.io import atomic_path
from xlt.core.tables import read_table
from xlt.families.alignment.plots import cosine_gap_by_layer


def main(args):
    with atomic_path(args.out) as tmp:
        cosine_gap_by_layer(read_table(args.table), tmp, args.run_id, title=args.title)
