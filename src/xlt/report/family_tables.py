"""What the one aggregate, plot and training-curves rule set (workflow/rules/report.smk) needs of a
family: read from its plan and from its optional hook module `report_section.py`, with defaults,
so that those rules name no family and a new family gets them without declaring anything.

A family's `report_section.py` may set `CATEGORY` (the report section its tables and plots are
filed under; default: the family's name) and `PLOT_PREFIX` (what its `xlt plot` names carry
before the plot kind of the file name; default none). Its plan may define `metrics_files(config)`,
the files its table is aggregated from when they are not the metrics files of its EVALUATIONS'
jobs, and `PLOT` with `PLOT_KINDS` (one figure per kind) and `CURVES` with `curve_files(config)`
(the training curves) where it draws them. Torch-free and cheap: the workflow imports it to parse.
"""

from __future__ import annotations

from pathlib import Path

from xlt.core import registry, settings
from xlt.core.family import summary_path

REPORT_SECTION = "report_section"  # the optional hook module in a family's folder
CAPTION = "caption.rst"  # a family's report caption, in its folder (optional)
CURVES_CAPTION = str(Path(__file__).with_name("curves.rst"))  # every family's training-curves figure
CHECKPOINTS_CAPTION = "checkpoints.rst"  # the caption of a family's checkpoint-choices table, in its folder


def category(family: str) -> str:
    """The report section the family's tables and plots are filed under."""
    return registry.hook(family, REPORT_SECTION, "CATEGORY", family)


def plot_prefix(family: str) -> str:
    """What the family's `xlt plot` names carry before the kind in its plot files' names."""
    return registry.hook(family, REPORT_SECTION, "PLOT_PREFIX", "")


def caption(family: str) -> str | None:
    """The family's report caption (caption.rst in its folder), or None when it has none."""
    path = registry.folder(family) / CAPTION
    return str(path) if path.is_file() else None


def aggregate_inputs(config: dict, family: str) -> list[str]:
    """The metrics files `xlt aggregate` makes the family's table of, in order: its plan's
    metrics_files(config) where it has one, else the metrics file of every job of its
    EVALUATIONS (LEDGER's template over the job key's wildcards), rule by rule."""
    if settings.family(config, family) is None:
        return []
    plan = registry.plan(family)
    if hasattr(plan, "metrics_files"):
        return plan.metrics_files(config)
    planned = plan.jobs(config)
    files = []
    for rule in plan.EVALUATIONS:
        wildcards, template = plan.LEDGER[rule]
        files += [template.format(**dict(zip(wildcards, key.split("/")))) for key in planned.get(rule, {})]
    return files


def draws_plots(family: str) -> bool:
    """Whether the family's plan declares per-kind figures of its table (PLOT, PLOT_KINDS)."""
    plan = registry.plan(family)
    return hasattr(plan, "PLOT") and hasattr(plan, "PLOT_KINDS")


def draws_curves(family: str) -> bool:
    """Whether the family's plan declares a training-curves figure (CURVES, curve_files)."""
    plan = registry.plan(family)
    return hasattr(plan, "CURVES") and hasattr(plan, "curve_files")


def curve_files(config: dict, family: str) -> list[str]:
    """The training curves the family's figure draws ([] for a disabled family)."""
    return registry.plan(family).curve_files(config) if settings.family(config, family) else []


def aggregates_checkpoints(family: str) -> bool:
    """Whether the family's runs choose checkpoints into a table of their own (CHECKPOINT_TABLE,
    checkpoint_files)."""
    plan = registry.plan(family)
    return hasattr(plan, "CHECKPOINT_TABLE") and hasattr(plan, "checkpoint_files")


def checkpoint_tables(family: str) -> tuple[str, str, str]:
    """The family's checkpoint-choices table, its summary (beside it) and its caption."""
    table = registry.plan(family).CHECKPOINT_TABLE
    return table, summary_path(table), str(registry.folder(family) / CHECKPOINTS_CAPTION)


def checkpoint_files(config: dict, family: str) -> list[str]:
    """The checkpoint choices the family's table is aggregated from ([] for a disabled family)."""
    return registry.plan(family).checkpoint_files(config) if settings.family(config, family) else []
