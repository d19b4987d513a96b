"""Every family's table-side rules on the smallest sweeps its schema accepts (issue 49): the
demo config with each sweep axis cut to one value (one language, one seed), each optional key
dropped, each "also run" switch off (no untrained baseline, no teacher row), and each list of
the demo at its last value alone; the training budget (dual's sentences_seen) is left empty
beyond the first variant, as a sweep without declared data sizes plans it. For each, synthetic
metrics files (tests/helpers/synthetic_metrics.py: the records and per-example sets every
evaluation job writes, made-up values, no model) go through what the workflow runs on them:
`xlt aggregate`, the family's summary tables, every figure its plan targets, the training
curves, `xlt compare` and `xlt paper-delta`. Every table column must have its type in
xlt.core.tables.COLUMN_TYPES. Both pandas string modes where the installed pandas still has the
switch (`future.infer_string`). Not run here: the positive control (its checks need the demo
world's prepared data files and effects that made-up values do not show)."""

from __future__ import annotations

import copy
import re
import shlex
from pathlib import Path

import pytest
import yaml
from helpers.synthetic_metrics import RECORDS, write_metrics

from xlt.cli import main
from xlt.core import registry, settings
from xlt.core.tables import COLUMN_TYPES, read_table
from xlt.report import family_tables, paper

REPO = Path(__file__).resolve().parents[2]
FAMILIES = ("freeze_depth", "sbert", "adapt", "monox", "dual", "alignment")
# axes the schema also takes as the word `all`: the model's depths -1 .. L, of which -1 comes first
ALL = {"depths": [-1]}


def demo_config() -> dict:
    return yaml.safe_load((REPO / "config.yaml").read_text())


def schema_of(family: str) -> dict:
    return yaml.safe_load((registry.folder(family) / "schema.yaml").read_text())


def cut(value, pick):
    """Every list in a family's section cut to one value (`pick` chooses it), recursively."""
    if isinstance(value, list):
        return [cut(pick(value), pick)] if value else value
    if isinstance(value, dict):
        return {k: ALL[k] if v == "all" and k in ALL else cut(v, pick) for k, v in value.items()}
    return value


def optional_keys(schema: dict) -> list[str]:
    """Keys of a section neither required nor defaulted: a sweep may leave them out."""
    required = set(schema.get("required", [])) | set((schema.get("else") or {}).get("required", []))
    return [k for k, v in schema.get("properties", {}).items() if k not in required and "default" not in v]


def switches(schema: dict) -> list[tuple[str, ...]]:
    """Boolean keys that default to true (an untrained baseline, the teacher scored), as paths."""
    found = []
    for key, value in schema.get("properties", {}).items():
        if key == "enabled":
            continue
        if value.get("type") == "boolean" and value.get("default") is True:
            found.append((key,))
        found += [(key, *inner) for inner in switches(value)] if value.get("type") == "object" else []
    return found


def _set(section: dict, path: tuple, value) -> None:
    for key in path[:-1]:
        section = section[key] if isinstance(section, list) else section.setdefault(key, {})
    section[path[-1]] = value


def variants() -> dict[str, dict]:
    """name -> raw config: the demo's sections cut to one value of every axis, and from there
    without the optional keys, with the switches off, or with one axis at another value."""
    raw = demo_config()
    first = copy.deepcopy(raw)
    for family in FAMILIES:
        first[family] = cut(raw[family], lambda values: values[0])
    out = {"first": first}
    bare = copy.deepcopy(first)
    for family in FAMILIES:
        for key in optional_keys(schema_of(family)):
            bare[family].pop(key, None)
    out["optional-dropped"] = bare
    off = copy.deepcopy(bare)
    for family in FAMILIES:
        for path in switches(schema_of(family)):
            _set(off[family], path, False)
    out["switches-off"] = off
    # each axis of several values at its last one, the others at their first
    for family in FAMILIES:
        for path, values in lists(raw[family]):
            other = copy.deepcopy(first)
            _set(other[family], path, [cut(values[-1], lambda values: values[0])])
            out[f"{family}.{'.'.join(map(str, path))}={values[-1]}"] = other
    return out


def lists(section, path=()) -> list[tuple[tuple, list]]:
    """(path, values) of every list of several values in a section (in a task of a list, too)."""
    found = []
    items = section.items() if isinstance(section, dict) else enumerate(section) if isinstance(section, list) else []
    for key, value in items:
        if isinstance(value, list) and len(value) > 1:
            found.append(((*path, key), value))
        if isinstance(value, (dict, list)):
            found += lists(value[:1] if isinstance(value, list) else value, (*path, key))
    return found


VARIANTS = variants()


def changed(name: str, family: str) -> bool:
    """Whether variant `name` gives `family` a sweep the first variant does not (its section or
    a section its plan reads): the other families' rules ran on the first already."""
    if name == "first":
        return True
    plan = registry.plan(family)
    return any(VARIANTS[name][f] != VARIANTS["first"][f] for f in (family, *plan.READS))


def _run(*argv) -> None:
    code = main([str(a) for a in argv])
    assert code == 0, f"xlt {' '.join(map(str, argv))} exited {code}"


def _plot_kinds(config: dict, family: str) -> list[str]:
    plan = registry.plan(family)
    if not family_tables.draws_plots(family):
        return []
    pattern = re.compile(re.escape(plan.PLOT).replace(re.escape("{kind}"), "(.+)") + "$")
    return [m.group(1) for t in plan.targets(config) if (m := pattern.match(t)) and m.group(1) in plan.PLOT_KINDS]


def table_side(config: dict, family: str, emptied=()) -> list[str]:
    """Runs the family's table-side rules as the workflow does; returns the files they wrote."""
    plan = registry.plan(family)
    inputs = family_tables.aggregate_inputs(config, family)
    write_metrics(config, family, inputs, emptied)
    _run("aggregate", *inputs, "--out", plan.TABLE, "--summary", plan.SUMMARY, "--resamples", 50)
    written = [plan.TABLE, plan.SUMMARY]
    table = read_table(plan.TABLE)
    untyped = sorted(set(table.columns) - set(COLUMN_TYPES))
    assert not untyped, f"{family}: columns without a type in xlt.core.tables.COLUMN_TYPES: {untyped}"
    prefix = family_tables.plot_prefix(family)
    for kind in _plot_kinds(config, family):
        out = plan.PLOT.format(kind=kind)
        _run("plot", f"{prefix}{kind}", "--table", plan.TABLE, "--out", out)
        written.append(out)
    targets = plan.targets(config)
    if family_tables.draws_curves(family) and plan.CURVES in targets:  # from each training run's curve CSV
        curves = family_tables.curve_files(config, family)
        for path in curves:
            Path(path).parent.mkdir(parents=True, exist_ok=True)
            Path(path).write_text("step,loss,lr,dev_score\n1,2.0,0.001,\n2,1.5,0.0005,0.6\n")
        _run("plot-curves", *curves, "--out", plan.CURVES, "--title", f"Training curves: {family}")
        written.append(plan.CURVES)
    if getattr(plan, "FINAL_TABLE", None) in targets:  # adapt's summary tables
        _run("adapt-summary", "--table", plan.TABLE, "--out", plan.FINAL_TABLE, "--word-nll-out", plan.WORD_NLL_TABLE)
        written += [plan.FINAL_TABLE, plan.WORD_NLL_TABLE]
    if getattr(plan, "ACCURACY_CSV", None) in targets:  # monox's accuracy table
        outputs = (plan.ACCURACY_CSV, plan.ACCURACY_MARKDOWN, plan.ACCURACY_HTML)
        _run("monox-table", "--table", plan.TABLE, "--csv", outputs[0], "--markdown", outputs[1], "--html", outputs[2])
        written += list(outputs)
    if hasattr(plan, "GAP_PLOT"):  # alignment's cosine gap, one figure per analysed model
        pattern = re.compile(re.escape(plan.GAP_PLOT).replace(re.escape("{run_id}"), "(.+)") + "$")
        for target in targets:
            if m := pattern.match(target):
                _run("align-gap-plot", "--table", plan.TABLE, "--run-id", m.group(1), "--out", target)
                written.append(target)
    from xlt.analysis import targets as statistics

    if family in statistics.families(config):
        tests, seeds = (path.format(family=family) for path in (statistics.TESTS, statistics.SEEDS))
        metrics = statistics.evaluation_files(config, family)
        _run("compare", *metrics, "--family", family, "--table", plan.TABLE, "--out-tests", tests, "--out-seeds", seeds)
        written += [tests, seeds]
    return written


def test_the_variants_are_the_smallest_sweeps():
    """Every family is covered; the first variant has no list of several values left in any
    family's section, every variant validates and plans runs of every family."""
    assert set(FAMILIES) == set(registry.names())
    for family in FAMILIES:
        assert not lists(VARIANTS["first"][family]), family
    for name, raw in VARIANTS.items():
        config = settings.validate(copy.deepcopy(raw))
        assert all(registry.plan(f).runs(config) for f in FAMILIES), name
    assert {"first", "optional-dropped", "switches-off"} <= set(VARIANTS)
    assert "dual.objectives=mse_distill" in VARIANTS  # the sweep: one distilled objective
    assert set(RECORDS) == set(FAMILIES)


@pytest.mark.parametrize("name", list(VARIANTS))
def test_table_side_rules_on_any_config(name, string_mode, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    config = settings.validate(copy.deepcopy(VARIANTS[name]))
    settings.require_runs(config)
    families = [f for f in FAMILIES if settings.family(config, f) and changed(name, f)]
    written = []
    for one in families:
        budget = getattr(registry.plan(one), "BUDGET_AXIS", None)
        # a sweep without declared data sizes plans no budget (the dual sweep): every
        # variant but the first leaves it empty
        emptied = (budget,) if budget and name != "first" else ()
        written += table_side(config, one, emptied)
    tables = {f: path for f, path in paper.family_tables(config).items() if f in families}
    if tables:
        args = [f"{f}={path}" for f, path in tables.items()] + shlex.split(paper.config_args(config))
        _run("paper-delta", *args, "--out-table", paper.TABLE, "--out-plot", paper.PLOT)
        written += [paper.TABLE, paper.PLOT]
    missing = [path for path in written if not Path(path).is_file()]
    assert not missing, missing
