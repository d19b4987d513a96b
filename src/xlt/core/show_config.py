"""`xlt config check|show`: validate a config, or print it with every default filled in."""

from __future__ import annotations

import yaml

from xlt.core.settings import load


def main(args):
    config = load(args.config)
    if args.action == "show":
        print(yaml.safe_dump(config, sort_keys=False), end="")
    else:
        print(f"{args.config}: valid")
