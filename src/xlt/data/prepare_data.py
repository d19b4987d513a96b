"""`xlt prepare-data`: a configured dataset written as normalised JSONL per language and split, with its info.json."""

from __future__ import annotations

import json

from xlt.core import settings
from xlt.core.errors import XltError
from xlt.data.prepare import prepare


def main(args):
    world = args.world
    if args.spec:
        spec = json.loads(args.spec)
    else:
        config = settings.load(args.config)
        datasets, world = config["datasets"], world or settings.demo_world(config)
        if args.dataset not in datasets:
            raise XltError(f"dataset {args.dataset!r} is not declared under datasets: in {args.config}")
        spec = datasets[args.dataset]
    info = prepare(args.dataset, spec, args.out, world=world, tokenizer=args.tokenizer)
    print(info["counts"])
