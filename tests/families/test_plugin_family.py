"""A family is a plug-in: a folder outside the package, named in XLT_FAMILY_PATH, joins the config,
the cli, `xlt plan`, the workflow, the paired tests, the positive control, the published numbers
and the cost ledger, with no edit anywhere else (the workflow is the repository's, copied as is).

The toy family (tests/families/plugin/toyfam) calls a fixed set of labels with a biased coin.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml
from helpers.workflow_runs import job_counts, local_env, snakemake, workflow_copy

from xlt.core import registry, settings
from xlt.core.errors import XltError

PLUGIN = Path(__file__).resolve().parent / "plugin"
BUILT_IN = ("adapt", "alignment", "dual", "freeze_depth", "monox", "sbert")
# the toy family only; the schema wants a model and a dataset, which nothing here loads
CONFIG = {
    "report": {"title": "toy plug-in family"},
    "models": {"unused": {"source": "local", "path": "models/unused", "layers": 2}},
    "datasets": {
        "unused": {
            "source": "demo",
            "task": "nli",
            "languages": ["en"],
            "splits": ["train", "dev", "test"],
            "sizes": {"train": 16, "dev": 8, "test": 8},
        }
    },
    "positive_control": {"enabled": True},
    "toyfam": {"biases": [0.0, 0.5], "seeds": [1, 2]},
}


@pytest.fixture
def toy(tmp_path, monkeypatch):
    """The toy family copied to a temporary folder that XLT_FAMILY_PATH names."""
    families = tmp_path / "families"
    shutil.copytree(PLUGIN / "toyfam", families / "toyfam")
    monkeypatch.setenv(registry.PATH_VARIABLE, str(families))
    yield families
    forget(families)


def forget(families: Path) -> None:
    """Drop what registering `families` left in this process (its modules, the search path)."""
    import xlt.families

    for name in [m for m in sys.modules if m.startswith("xlt.families.toyfam")]:
        del sys.modules[name]
    registry.plan.cache_clear()
    if str(families) in xlt.families.__path__:
        xlt.families.__path__.remove(str(families))


def write_config(folder: Path) -> Path:
    path = folder / "toy.yaml"
    path.write_text(yaml.safe_dump(CONFIG, sort_keys=False))
    return path


def xlt(*args: str, cwd: Path) -> str:
    proc = subprocess.run(
        [sys.executable, "-m", "xlt.cli", *args], cwd=cwd, env=local_env(), capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout


def test_the_built_in_families_are_found_in_their_folders_each_after_those_it_reads():
    names = registry.names()
    assert set(BUILT_IN) <= set(names)
    assert names.index("alignment") > max(names.index("dual"), names.index("freeze_depth"))
    assert settings.FAMILIES == names


def test_a_family_folder_joins_the_registry_the_schema_and_the_verbs(toy):
    assert registry.names()[-1] == "toyfam" and registry.rules_file("toyfam") == str(toy / "toyfam" / "rules.smk")
    config = settings.validate(yaml.safe_load(yaml.safe_dump(CONFIG)))
    assert config["toyfam"]["examples"] == 40  # the default of its own schema.yaml
    assert config["positive_control"]["toyfam"] == {"min_accuracy": 0.99}  # its positive_control.yaml
    from xlt.cli import verbs

    assert "toy-eval" in verbs()


def test_a_family_without_a_plan_declaration_is_refused_by_name(tmp_path, monkeypatch):
    family = tmp_path / "families" / "toyfam_without_ledger"
    shutil.copytree(PLUGIN / "toyfam", family)
    plan = family / "plan.py"
    plan.write_text(plan.read_text().replace('LEDGER = {"toy_eval": (("run_id",), METRICS)}\n', ""))
    monkeypatch.setenv(registry.PATH_VARIABLE, str(family.parent))
    with pytest.raises(XltError, match="toyfam_without_ledger: .* lacks LEDGER; see xlt.core.family_plan.FamilyPlan"):
        registry.names()
    forget(family.parent)


def test_a_family_named_as_a_built_in_one_or_a_missing_folder_is_refused(tmp_path, monkeypatch):
    shutil.copytree(PLUGIN / "toyfam", tmp_path / "families" / "sbert")
    monkeypatch.setenv(registry.PATH_VARIABLE, str(tmp_path / "families"))
    with pytest.raises(XltError, match="family 'sbert' is defined twice"):
        registry.names()
    monkeypatch.setenv(registry.PATH_VARIABLE, str(tmp_path / "nowhere"))
    with pytest.raises(XltError, match="is not a folder"):
        registry.names()
    forget(tmp_path / "families")


def test_config_plan_and_workflow_dry_run_take_the_family_up(toy, tmp_path):
    work = workflow_copy(tmp_path)  # the repository's Snakefile and rules, unchanged
    config = write_config(work)
    assert "# toyfam: 4 runs" in xlt("sweep", "--config", str(config), cwd=work)
    planned = xlt("plan", "--config", str(config), "--gpu", "cpu", cwd=work)
    assert [line.split()[:2] for line in planned.splitlines() if line.startswith("toyfam")] == [["toyfam", "4"]]
    counts = job_counts(snakemake(work, "-n", "--cores", "1", "--configfile", str(config)).stdout)
    assert {
        rule: counts.get(rule)
        for rule in ("toy_eval", "aggregate_toyfam", "compare", "positive_control", "paper_delta", "cost_table")
    } == {"toy_eval": 4, "aggregate_toyfam": 1, "compare": 1, "positive_control": 1, "paper_delta": 1, "cost_table": 1}


@pytest.mark.slow
def test_the_workflow_runs_the_family_into_every_shared_table_and_the_report(toy, tmp_path):
    work = workflow_copy(tmp_path)
    config = write_config(work)
    snakemake(work, "--cores", "2", "--configfile", str(config))
    tables = work / "results" / "tables"
    tests = pd.read_csv(tables / "toyfam_tests.csv")  # xlt compare, its baseline the fair coin
    assert set(tests.axis) == {"bias", "seed"} and set(tests[tests.axis == "bias"].a) == {0.0}
    checks = pd.read_csv(tables / "positive_control.csv")
    assert list(checks[checks.family == "toyfam"]["pass"]) == ["yes", "yes"]
    delta = pd.read_csv(tables / "paper_delta.csv")
    assert list(delta[delta.family == "toyfam"].matched) == ["yes", "yes"]  # its paper_results.csv, one per seed
    cost = pd.read_csv(tables / "cost.csv")
    assert sorted(cost[cost.family == "toyfam"].run_id) == [
        "bias0-seed1",
        "bias0-seed2",
        "bias0.5-seed1",
        "bias0.5-seed2",
    ]
    assert "toyfam_tests.csv" in (work / "results" / "report.html").read_text()
