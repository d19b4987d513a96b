"""`xlt compare`: a family's paired tests (neighbouring sweep values, and each against the baseline)
and its spread over seeds, as two CSV tables."""

from __future__ import annotations

from xlt.analysis.compare import paired_tests, read_runs, read_training, seeds_table
from xlt.core.io import atomic_path
from xlt.core.tables import read_table


def main(args):
    tests = paired_tests(
        read_runs(args.metrics),
        args.family,
        args.resamples,
        args.seed,
        args.confidence,
        args.alpha,
        training=read_training(args.training),
    )
    seeds = seeds_table(read_table(args.table))
    for table, out in ((tests, args.out_tests), (seeds, args.out_seeds)):
        with atomic_path(out) as tmp:
            table.to_csv(tmp, index=False)
    print(
        f"{args.family}: {len(tests)} paired comparisons, {int(tests['significant'].sum())} significant after Holm "
        f"-> {args.out_tests}; {len(seeds)} multi-seed settings -> {args.out_seeds}"
    )
