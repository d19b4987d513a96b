HELP = "Final perplexity per layer scheme and reference model (mean/sd over seeds) from the adapt tidy table"


def add_arguments(p):
    p.add_argument("--table", required=True, help="tidy CSV from `xlt aggregate` (adapt runs + references)")
    p.add_argument("--out", required=True, help="CSV path")


def run(args):
    import pandas as pd

    from xlt.core.io import atomic_path
    from xlt.families.adapt.tables import final_perplexity_table

    summary = final_perplexity_table(pd.read_csv(args.table))
    with atomic_path(args.out) as tmp:
        summary.to_csv(tmp, index=False, float_format="%.4f")
    print(summary.to_string(index=False))
