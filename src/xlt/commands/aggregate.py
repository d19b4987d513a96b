HELP = "Collect metrics JSON files into one tidy CSV (run axes + dimensions + metric + value)"


def add_arguments(p):
    p.add_argument("metrics", nargs="+", help="metrics JSON files")
    p.add_argument("--out", required=True, help="CSV path")


def run(args):
    from xlt.core.io import atomic_path
    from xlt.report.aggregate import aggregate

    table = aggregate(args.metrics)
    with atomic_path(args.out) as tmp:
        table.to_csv(tmp, index=False)
    print(f"{len(table)} rows from {len(args.metrics)} files -> {args.out}")
