"""The plan of every config section that plans jobs: each family's (xlt.core.registry) and each
check section's (settings.CHECKS), which plans one job over the families' tables and so sits
in this layer, above the bottom layer that validates the config."""

from __future__ import annotations

from types import ModuleType

from xlt.core import settings
from xlt.report.positive_control import plan as positive_control

CHECK_PLANS = {positive_control.SECTION: positive_control}


def plan_module(name: str) -> ModuleType:
    """A family's plan (settings.plan_module) or a check section's."""
    return CHECK_PLANS[name] if name in CHECK_PLANS else settings.plan_module(name)
