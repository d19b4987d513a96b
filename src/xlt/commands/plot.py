HELP = "Draw one figure from a tidy metrics table"


def add_arguments(p):
    from xlt.report.plots import PLOTS

    p.add_argument("kind", choices=sorted(PLOTS))
    p.add_argument("--table", required=True, help="tidy CSV from `xlt aggregate`")
    p.add_argument("--out", required=True, help="PNG path")
    p.add_argument("--title", default="")


def run(args):
    import pandas as pd

    from xlt.core.io import atomic_path
    from xlt.report.plots import PLOTS

    table = pd.read_csv(args.table)
    with atomic_path(args.out) as tmp:
        PLOTS[args.kind](table, tmp, title=args.title)
