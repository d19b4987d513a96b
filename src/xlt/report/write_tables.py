"""`xlt aggregate`: a family's metrics files as one tidy table (per-language rows) and its summary
table (rows over several languages), with bootstrap intervals where the runs kept their examples."""

from __future__ import annotations

from xlt.core.io import atomic_path
from xlt.core.tables import summary_path
from xlt.report.aggregate import aggregate, split_summary


def main(args):
    per_language, summary = split_summary(
        aggregate(args.metrics, resamples=args.resamples, seed=args.seed, confidence=args.confidence)
    )
    summary_out = args.summary or summary_path(args.out)
    for table, out in ((per_language, args.out), (summary, summary_out)):
        with atomic_path(out) as tmp:
            table.to_csv(tmp, index=False)
    print(
        f"{len(per_language)} rows -> {args.out}, {len(summary)} summary rows -> {summary_out} "
        f"(from {len(args.metrics)} files)"
    )
