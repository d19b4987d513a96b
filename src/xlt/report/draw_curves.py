"""`xlt plot-curves`: the training curves of a family's runs, one figure."""

from __future__ import annotations

from xlt.core.io import atomic_path
from xlt.report.curves import plot_curves, read_curves


def main(args):
    curves = read_curves(args.curves)
    with atomic_path(args.out) as tmp:
        plot_curves(curves, tmp, title=args.title)
