HELP = "Validate a config and print its sweep: one row per job"


def add_arguments(p):
    p.add_argument("--config", required=True)


def run(args):
    import pandas as pd

    from xlt.core.settings import SWEEPS, load_config

    config = load_config(args.config)
    for family, expand in SWEEPS.items():
        rows = expand(config)
        if rows:
            print(f"# {family}: {len(rows)} jobs")
            print(pd.DataFrame(rows).to_string(index=False))
