"""Verbs of the bottom layer: the config itself (check, show) and its sweep."""

from __future__ import annotations

from xlt.core.verbs import WORKFLOW, Verb

GROUP = WORKFLOW


def _config_arguments(p):
    p.add_argument(
        "action",
        choices=["check", "show"],
        help="check: validate and say so; show: print the effective config, every default filled in",
    )
    p.add_argument("--config", required=True, help="a workflow config (YAML)")


def _config(args):
    import yaml

    from xlt.core.settings import load

    config = load(args.config)
    if args.action == "show":
        print(yaml.safe_dump(config, sort_keys=False), end="")
    else:
        print(f"{args.config}: valid")


def _sweep_arguments(p):
    p.add_argument("--config", required=True, help="a workflow config (YAML) whose runs to list")


def _sweep(args):
    import pandas as pd

    from xlt.core.settings import FAMILIES, load, plan_module

    config = load(args.config)
    for family in FAMILIES:
        rows = plan_module(family).runs(config)
        if rows:
            print(f"# {family}: {len(rows)} runs")
            print(pd.DataFrame(rows).to_string(index=False))


VERBS = {
    "config": Verb(
        "Validate a config (check) or print it with every default filled in (show)", _config_arguments, _config
    ),
    "sweep": Verb(
        "Validate a config and print its sweep: one row per run (`xlt plan` estimates what they cost)",
        _sweep_arguments,
        _sweep,
    ),
}
