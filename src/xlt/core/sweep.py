"""`xlt sweep`: validate a config and print its sweep, one row per run of each family."""

from __future__ import annotations

import pandas as pd

from xlt.core.settings import FAMILIES, load, plan_module


def main(args):
    config = load(args.config)
    for family in FAMILIES:
        rows = plan_module(family).runs(config)
        if rows:
            print(f"# {family}: {len(rows)} runs")
            print(pd.DataFrame(rows).to_string(index=False))
