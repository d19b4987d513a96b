"""The family contract (xlt.core.family): the walk-through family of docs/architecture.md, written
from the doc as it stands, is checked, planned, priced, run and rehearsed; and each mistake a
family's author made writing one from the docs (issue 48) is one line that names the family, the
member and the fix, at the first verb that meets it, with no traceback.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml
from helpers.family_folders import documented_family, forget, write_family
from helpers.workflow_runs import local_env, snakemake, workflow_copy

from xlt.core import registry
from xlt.core.family import SECTION, ContractError

NAME = "newfam"
FILES = ("__init__.py", "schema.yaml", "plan.py", "commands.py", "train.py", "rules.smk")
CONFIG = {
    "report": {"title": "the walk-through family"},
    "models": {
        "demo-mbert": {"source": "demo", "layers": 2, "hidden_size": 32, "pretrain_steps": 10, "languages": ["en"]}
    },
    "datasets": {
        "demo-nli": {
            "source": "demo",
            "task": "nli",
            "languages": ["en"],
            "splits": ["train", "dev", "test"],
            "sizes": {"train": 32, "dev": 8, "test": 16},
        }
    },
    NAME: {"seeds": [1, 2], "training": {"max_steps": 4, "batch_size": 8, "max_length": 16}},
}


@pytest.fixture
def family(tmp_path, monkeypatch):
    """The doc's family written to tmp_path/families/newfam, that folder in XLT_FAMILY_PATH; yields
    the family's folder (a test edits it to make a mistake) and a config file that sweeps it."""
    families = tmp_path / "families"
    write_family(families, documented_family())
    monkeypatch.setenv(registry.PATH_VARIABLE, str(families))
    (tmp_path / "newfam.yaml").write_text(yaml.safe_dump(CONFIG, sort_keys=False))
    yield families / NAME
    forget(families, NAME)


def xlt(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "xlt.cli", *args], cwd=cwd, env=local_env(), capture_output=True, text=True
    )


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, f"{old!r} not in {path}: the doc's family changed; update this mistake"
    path.write_text(text.replace(old, new))


def one_error_line(proc: subprocess.CompletedProcess, verb: str) -> str:
    """The error a verb stopped with: exit status 2, one line, no traceback (less the config file
    `xlt config` names first)."""
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
    errors = [line for line in proc.stderr.splitlines() if "error" in line]
    assert len(errors) == 1 and errors[0].startswith(f"xlt {verb}: error: "), proc.stderr[-2000:]
    return errors[0].removeprefix(f"xlt {verb}: error: ").removeprefix("newfam.yaml: ")


def test_the_walk_through_holds_the_whole_family_in_six_files():
    assert tuple(documented_family()) == tuple(f"{NAME}/{name}" for name in FILES)


def test_the_documented_family_is_checked_planned_priced_and_rehearsed(family, tmp_path):
    checked = xlt("config", "check", "--config", "newfam.yaml", cwd=tmp_path)
    assert checked.returncode == 0 and checked.stdout.strip() == "newfam.yaml: valid", checked.stderr[-2000:]
    planned = xlt("plan", "--config", "newfam.yaml", "--gpu", "cpu", cwd=tmp_path)
    assert planned.returncode == 0, planned.stderr[-2000:]
    assert [line.split()[:2] for line in planned.stdout.splitlines() if line.startswith(NAME)] == [[NAME, "2"]]
    rehearsed = xlt("rehearse", "--config", "newfam.yaml", "--out", "r", "--cut-down", cwd=tmp_path)
    assert rehearsed.returncode == 0, rehearsed.stderr[-2000:]
    derived = yaml.safe_load((tmp_path / "r" / "config.yaml").read_text())[NAME]
    assert derived["seeds"] == [1] and derived["training"]["max_steps"] == 4  # the cut-down rehearsal's cap
    # what it left out has its default: the summary beside its table, its heading of `xlt --help`
    assert NAME in registry.names()
    declared = registry.family(NAME)
    assert declared.summary == "results/tables/newfam_summary.csv" and declared.group.title == "newfam family"
    assert declared.plan.READS == () and declared.cost.training_runs("newfam_train", None) == 1


@pytest.mark.slow
def test_a_tiny_sweep_of_the_documented_family_writes_its_table(family, tmp_path):
    work = workflow_copy(tmp_path)  # the repository's Snakefile and rules, unchanged
    (work / "newfam.yaml").write_text((tmp_path / "newfam.yaml").read_text())
    snakemake(
        work,
        "results/tables/newfam.csv",
        "results/tables/newfam_summary.csv",
        "--cores",
        "2",
        "--configfile",
        "newfam.yaml",
    )
    table = pd.read_csv(work / "results" / "tables" / "newfam.csv")
    assert list(table.run_id) == ["seed1", "seed2"] and set(table.metric) == {"accuracy"}
    assert table.value.between(0, 1).all() and (table.ci_low <= table.value).all()


def fix(member: str, what: str) -> str:
    return f"family {NAME}: {member} {what} (see {SECTION})"


@pytest.mark.parametrize(
    "key, verb", [("enabled", ("config", "check")), ("resources", ("config", "check")), ("training", ("plan",))]
)
def test_a_schema_without_a_key_the_shared_code_reads_is_one_line_naming_the_fix(family, tmp_path, key, verb):
    """Issue 48's mistakes 1-3: without `enabled` `xlt config check` raised a KeyError, without
    `training` `xlt plan` did, and without `resources` only Snakemake's parse of the workflow did."""
    line = next(line for line in (family / "schema.yaml").read_text().splitlines() if line.startswith(f"  {key}:"))
    edit(family / "schema.yaml", line + "\n", "")
    if key == "training":  # only a family that trains declares it: its plan asks for it, the config check does not
        config = {**CONFIG, NAME: {"seeds": [1]}}
        (tmp_path / "newfam.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
        assert xlt("config", "check", "--config", "newfam.yaml", cwd=tmp_path).returncode == 0
    proc = xlt(*verb, "--config", "newfam.yaml", *(("--gpu", "cpu") if verb == ("plan",) else ()), cwd=tmp_path)
    assert one_error_line(proc, verb[0]) == fix(
        f"schema.yaml `{key}`", f"is missing; add `{line.strip()}` under properties:"
    )


def test_a_plan_without_summary_gets_its_default_and_a_wrong_one_is_one_line(family, tmp_path):
    """Issue 48's mistake 4: SUMMARY was required by report.smk but declared nowhere."""
    assert "SUMMARY" not in (family / "plan.py").read_text()
    assert NAME in registry.names() and registry.family(NAME).summary == "results/tables/newfam_summary.csv"
    forget(family.parent, NAME)
    edit(
        family / "plan.py",
        'TABLE = f"{RESULTS}/tables/{FAMILY}.csv"\n',
        'TABLE = f"{RESULTS}/tables/{FAMILY}.csv"\nSUMMARY = 3\n',
    )
    proc = xlt("config", "check", "--config", "newfam.yaml", cwd=tmp_path)
    assert one_error_line(proc, "config") == fix("plan.SUMMARY", "is no CSV path; e.g. results/tables/newfam.csv")


def test_a_wrong_group_is_one_line_and_the_other_families_verbs_still_list(family, tmp_path):
    """Issue 48's mistake 5: a GROUP of its own making broke `xlt --help` for every verb."""
    edit(family / "commands.py", "\n\ndef _arguments", '\nGROUP = "newfam"\n\n\ndef _arguments')
    expected = fix(
        "commands.GROUP",
        "is str, not a VerbGroup; leave it out (the heading is the family's name) or give "
        "xlt.core.verbs.family_group(name, purpose)",
    )
    helped = xlt("--help", cwd=tmp_path)
    assert helped.returncode == 0 and "finetune" in helped.stdout and "newfam-train" not in helped.stdout
    assert helped.stderr.splitlines() == [f"xlt: {expected}"]
    assert one_error_line(xlt("config", "check", "--config", "newfam.yaml", cwd=tmp_path), "config") == expected


def test_a_plan_that_lacks_a_required_member_or_names_another_family_is_refused_by_name(family):
    edit(family / "plan.py", 'LEDGER = {"newfam_train": (("run_id",), METRICS)}\n', "")
    with pytest.raises(
        ContractError, match=r"^family newfam: plan.LEDGER is missing; declare LEDGER in .*plan.py \(see"
    ):
        registry.names()
    forget(family.parent, NAME)
    edit(family / "plan.py", 'FAMILY = "newfam"', 'FAMILY = "oldfam"\nLEDGER = {}')
    with pytest.raises(ContractError, match=r"^family newfam: plan.FAMILY is 'oldfam'; set FAMILY = \"newfam\""):
        registry.names()
    assert registry.usable()[0] == tuple(n for n in registry.usable()[0] if n != NAME)  # the others still register


@pytest.mark.parametrize(
    "name, problem",
    [
        ("new-fam", "is no lower-case Python identifier"),
        ("NewFam", "is no lower-case Python identifier"),
        ("training", r"is a section of the shared config \(core/schema.yaml\)"),
    ],
)
def test_a_family_folder_that_is_no_identifier_or_a_shared_section_is_refused_by_name(
    tmp_path, monkeypatch, name, problem
):
    """A family's name is checked as an identifier (its package, config section, rule names and
    results folder), not as a word: `probe` is fine (tests/core/test_family_names.py), `training`
    would replace the shared training section."""
    families = tmp_path / "families"
    write_family(families, {path.replace(NAME, name): text for path, text in documented_family().items()})
    monkeypatch.setenv(registry.PATH_VARIABLE, str(families))
    try:
        with pytest.raises(ContractError, match=rf"^family {name}: name {problem}; rename its folder"):
            registry.names()
    finally:
        forget(families, name)


def test_a_hook_module_is_read_when_first_asked_for_and_a_wrong_member_is_one_line(family):
    """Registering reads no hook module (they may import pandas: `xlt --help` stays light); the
    first question to one checks it."""
    (family / "rehearsal.py").write_text('"""A rehearsal hook with a mistake."""\n\nderive = 3\n')
    assert NAME in registry.names() and f"xlt.families.{NAME}.rehearsal" not in sys.modules
    with pytest.raises(ContractError, match=r"^family newfam: rehearsal.derive is not a function; define it with def"):
        registry.hook(NAME, "rehearsal", "derive")
    assert registry.hook(NAME, "prefetch", "hub_datasets") is None  # none declared: the shared default
