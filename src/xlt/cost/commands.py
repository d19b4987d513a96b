"""The cost verbs' flags: `xlt plan` (what a config will cost, run by xlt.cost.show_plan), `xlt calibrate`
(this machine's throughput, xlt.cost.calibration), `xlt cost-table` (planned against measured,
xlt.cost.cost_table) and `xlt status` (xlt.cost.status_commands)."""

from __future__ import annotations

from xlt.core.verbs import COST, Verb, add_config_argument, add_run_arguments
from xlt.cost.profile import DEFAULT_PROFILE, add_profile_arguments
from xlt.cost.status_commands import STATUS

GROUP = COST


def _plan_arguments(p):
    add_config_argument(p, "to plan")
    add_profile_arguments(p)
    p.add_argument(
        "--json",
        action="store_true",
        help="print the plan as JSON, one entry per job included (without the host range unless --out is given)",
    )
    p.add_argument("--out", default=None, help="also write the JSON plan here")
    p.add_argument(
        "--levers",
        action="store_true",
        help="also what each input (rates, overheads, compile, GPU sharing) carries of the total, measured or "
        "assumed (xlt.cost.levers; plans the sweep once more per input)",
    )


def _calibrate_arguments(p):

    p.add_argument("--out", default=str(DEFAULT_PROFILE), help="where to save the profile")
    p.add_argument(
        "--seconds",
        type=float,
        default=20.0,
        help="time budget of the timed steps (start-up probe and model set-up come on top)",
    )
    add_run_arguments(p, "--device")
    p.add_argument(
        "--threads",
        type=int,
        default=None,
        help="torch CPU threads to measure with (default: torch's own); the workflow's jobs use their rule's "
        "`threads:` (config `threads`), so calibrate with that number to plan them",
    )


def _cost_table_arguments(p):
    add_config_argument(p, "the jobs ran from (planned seconds come from it)")
    add_profile_arguments(p)
    p.add_argument("--root", default=".", help="directory that holds results/benchmarks and results/runs")
    p.add_argument("--out", required=True, help="cost table (CSV), one row per model-running job")
    p.add_argument("--plot", default=None, help="also draw planned against measured seconds per family (PNG)")
    p.add_argument(
        "--disk-out",
        default=None,
        help="also write planned against measured disk per family and of the hub cache (CSV)",
    )


VERBS = {
    "cost-table": Verb(
        "xlt.cost.cost_table:main",
        "Join every model job's Snakemake benchmark file with its planned cost into one CSV (and a plot)",
        _cost_table_arguments,
    ),
    "plan": Verb(
        "xlt.cost.show_plan:main",
        "Cost estimate of a config before it runs (prices its planned jobs, runs nothing): jobs, "
        "GPU/CPU-hours, peak memory, disk per family and in total",
        _plan_arguments,
    ),
    "calibrate": Verb(
        "xlt.cost.calibration:main",
        "Measure this machine's training and inference throughput and per-step overheads and save them for `xlt plan`",
        _calibrate_arguments,
    ),
    "status": STATUS,
}
