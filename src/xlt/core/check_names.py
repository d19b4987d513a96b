"""The positive control's checks by name: every registered family's CHECK_NAMES (its
positive_control.py, xlt.core.family_plan.PositiveControl), and how `positive_control.known_failures`
names one. Torch- and pandas-free: the config check (xlt.core.settings) reads them."""

from __future__ import annotations

from xlt.core import registry


def check_names() -> dict[str, tuple[str, ...]]:
    """family -> the names of its checks, in report order (also the rows of a disabled family):
    every registered family with a positive_control.py, in the registry's order."""
    return {
        name: tuple(module.CHECK_NAMES)
        for name in registry.names()
        if (module := registry.positive_control(name)) is not None
    }


def check_key(family: str, check: str) -> str:
    """How `positive_control.known_failures` names a check."""
    return f"{family}: {check}"
