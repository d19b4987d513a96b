"""The family contract: a family is one `Family`, every member it must or may provide, checked once
when it registers (xlt.core.registry.family builds it from the family's folder).

Required: `plan` (plan.py, a FamilyPlan: xlt.core.family_plan), `schema` (schema.yaml, its config
section with `enabled` and `resources`), `verbs` (commands.py's VERBS). Optional, each with its
default: the plan members of PLAN_DEFAULTS, `summary` (plan.SUMMARY), `group` (commands.py's GROUP,
the verbs' heading of `xlt --help`), `cost` (the plan's cost hooks, xlt.core.family_plan.COST_HOOKS),
`rehearsal`, `prefetch`, `report_section` (hook modules of those names, HOOKS, read and checked
when first asked for: they may import pandas, which `xlt --help` does not). `plots.py` and
`positive_control.py` are optional too (the report layer asks for them: xlt.core.registry.part,
registry.positive_control). A missing or wrong member is one line that names the family, the
member and the section of docs/architecture.md that says what it should be (`ContractError`),
raised before any model loads; the cli then lists the other families' verbs without it.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from types import MappingProxyType, ModuleType, SimpleNamespace
from typing import Any, Callable, Mapping

from xlt.core import family_plan
from xlt.core.errors import XltError
from xlt.core.verbs import Verb, VerbGroup, family_group

SECTION = "docs/architecture.md, 'The family contract'"

# The plan members a family may leave out, with what they default to (empty or None). SUMMARY's
# default is beside its TABLE: summary_path().
PLAN_DEFAULTS = MappingProxyType(
    {
        "READS": (),
        "KEEPS_MODEL": (),
        "BASELINE": None,
        "REFERENCE_AXIS": None,
        "DERIVED_AXES": frozenset(),
        "ORDERS": {},
        "PAPER_ONE_BASED": frozenset(),
        "PAPER_DOMAIN_MEANS": {},
    }
)

# Config keys the shared code reads of every family's section: `enabled` (xlt.core.settings.family),
# `resources` (a model-loading job's threads and resources, workflow job_resources). `training`
# is the family's own to declare when it trains (xlt.core.settings.training asks for it).
SCHEMA_KEYS = MappingProxyType(
    {
        "enabled": "enabled: {type: boolean, default: true}",
        "resources": 'resources: {$ref: "#/$defs/resources", default: {}}',
    }
)
TRAINING_KEY = 'training: {$ref: "#/$defs/training", default: {}}'


# The optional hook modules of a family's folder: member -> its default where the module or the
# member is absent (a callable's default returns None: the shared code's own behaviour).
HOOKS: Mapping[str, Mapping[str, Any]] = MappingProxyType(
    {
        # xlt.report.family_tables: the report's category (None: the family's name), a plot-name prefix
        "report_section": {"CATEGORY": None, "PLOT_PREFIX": ""},
        # xlt.rehearse: derive(section, paper, cap, steps), languages(config), required_rows(config),
        # write_stand_ins(config, datasets_cache, stand_ins); None: only `training` capped, nothing more
        "rehearsal": {"derive": None, "languages": None, "required_rows": None, "write_stand_ins": None},
        # xlt.core.prefetch: hub_datasets(config), hub data outside `datasets:`
        "prefetch": {"hub_datasets": None},
    }
)


class ContractError(XltError):
    """A family that does not meet its contract: one line naming the family, the member and the fix."""

    def __init__(self, family: str, member: str, problem: str, fix: str):
        super().__init__(f"family {family}: {member} {problem}; {fix} (see {SECTION})")
        self.family, self.member = family, member


def summary_path(table: str) -> str:
    """The summary table (`xlt aggregate --summary`) of a family whose plan declares no SUMMARY:
    beside its TABLE, `<table>_summary.csv`."""
    return f"{table.removesuffix('.csv')}_summary.csv"


class PlanView:
    """A family's plan module with PLAN_DEFAULTS and SUMMARY's default for what it leaves out (read
    only: the module itself is left as its author wrote it)."""

    def __init__(self, name: str, module: ModuleType, defaults: Mapping[str, Any]):
        self._name, self._module, self._defaults = name, module, defaults

    def __getattr__(self, name: str) -> Any:
        try:
            return getattr(self._module, name)
        except AttributeError:
            if name in self._defaults:
                return self._defaults[name]
            raise

    def __repr__(self) -> str:
        return f"<plan of family {self._name}: {self._module.__file__}>"


@dataclass(frozen=True)
class Family:
    """One registered family: every member of its contract, defaults filled in. The hook modules
    are read and checked when first asked for (adapt's rehearsal reads the published numbers with
    pandas, which `xlt --help` does not import)."""

    name: str
    plan: Any  # a PlanView of its plan.py (a FamilyPlan)
    schema: dict
    verbs: Mapping[str, Verb]
    group: VerbGroup
    summary: str
    cost: SimpleNamespace  # every cost hook of family_plan.COST_HOOKS: the plan's or the default
    load: Callable[[str], ModuleType | None]  # the family's optional module of a name, or None

    @functools.cached_property
    def rehearsal(self) -> SimpleNamespace:
        return _hook_module(self.name, "rehearsal", self.load("rehearsal"))

    @functools.cached_property
    def prefetch(self) -> SimpleNamespace:
        return _hook_module(self.name, "prefetch", self.load("prefetch"))

    @functools.cached_property
    def report_section(self) -> SimpleNamespace:
        return _hook_module(self.name, "report_section", self.load("report_section"))


def build(
    name: str, plan: ModuleType, schema: Any, commands: ModuleType | None, load: Callable[[str], ModuleType | None]
) -> Family:
    """The family `name` from its modules and its parsed schema.yaml, every member checked (the
    hook modules, which `load` reads, when first asked for)."""
    view = _plan(name, plan)
    _schema(name, schema)
    verbs, group = _commands(name, commands, schema)
    cost = family_plan.default_costs()
    for hook in family_plan.COST_HOOKS:
        own = _callable(name, "plan", plan, hook, None)
        if own is not None:
            setattr(cost, hook, own)
    return Family(name, view, schema, verbs, group, view.SUMMARY, cost, load)


def _plan(name: str, module: ModuleType) -> PlanView:
    missing = family_plan.missing_members(module)
    missing = [member for member in missing if member not in PLAN_DEFAULTS]
    if missing:
        raise ContractError(
            name, f"plan.{missing[0]}", "is missing", f"declare {', '.join(missing)} in {module.__file__}"
        )
    if module.FAMILY != name:
        raise ContractError(name, "plan.FAMILY", f"is {module.FAMILY!r}", f'set FAMILY = "{name}", its folder\'s name')
    for member in ("check", "runs", "jobs", "targets"):
        _callable(name, "plan", module, member, None)
    for member in ("TABLE", "SUMMARY"):
        path = getattr(module, member, ".csv")
        if not isinstance(path, str) or not path.endswith(".csv"):
            raise ContractError(name, f"plan.{member}", "is no CSV path", f"e.g. results/tables/{name}.csv")
    if not isinstance(module.LEDGER, Mapping):
        raise ContractError(name, "plan.LEDGER", "is no mapping", "map each model-loading rule to (wildcards, metrics)")
    return PlanView(name, module, {**PLAN_DEFAULTS, "SUMMARY": summary_path(module.TABLE)})


def _schema(name: str, schema: Any) -> None:
    properties = schema.get("properties") if isinstance(schema, dict) else None
    if not isinstance(properties, dict):
        raise ContractError(name, "schema.yaml", "has no `properties:`", "declare its config section's keys there")
    for key, line in SCHEMA_KEYS.items():
        if key not in properties:
            raise ContractError(name, f"schema.yaml `{key}`", "is missing", f"add `{line}` under properties:")


def _commands(name: str, commands: ModuleType | None, schema: dict) -> tuple[Mapping[str, Verb], VerbGroup]:
    if commands is None:
        raise ContractError(name, "commands.py", "is missing", "declare VERBS, the verbs its rules call, there")
    verbs = getattr(commands, "VERBS", None)
    if not isinstance(verbs, Mapping) or not all(isinstance(v, Verb) for v in verbs.values()):
        raise ContractError(
            name, "commands.VERBS", "is missing or holds no Verbs", "map each verb's name to an xlt.core.verbs.Verb"
        )
    group = getattr(commands, "GROUP", None)
    if group is None:  # the default heading: the family's name and its schema's description
        return verbs, family_group(name, str(schema.get("description", name)).split(";")[0])
    if not isinstance(group, VerbGroup):
        raise ContractError(
            name,
            "commands.GROUP",
            f"is {type(group).__name__}, not a VerbGroup",
            "leave it out (the heading is the family's name) or give xlt.core.verbs.family_group(name, purpose)",
        )
    return verbs, group


def _callable(name: str, where: str, module: ModuleType, member: str, default: Any) -> Any:
    value = getattr(module, member, default)
    if value is not None and not callable(value):
        raise ContractError(name, f"{where}.{member}", "is not a function", "define it with def")
    return value


def _hook_module(name: str, module_name: str, module: ModuleType | None) -> SimpleNamespace:
    members = {}
    for member, default in HOOKS[module_name].items():
        value = getattr(module, member, default) if module is not None else default
        if member.islower() and value is not None and not callable(value):
            raise ContractError(name, f"{module_name}.{member}", "is not a function", "define it with def")
        if member.isupper() and value is not None and not isinstance(value, str):
            raise ContractError(name, f"{module_name}.{member}", "is no string", "give it as text")
        members[member] = value
    extra = {k: v for k, v in vars(module).items() if not k.startswith("_")} if module is not None else {}
    return SimpleNamespace(**{**extra, **members})


def own_training(config: dict, name: str) -> dict:
    """The family's `training` overrides (xlt.core.settings.training): a family that trains declares
    the key in its schema, with its default."""
    if "training" not in config[name]:
        raise ContractError(name, "schema.yaml `training`", "is missing", f"add `{TRAINING_KEY}` under properties:")
    return config[name]["training"]
