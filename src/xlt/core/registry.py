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

import yaml

from xlt.core import family as contract
from xlt.core.errors import XltError
from xlt.core.family import ContractError, Family
from xlt.core.family_plan import FamilyPlan, PositiveControl, missing_members

PACKAGE = "xlt.families"
PATH_VARIABLE = "XLT_FAMILY_PATH"
RULES = "rules.smk"  # a family's Snakemake rules, in its folder
SCHEMA = "schema.yaml"  # its config section
PLAN_DEFAULTS = contract.PLAN_DEFAULTS  # what a plan may leave out (xlt.core.family)


def extra_folders() -> tuple[str, ...]:
    """The folders of XLT_FAMILY_PATH, resolved."""
    value = os.environ.get(PATH_VARIABLE, "")
    return tuple(str(Path(p).resolve()) for p in value.split(os.pathsep) if p)


def names() -> tuple[str, ...]:
    """Every registered family, in check order; a family that does not meet its contract stops
    here with its one-line ContractError."""
    found, problems = _registered(extra_folders())
    if problems:
        raise problems[0]
    return found


def usable() -> tuple[tuple[str, ...], tuple[ContractError, ...]]:
    """The families that meet their contract, in check order, and the errors of those that do
    not: `xlt --help` lists the verbs of the former and one line for each of the latter."""
    return _registered(extra_folders())


@functools.cache
def _built_in() -> tuple[str, ...]:
    """The package's own folder(s), before any XLT_FAMILY_PATH folder joins them."""
    return tuple(importlib.import_module(PACKAGE).__path__)


@functools.cache
def _registered(folders: tuple[str, ...]) -> tuple[tuple[str, ...], tuple[ContractError, ...]]:
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
    reads, problems = {}, []
    for name in sorted(where):  # each checked once, here (xlt.core.family)
        try:
            reads[name] = tuple(family(name).plan.READS)
        except ContractError as err:
            problems.append(err)
    for name, needs in list(reads.items()):  # a family reading one that does not register cannot plan
        broken = [err.family for err in problems if err.family in needs]
        if broken:
            del reads[name]
            problems.append(
                ContractError(name, "plan.READS", f"names {broken[0]}, which does not register", "fix that one first")
            )
    return _ordered(reads), tuple(problems)


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
def family(name: str) -> Family:
    """The family `name`: every member of its contract (xlt.core.family), read from its folder
    and checked, or a one-line ContractError naming the member and the fix."""
    # a family's name is its package (xlt.families.<name>), its config section, a part of its rule
    # names and a folder of results/: a lower-case identifier that no shared section already is
    if not name.isidentifier() or name != name.lower():
        raise ContractError(name, "name", "is no lower-case Python identifier", "rename its folder, e.g. my_family")
    if name in shared_sections():
        raise ContractError(
            name, "name", "is a section of the shared config (core/schema.yaml)", "rename its folder, e.g. my_family"
        )
    module = _import(name, "plan")
    if module is None:
        raise ContractError(name, "plan.py", "is missing", "its plan (a FamilyPlan) makes the folder a family")
    schema_file = Path(module.__file__).parent / SCHEMA
    if not schema_file.is_file():
        raise ContractError(name, SCHEMA, "is missing", "declare its config section, every key with its default")
    try:
        schema = yaml.safe_load(schema_file.read_text(encoding="utf-8"))
    except yaml.YAMLError as err:
        raise ContractError(name, SCHEMA, f"is no valid YAML ({err})".replace("\n", " "), "fix its syntax") from None
    return contract.build(name, module, schema, _import(name, "commands"), functools.partial(_import, name))


@functools.cache
def shared_sections() -> frozenset[str]:
    """The config's shared top-level keys (core/schema.yaml), which no family may be named."""
    schema = yaml.safe_load((Path(__file__).parent / SCHEMA).read_text(encoding="utf-8"))
    return frozenset(schema["properties"])


def _import(name: str, module: str) -> ModuleType | None:
    """The family's module `module`, or None when it has none; one that fails to import is the
    family's ContractError (a `xlt --help` that lists the other families)."""
    try:
        return part(name, module)
    except Exception as err:  # any error of the author's module: reported as one line, by name
        raise ContractError(name, f"{module}.py", f"does not import ({type(err).__name__}: {err})", "fix it") from err


def plan(name: str) -> FamilyPlan:
    """The family's plan (plan.py), with the defaults of the members it leaves out (xlt.core.family)."""
    return family(name).plan


def clear() -> None:
    """Forget every family read so far (a test that registers a family folder and removes it)."""
    family.cache_clear()
    _registered.cache_clear()


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
    """`member` of the family's optional hook module `module` (xlt.core.family.HOOKS, e.g.
    rehearsal.derive), or `default` when the family declares none: a family declares only the
    hooks it needs, and the shared code that asks works without them."""
    if module not in contract.HOOKS:
        raise XltError(f"{module!r} is no hook module of a family; the hook modules are {', '.join(contract.HOOKS)}")
    value = getattr(getattr(family(name), module), member, None)
    return default if value is None else value


def rules_file(name: str) -> str:
    """The family's Snakemake rules (rules.smk in its folder), which the Snakefile includes."""
    path = folder(name) / RULES
    if not path.is_file():
        raise XltError(
            f"family {name}: {path} is missing; a family's folder holds its Snakemake rules "
            f"(wiring only, as each built-in family's rules.smk is)"
        )
    return str(path)
