"""`xlt monox-table`: MonoX's zero-shot table (teacher and students per size and language)."""

from __future__ import annotations

from xlt.core.io import atomic_path, write_text
from xlt.core.tables import read_table
from xlt.families.monox.plots import accuracy_spread, accuracy_table, table_html, table_markdown


def main(args):
    table = read_table(args.table)
    grid, spread = accuracy_table(table), accuracy_spread(table)
    with atomic_path(args.csv) as tmp:
        grid.to_csv(tmp, float_format="%.6f")
    if args.markdown:
        write_text(args.markdown, table_markdown(grid, spread=spread))
    if args.html:
        write_text(args.html, table_html(grid, args.title, spread=spread))
    print(table_markdown(grid, spread=spread))
