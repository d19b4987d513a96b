"""`Work`: one planned job on its way to its cost (xlt.cost.estimate.job_cost): its config, family,
spec and profile, and what each stage of the estimate has read off them so far."""

from __future__ import annotations

from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any, Callable

from xlt.core import registry
from xlt.core.family_plan import default_costs
from xlt.core.job_spec import JobSpec


@dataclass
class Work:
    """One job on its way to its JobCost: what job_cost's stages read off its spec and its family's
    cost hooks (xlt.core.family_plan), each stage adding what the next ones read."""

    config: dict
    family: str
    rule: str
    run_id: str
    spec: JobSpec
    profile: dict
    values: dict = field(default_factory=dict)

    def hook(self, name: str) -> Callable:
        return getattr(costs(self.family), name)

    def __getattr__(self, name: str) -> Any:
        try:
            return self.__dict__["values"][name]
        except KeyError:
            raise AttributeError(name) from None

    def set(self, **values: Any) -> None:
        self.values.update(values)


def costs(family: str) -> SimpleNamespace:
    """The cost hooks that price `family`'s jobs: its contract's (xlt.core.family.Family.cost), the
    defaults for the shared jobs."""
    return registry.family(family).cost if family in registry.names() else default_costs()
