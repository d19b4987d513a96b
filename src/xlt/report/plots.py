"""Every family's figures by kind, for `xlt plot KIND`.

A family's `plots.py` maps kinds to functions `(table, out, title="") -> Figure`: each reads
the tidy table, writes one PNG and returns the figure, whose axes tests can read."""
from __future__ import annotations

import importlib

from xlt.core.settings import FAMILIES


def plot_functions() -> dict:
    kinds = {}
    for family in FAMILIES:
        for kind, function in importlib.import_module(f"xlt.families.{family}.plots").PLOTS.items():
            if kind in kinds:
                raise ValueError(f"plot kind {kind!r} is defined by two families")
            kinds[kind] = function
    return kinds
