"""Which metrics file each model-loading job writes: the families' LEDGER (rule -> the
wildcards of its job key, and the metrics file's template) with the shared jobs'. The paired
tests (xlt.analysis.targets) read those files and the cost ledger (xlt.cost.ledger) the
manifest beside each, so both name them here."""

from __future__ import annotations

from xlt.core import registry
from xlt.core.errors import XltError

SHARED = {"build_demo_model": (("model",), None)}  # the shared jobs (xlt.core.plan.shared_jobs) that load a model


def ledger() -> dict[str, dict[str, tuple[tuple[str, ...], str | None]]]:
    """family -> rule -> (the wildcards of its job key, the metrics file whose manifest entry
    describes the job, or None): every rule that loads a model, each of which carries
    `benchmark: benchmark_pattern(family, rule, wildcards)` in its rules file. "shared" holds
    the demo model; each registered family declares its own (its plan's LEDGER)."""
    return {"shared": SHARED, **{name: dict(registry.plan(name).LEDGER) for name in registry.names()}}


def metrics_file(family: str, rule: str, key: str) -> str | None:
    """The metrics JSON the job writes (its manifest.json lies beside it), or None."""
    wildcards, template = ledger()[family][rule]
    if template is None:
        return None
    values = key.split("/")
    if len(values) != len(wildcards):
        raise XltError(f"job key {key!r} of rule {rule} does not split into its wildcards {wildcards}")
    return template.format(**dict(zip(wildcards, values)))
