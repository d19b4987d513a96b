"""`xlt cost-table`: every model job's Snakemake benchmark file joined with its planned cost
(xlt.cost.ledger), as a CSV and a plot. Declared in xlt.cost.commands' VERBS (flags there)."""

from __future__ import annotations

import os

from xlt.core import settings
from xlt.core.errors import XltError
from xlt.core.io import atomic_path
from xlt.core.prefetch import cache_dir
from xlt.cost import ledger, profile, sweep


def main(args):
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
        disk = ledger.disk_rows(planned, args.root, os.environ.get("HF_HUB_CACHE") or cache_dir() / "hub")
        ledger.write_cost_table(disk, args.disk_out, ledger.DISK_COLUMNS)
        for row in disk:
            print(
                f"{row['family']}: disk planned {row['planned_disk_gib']:.4g} GiB, measured "
                f"{row['measured_disk_gib']:.4g} GiB ({row['measured_in']})"
            )
    print(f"wrote {args.out}")
