"""`xlt plan` (what a config will cost) and `xlt calibrate` (this machine's throughput)."""

from __future__ import annotations

import json

from xlt.core.verbs import COST, Verb, add_run_arguments
from xlt.cost.status_commands import STATUS

GROUP = COST


def _plan_arguments(p):
    p.add_argument("--config", required=True, help="workflow config (YAML) to plan")
    p.add_argument(
        "--gpu",
        default=None,
        help="plan for a known accelerator (h100, a100, v100, cpu) instead of the saved calibration",
    )
    p.add_argument("--profile", default=None, help="calibration file (default: ~/.cache/xlt/throughput.json)")
    p.add_argument("--json", action="store_true", help="print the plan as JSON, one entry per job included")
    p.add_argument("--out", default=None, help="also write the JSON plan here")


def plan_verb(args):
    from xlt.core import settings
    from xlt.core.io import write_json
    from xlt.cost import profile, sweep

    result = sweep.plan(settings.load(args.config), profile.load(args.gpu, args.profile))
    if args.out:
        write_json(args.out, result)
    print(json.dumps(result, indent=1) if args.json else sweep.format_table(result))


def _calibrate_arguments(p):
    from xlt.cost.profile import DEFAULT_PROFILE

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


def calibrate_verb(args):
    from xlt.core.io import write_json
    from xlt.cost.calibration import calibrate

    result = calibrate(budget_s=args.seconds, device=args.device, threads=args.threads)
    write_json(args.out, result)
    print(
        f"saved {args.out}: train {result['train_flops']:.3g} FLOP/s, forward {result['eval_flops']:.3g} FLOP/s, "
        f"job start-up {result['overhead_s']:.1f} s; besides FLOPs a training step costs "
        f"{result['step_s'] * 1e3:.1f} ms + {result['step_layer_s'] * 1e3:.2f} ms a layer + "
        f"{result['step_example_layer_s'] * 1e3:.3f} ms an example a layer, an evaluation batch "
        f"{result['eval_batch_s'] * 1e3:.1f} ms + "
        f"{result['eval_batch_layer_s'] * 1e3:.2f} ms a layer ({result['threads']} threads)"
    )


def _cost_table_arguments(p):
    p.add_argument(
        "--config", required=True, help="the workflow config the jobs ran from (planned seconds come from it)"
    )
    p.add_argument(
        "--gpu",
        default=None,
        help="plan with a known accelerator (h100, a100, v100, cpu) instead of the saved calibration",
    )
    p.add_argument("--profile", default=None, help="calibration file (default: ~/.cache/xlt/throughput.json)")
    p.add_argument("--root", default=".", help="directory that holds results/benchmarks and results/runs")
    p.add_argument("--out", required=True, help="cost table (CSV), one row per model-running job")
    p.add_argument("--plot", default=None, help="also draw planned against measured seconds per family (PNG)")
    p.add_argument(
        "--disk-out",
        default=None,
        help="also write planned against measured disk per family and of the hub cache (CSV)",
    )


def cost_table_verb(args):
    from xlt.core import settings
    from xlt.core.errors import XltError
    from xlt.core.io import atomic_path
    from xlt.cost import ledger, profile, sweep

    planned = sweep.plan(settings.load(args.config), profile.load(args.gpu, args.profile))
    rows, missing = ledger.cost_rows(planned, args.root)
    if not rows:
        raise XltError(
            f"none of the {len(missing)} benchmark files of {args.config}'s model jobs is under {args.root} "
            f"(e.g. {missing[0] if missing else ledger.BENCHMARK_DIR}); run the workflow first "
            "(every model rule writes one) or pass --root the directory it ran in"
        )
    ledger.write_cost_table(rows, args.out)
    if args.plot:
        with atomic_path(args.plot) as tmp:
            ledger.plot_plan_vs_actual(
                rows, tmp, title=f"Planned ({planned['profile']['name']} profile) against measured wall time"
            )
    for family, own in [*ledger.by_family(rows).items(), ("total", rows)]:
        s = ledger.within_factor(own)
        print(
            f"{family}: {s['jobs']} jobs, {s['jobs_within']} planned within {ledger.WITHIN:g}x of measured; "
            f"planned {s['planned_total_s']:.0f} s, measured {s['measured_total_s']:.0f} s"
        )
    if missing:
        print(f"{len(missing)} job(s) without a benchmark file left out (e.g. {missing[0]})")
    if args.disk_out:
        import os

        from xlt.core.prefetch import cache_dir

        disk = ledger.disk_rows(planned, args.root, os.environ.get("HF_HUB_CACHE") or cache_dir() / "hub")
        ledger.write_cost_table(disk, args.disk_out, ledger.DISK_COLUMNS)
        for row in disk:
            print(
                f"{row['family']}: disk planned {row['planned_disk_gib']:.4g} GiB, measured "
                f"{row['measured_disk_gib']:.4g} GiB ({row['measured_in']})"
            )
    print(f"wrote {args.out}")


VERBS = {
    "cost-table": Verb(
        "xlt.cost.commands:cost_table_verb",
        "Join every model job's Snakemake benchmark file with its planned cost into one CSV (and a plot)",
        _cost_table_arguments,
    ),
    "plan": Verb(
        "xlt.cost.commands:plan_verb",
        "Cost estimate of a config before it runs (prices its planned jobs, runs nothing): jobs, "
        "GPU/CPU-hours, peak memory, disk per family and in total",
        _plan_arguments,
    ),
    "calibrate": Verb(
        "xlt.cost.commands:calibrate_verb",
        "Measure this machine's training and inference throughput and per-step overheads and save them for `xlt plan`",
        _calibrate_arguments,
    ),
    "status": STATUS,
}
