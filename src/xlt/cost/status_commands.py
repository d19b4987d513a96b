"""`xlt status`: a sweep's progress per family and its ETA, from Snakemake's records
(xlt.cost.status_report). Declared in xlt.cost.commands' VERBS (flags here; it runs from xlt.cost.show_status)."""

from __future__ import annotations

from xlt.core.verbs import Verb
from xlt.cost.profile import add_profile_arguments


def _status_arguments(p):
    p.add_argument(
        "--directory", default=".", help="the sweep's working directory (the one with .snakemake/; default: here)"
    )
    p.add_argument(
        "--config",
        default=None,
        help="the config the sweep runs (default: the --configfile its latest run's log names, else config.yaml)",
    )
    add_profile_arguments(p, gpu_note=", as `xlt plan`")
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


STATUS = Verb(
    "xlt.cost.show_status:main",
    "A running or finished sweep's jobs done, running, failed and waiting per family, from Snakemake's "
    "records, and its ETA (the plan's remaining seconds scaled by the finished jobs' measured/planned)",
    _status_arguments,
)
