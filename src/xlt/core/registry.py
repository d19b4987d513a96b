"""The experiment families: discovered from their folders, not listed anywhere.

A family is a package under `xlt.families` whose `plan.py` is a FamilyPlan
(xlt.core.family_plan). Families kept outside this package (a lab's own, a test's) live in
the folders the environment variable XLT_FAMILY_PATH names (separated by os.pathsep, each
holding family packages as src/xlt/families does): those folders join `xlt.families`'
search path, so `xlt.families.<name>.plan` imports them like the built-in ones, and every
job Snakemake starts inherits the variable. Order: a family comes after the families its plan
`READS` (alignment reads dual and freeze_depth), otherwise by name; every loop over the
families (checks, verbs, tables, `rule all`) follows it. Modules are found by name
(importlib), so this bottom-layer module imports no family.
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
import os
import pkgutil
from pathlib import Path
from types import ModuleType
from typing import Any

from xlt.core.errors import XltError
from xlt.core.family_plan import FamilyPlan, PositiveControl, missing_members

PACKAGE = "xlt.families"
PATH_VARIABLE = "XLT_FAMILY_PATH"
RULES = "rules.smk"  # a family's Snakemake rules, in its folder

# What a plan may leave out: the FamilyPlan members with a default (xlt.core.family_plan), filled
# in by plan() so that a family declares only what it has.
PLAN_DEFAULTS = {
    "READS": (),
    "KEEPS_MODEL": (),
    "BASELINE": None,
    "REFERENCE_AXIS": None,
    "DERIVED_AXES": frozenset(),
    "ORDERS": {},
    "PAPER_ONE_BASED": frozenset(),
    "PAPER_DOMAIN_MEANS": {},
}


def extra_folders() -> tuple[str, ...]:
    """The folders of XLT_FAMILY_PATH, resolved."""
    value = os.environ.get(PATH_VARIABLE, "")
    return tuple(str(Path(p).resolve()) for p in value.split(os.pathsep) if p)


def names() -> tuple[str, ...]:
    """Every registered family, in check order."""
    return _names(extra_folders())


@functools.cache
def _built_in() -> tuple[str, ...]:
    """The package's own folder(s), before any XLT_FAMILY_PATH folder joins them."""
    return tuple(importlib.import_module(PACKAGE).__path__)


@functools.cache
def _names(folders: tuple[str, ...]) -> tuple[str, ...]:
    built_in = _built_in()
    package = importlib.import_module(PACKAGE)
    for folder in folders:
        if not Path(folder).is_dir():
            raise XltError(
                f"{PATH_VARIABLE}: {folder} is not a folder; point it at a folder of family packages "
                f"(each <name>/ with __init__.py, plan.py, schema.yaml, commands.py)"
            )
        if folder not in package.__path__:
            package.__path__.append(folder)
    where: dict[str, str] = {}
    for entry in (*built_in, *folders):  # not a folder an earlier XLT_FAMILY_PATH named
        for found in pkgutil.iter_modules([entry]):
            if not found.ispkg or not (Path(entry) / found.name / "plan.py").is_file():
                continue
            if found.name in where:
                raise XltError(
                    f"family {found.name!r} is defined twice, in {where[found.name]} and {entry}; "
                    f"rename one (a family's name is its config section)"
                )
            where[found.name] = entry
    return _ordered({name: tuple(plan(name).READS) for name in sorted(where)})


def _ordered(reads: dict[str, tuple[str, ...]]) -> tuple[str, ...]:
    """Each family after those it reads, otherwise by name."""
    for name, needs in reads.items():
        unknown = [n for n in needs if n not in reads]
        if unknown:
            raise XltError(
                f"family {name}: plan.READS names {unknown}, which are no registered families ({', '.join(reads)})"
            )
    out: list[str] = []
    while len(out) < len(reads):
        ready = [n for n in reads if n not in out and all(r in out for r in reads[n])]
        if not ready:
            raise XltError(f"families read each other in a circle: {sorted(set(reads) - set(out))} (plan.READS)")
        out.append(ready[0])
    return tuple(out)


@functools.cache
def plan(name: str) -> FamilyPlan:
    """The family's plan module, checked against FamilyPlan, with PLAN_DEFAULTS filled in for
    the members it leaves out."""
    module = importlib.import_module(f"{PACKAGE}.{name}.plan")
    for member, default in PLAN_DEFAULTS.items():
        if not hasattr(module, member):
            setattr(module, member, default)
    missing = missing_members(module)
    if missing:
        raise XltError(
            f"family {name}: {module.__file__} lacks {', '.join(missing)}; "
            f"see xlt.core.family_plan.FamilyPlan for what a family's plan declares"
        )
    return module


def folder(name: str) -> Path:
    """The family's package folder (schema.yaml, caption.rst, ...)."""
    return Path(plan(name).__file__).parent


def part(name: str, module: str) -> ModuleType | None:
    """The family's optional module `module` (plots, positive_control), or None when it has none."""
    full = f"{PACKAGE}.{name}.{module}"
    return importlib.import_module(full) if importlib.util.find_spec(full) is not None else None


def positive_control(name: str) -> PositiveControl | None:
    """The family's positive-control checks, or None when it has none."""
    module = part(name, "positive_control")
    if module is not None and (missing := missing_members(module, PositiveControl)):
        raise XltError(
            f"family {name}: {module.__file__} lacks {', '.join(missing)}; see xlt.core.family_plan.PositiveControl"
        )
    return module


def hook(name: str, module: str, member: str, default: Any = None) -> Any:
    """`member` of the family's optional hook module `module` (e.g. rehearsal.STAND_IN), or
    `default` when the family has no such module or the module no such member: a family
    declares only the hooks it needs, and the shared code that asks works without them."""
    found = part(name, module)
    return getattr(found, member, default) if found is not None else default


def rules_file(name: str) -> str:
    """The family's Snakemake rules (rules.smk in its folder), which the Snakefile includes."""
    path = folder(name) / RULES
    if not path.is_file():
        raise XltError(
            f"family {name}: {path} is missing; a family's folder holds its Snakemake rules "
            f"(wiring only, as each built-in family's rules.smk is)"
        )
    return str(path)
