"""The README's set-up and test commands, the Makefile, .ci/run and the cluster profile agree."""
from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
README = (REPO / "README.md").read_text()


def _make_dry_run(target: str) -> list[str]:
    # under `make test` the outer make's MAKEFLAGS/MAKELEVEL reach this make, which then prints
    # "make[1]: Entering directory" lines; the recipe is what a user's top-level make would run
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MAKELEVEL", "MFLAGS", "MAKEOVERRIDES")}
    out = subprocess.run(["make", "-n", "-B", "--no-print-directory", target], cwd=REPO, env=env,
                         capture_output=True, text=True, check=True)
    return out.stdout.splitlines()


def test_make_demo_and_make_test_set_up_then_run_the_readme_commands():
    assert "make demo" in README and "make test" in README
    setup = ["python3 -m venv .venv", ".venv/bin/pip install torch==2.13.0", '.venv/bin/pip install -e ".[workflow,test]"']
    assert _make_dry_run("test") == setup + [". .venv/bin/activate && python -m pytest -q"]
    assert _make_dry_run("demo") == setup + [". .venv/bin/activate && snakemake --cores 2"]
    # the manual steps below the two commands are the same ones
    for line in ("python3 -m venv .venv", "pip install torch==2.13.0", 'pip install -e ".[workflow,test]"'):
        assert line in README


def test_ci_runs_the_readme_commands_literally_and_asks_for_slurm():
    test_section = README.split("## Test", 1)[1]
    command = re.search(r"```bash\n(.+)\n```", test_section).group(1)
    ci = (REPO / ".ci" / "run").read_text().splitlines()
    # `make test` runs the README's test command (checked above), so CI runs what a user runs
    assert command == "python -m pytest -q"
    assert "make test" in ci and "if ! make demo; then" in ci
    assert ci.index("export XLT_TEST_SLURM=1") < ci.index("make test")
    # nothing else runs pytest or the demo behind the two commands' backs
    assert not [line for line in ci if "pytest" in line and not line.lstrip().startswith("#")]
    assert not [line for line in ci if line.strip().startswith("snakemake --cores")]


def test_readme_section_references_exist():
    headings = {line.lstrip("#").strip() for line in README.splitlines() if line.startswith("#")}
    texts = [README, *(path.read_text() for path in (REPO / "config").glob("*.yaml")),
             (REPO / "profiles" / "cluster" / "config.yaml").read_text()]
    cited = {name for text in texts for name in re.findall(r'README, "([^"]+)"', text)}
    assert cited <= headings, f"README sections cited but missing: {sorted(cited - headings)}"


def test_profile_comment_and_readme_agree_on_how_profile_cluster_is_found():
    profile = (REPO / "profiles" / "cluster" / "config.yaml").read_text()
    assert "NOT found" not in profile
    assert (REPO / "cluster").resolve() == (REPO / "profiles" / "cluster").resolve()
    for text in (profile, README):
        assert "snakemake --profile cluster" in text.replace("  ", " ") or "`--profile cluster`" in text
        assert "exists as a path in the working" in text.replace("\n#", "").replace("\n ", " ").replace("  ", " ")
