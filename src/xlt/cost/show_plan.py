"""`xlt plan`: what a config's jobs will cost before it runs (xlt.cost.sweep prices them), as a table
or JSON. Declared in xlt.cost.commands' VERBS (flags there)."""

from __future__ import annotations

import json

from xlt.core import settings
from xlt.core.io import write_json
from xlt.cost import profile, sweep


def main(args):
    result = sweep.plan(settings.load(args.config), profile.load(args.gpu, args.profile))
    if args.out:
        write_json(args.out, result)
    print(json.dumps(result, indent=1) if args.json else sweep.format_table(result))
