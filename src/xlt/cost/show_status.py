"""`xlt status`: a sweep's progress per family and its ETA, from Snakemake's records
(xlt.cost.status_report), once or every --watch seconds."""

from __future__ import annotations

import json
import sys
import time

from xlt.core.errors import XltError
from xlt.cost import status_report


def main(args):
    for name in ("cores", "gpus"):
        if getattr(args, name) is not None and getattr(args, name) < 1:
            raise XltError(f"--{name} {getattr(args, name)}: give at least 1")
    if args.watch is not None and args.watch <= 0:
        raise XltError(f"--watch {args.watch}: give the seconds between refreshes, more than 0")
    sweep = status_report.load_sweep(args.directory, args.config, args.gpu, args.profile)
    clear = args.watch is not None and not args.json and sys.stdout.isatty()
    while True:
        status = status_report.report(sweep, args.cores, args.gpus)
        if clear:
            print("\033[H\033[J", end="")
        if args.json:  # watched: one object a line, for a script reading the stream
            print(json.dumps(status) if args.watch is not None else json.dumps(status, indent=1))
        else:
            print(status_report.format_text(status))
        sys.stdout.flush()
        if args.watch is None or not status["snakemake"]["running"]:
            return
        try:
            time.sleep(args.watch)
        except KeyboardInterrupt:
            return
