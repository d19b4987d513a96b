"""A family is a plug-in: a folder outside the package, named in XLT_FAMILY_PATH, joins the config,
the cli, `xlt plan` (priced), `xlt prefetch`, `xlt rehearse`, the workflow, the paired tests, the
positive control, the published numbers and the cost ledger, with no edit anywhere else (the
workflow is the repository's, copied as is).

The toy family (tests/families/plugin/toyfam) trains the demo model a few steps on its hub data
(declared for prefetching by its prefetch.py; its rehearsal.py writes a stand-in), then calls a fixed
set of labels with a biased coin; its table and training curves come from the workflow's generic rules.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml
from helpers import family_folders
from helpers.workflow_runs import OFFLINE, job_counts, local_env, snakemake, workflow_copy

from xlt.core import prefetch, registry, settings
from xlt.core.errors import XltError

PLUGIN = Path(__file__).resolve().parent / "plugin"
BUILT_IN = ("adapt", "alignment", "dual", "freeze_depth", "monox", "sbert")
# the toy family only: the demo model it trains (small, pretrained a few steps); the schema wants a
# dataset, which nothing here loads
CONFIG = {
    "report": {"title": "toy plug-in family"},
    "models": {
        "toy-demo": {"source": "demo", "layers": 2, "hidden_size": 32, "pretrain_steps": 10, "languages": ["en"]}
    },
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
    "toyfam": {"biases": [0.0, 0.5], "seeds": [1, 2], "training": {"max_steps": 6}},
}
TOY_DATA = "xlt-toy/coin-texts"  # its schema's default `data`


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
    family_folders.forget(families, "toyfam")


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

    assert {"toy-train", "toy-eval"} <= set(verbs())


def test_a_family_without_a_plan_declaration_is_refused_by_name(tmp_path, monkeypatch):
    family = tmp_path / "families" / "toyfam_without_ledger"
    shutil.copytree(PLUGIN / "toyfam", family)
    plan = family / "plan.py"
    without = plan.read_text().replace(
        'LEDGER = {"toy_train": (("run_id",), TRAIN_METRICS), "toy_eval": (("run_id",), METRICS)}\n', ""
    )
    assert "LEDGER" not in without
    plan.write_text(without)
    monkeypatch.setenv(registry.PATH_VARIABLE, str(family.parent))
    with pytest.raises(XltError, match="family toyfam_without_ledger: plan.LEDGER is missing; declare LEDGER in"):
        registry.names()
    forget(family.parent)


def test_a_family_without_its_rules_is_refused_by_name(toy):
    (toy / "toyfam" / "rules.smk").unlink()
    assert "toyfam" in registry.names()
    with pytest.raises(
        XltError, match="family toyfam: .*rules.smk is missing; a family's folder holds its Snakemake rules"
    ):
        registry.rules_file("toyfam")


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
    # its jobs: a training and an evaluation per run
    assert [line.split()[:2] for line in planned.splitlines() if line.startswith("toyfam")] == [["toyfam", "8"]]
    # the cost plan prices its training from the job's arguments: the demo model's shape, --max-steps
    jobs = json.loads(xlt("plan", "--config", str(config), "--gpu", "cpu", "--json", cwd=work))["jobs"]
    trains = [job for job in jobs if job["family"] == "toyfam" and job["rule"] == "toy_train"]
    assert len(trains) == 4 and all(job["seconds"] > 0 and job["flops"] > 0 and job["loads_model"] for job in trains)
    counts = job_counts(snakemake(work, "-n", "--cores", "1", "--configfile", str(config)).stdout)
    rules = ("toy_train", "toy_eval", "aggregate_toyfam", "plot_curves_toyfam", "build_demo_model", "compare")
    rules += ("positive_control", "paper_delta", "cost_table")
    assert {rule: counts.get(rule) for rule in rules} == dict(zip(rules, (4, 4, 1, 1, 1, 1, 1, 1, 1)))


def test_prefetch_fetches_the_familys_hub_data_and_an_offline_run_misses_it(toy, tmp_path):
    config = settings.validate(yaml.safe_load(yaml.safe_dump(CONFIG)))
    models, loads = prefetch.plan(config)
    assert models == [] and [(d.name, d.path, d.split) for d in loads] == [("toyfam.data", TOY_DATA, "train")]
    assert prefetch.missing(config, tmp_path / "hf") == [f"dataset toyfam.data ('{TOY_DATA}': train)"]


def test_the_cut_down_rehearsal_caps_its_training_and_writes_its_stand_in(toy, tmp_path):
    work = workflow_copy(tmp_path)
    config = write_config(work)
    printed = xlt("rehearse", "--config", str(config), "--out", str(tmp_path / "r"), "--cut-down", cwd=work)
    assert f"toyfam: 64 stand-in rows of {TOY_DATA}" in printed
    derived = yaml.safe_load((tmp_path / "r" / "config.yaml").read_text())
    assert derived["toyfam"]["training"]["max_steps"] == 4 and derived["toyfam"]["seeds"] == [1]
    cache = tmp_path / "r" / "resources" / "hf"
    os.environ.update(OFFLINE)  # conftest restores the environment
    assert prefetch.missing(settings.validate(derived), cache) == []  # an offline run finds everything


@pytest.mark.slow
def test_the_workflow_runs_the_family_into_every_shared_table_and_the_report(toy, tmp_path):
    """A real run, offline, in the rehearsal of the toy config: the stand-in data its training reads
    is the one its rehearsal hook wrote."""
    work = workflow_copy(tmp_path)
    config = write_config(work)
    rehearsal = tmp_path / "r"
    xlt("rehearse", "--config", str(config), "--out", str(rehearsal), cwd=work)
    snakemake(work, "--cores", "2", "--directory", str(rehearsal), "--configfile", str(rehearsal / "config.yaml"))
    results = rehearsal / "results"
    train = json.loads((results / "runs" / "toyfam" / "bias0-seed1" / "train.json").read_text())
    assert train["meta"]["steps"] == 4 and train["metrics"][0]["metric"] == "train_loss"  # the rehearsal's cap
    assert (results / "plots" / "toyfam" / "training-curves.png").is_file()
    tables = results / "tables"
    tests = pd.read_csv(tables / "toyfam_tests.csv")  # xlt compare, its baseline the fair coin
    assert set(tests.axis) == {"bias", "seed"} and set(tests[tests.axis == "bias"].a) == {0.0}
    checks = pd.read_csv(tables / "positive_control.csv")
    assert list(checks[checks.family == "toyfam"]["pass"]) == ["yes", "yes"]
    delta = pd.read_csv(tables / "paper_delta.csv")
    assert list(delta[delta.family == "toyfam"].matched) == ["yes", "yes"]  # its paper_results.csv, one per seed
    cost = pd.read_csv(tables / "cost.csv")
    toy_cost = cost[cost.family == "toyfam"]
    runs = ["bias0-seed1", "bias0-seed2", "bias0.5-seed1", "bias0.5-seed2"]
    assert sorted(toy_cost[toy_cost.rule == "toy_eval"].run_id) == runs
    assert sorted(toy_cost[toy_cost.rule == "toy_train"].run_id) == runs
    assert "toyfam_tests.csv" in (results / "report.html").read_text()
