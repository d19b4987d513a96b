HELP = "MonoX: the paper-style accuracy table (method x language, per task) as CSV, markdown and HTML"


def add_arguments(p):
    p.add_argument("--table", required=True, help="tidy CSV from `xlt aggregate` (results/tables/monox.csv)")
    p.add_argument("--csv", required=True, help="output: the table as CSV (accuracy in 0..1)")
    p.add_argument("--markdown", help="output: one markdown table per task (percent)")
    p.add_argument("--html", help="output: the same as an HTML page (for the report)")
    p.add_argument("--title", default="")


def run(args):
    import pandas as pd

    from xlt.core.io import atomic_path, write_text
    from xlt.families.monox.plots import accuracy_table, table_html, table_markdown

    grid = accuracy_table(pd.read_csv(args.table))
    with atomic_path(args.csv) as tmp:
        grid.to_csv(tmp, float_format="%.6f")
    if args.markdown:
        write_text(args.markdown, table_markdown(grid))
    if args.html:
        write_text(args.html, table_html(grid, args.title))
    print(table_markdown(grid))
