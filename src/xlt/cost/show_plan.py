"""`xlt plan`: what a config's jobs will cost before it runs (xlt.cost.sweep prices them), as a table
or JSON. Declared in xlt.cost.commands' VERBS (flags there)."""

from __future__ import annotations

import json

from xlt.core import settings
from xlt.core.io import write_json
from xlt.cost import levers, profile, sweep


def main(args):
    config, planned_with = settings.load(args.config), profile.load(args.gpu, args.profile)
    result = sweep.plan(config, planned_with)
    # the range plans the sweep once more: for the table and --out, not for --json's machine output
    result["host_low"] = sweep.host_range(config, planned_with) if not args.json or args.out else None
    if args.levers:  # the plan again once per lever: seconds for the paper config, so only when asked
        result["levers"] = levers.levers(config, planned_with, result)
    if args.out:
        write_json(args.out, result)
    if args.json:
        print(json.dumps(result, indent=1))
        return
    print(sweep.format_table(result))
    if args.levers:
        print(levers.format_levers(result["levers"], bool(planned_with.get("gpu"))))
