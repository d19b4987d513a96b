"""Every family's figures by kind, for `xlt plot KIND`.

A family's `plots.py` (optional) maps kinds to functions `(table, out, title="") -> Figure`: each reads
the tidy table, writes one PNG and returns the figure, whose axes tests can read."""

from __future__ import annotations

from xlt.core import registry


def plot_functions() -> dict:
    kinds = {}
    for family in registry.names():
        plots = registry.part(family, "plots")  # a family may draw nothing of its own
        for kind, function in (plots.PLOTS if plots is not None else {}).items():
            if kind in kinds:
                raise ValueError(f"plot kind {kind!r} is defined by two families")
            kinds[kind] = function
    return kinds
