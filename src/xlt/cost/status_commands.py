"""`xlt status`: a sweep's progress per family and its ETA, from Snakemake's records
(xlt.cost.status_report). Declared in xlt.cost.commands' VERBS; imports nothing heavy at the top."""

from __future__ import annotations

from xlt.core.verbs import Verb


def _status_arguments(p):
    p.add_argument(
        "--directory", default=".", help="the sweep's working directory (the one with .snakemake/; default: here)"
    )
    p.add_argument(
        "--config",
        default=None,
        help="the config the sweep runs (default: the --configfile its latest run's log names, else config.yaml)",
    )
    p.add_argument(
        "--gpu",
        default=None,
        help="plan with a known accelerator (h100, a100, v100, cpu) instead of the saved calibration, as `xlt plan`",
    )
    p.add_argument("--profile", default=None, help="calibration file (default: ~/.cache/xlt/throughput.json)")
    p.add_argument(
        "--cores",
        type=int,
        default=None,
        help="cores the remaining jobs share (default: the latest run's --cores, from its log)",
    )
    p.add_argument(
        "--gpus", type=int, default=None, help="GPUs the remaining model jobs share (GPU profiles; default 1)"
    )
    p.add_argument("--json", action="store_true", help="print the status as JSON (with --watch: one object a line)")
    p.add_argument(
        "--watch",
        type=float,
        default=None,
        metavar="SECONDS",
        help="print the status again every SECONDS until Snakemake stops (Ctrl-C ends it sooner)",
    )


def _status(args):
    import json
    import sys
    import time

    from xlt.core.errors import XltError
    from xlt.cost import status_report

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


STATUS = Verb(
    "A running or finished sweep's jobs done, running, failed and waiting per family, from Snakemake's "
    "records, and its ETA (the plan's remaining seconds scaled by the finished jobs' measured/planned)",
    _status_arguments,
    _status,
)
