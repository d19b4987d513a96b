"""A non-editable install carries what the commands read at run time (the config schema,
report captions, the families' Snakemake rules), so `xlt config show` and `xlt sweep` work from any
folder and the Snakefile finds every family's rules."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    target = tmp_path_factory.mktemp("site")
    build = tmp_path_factory.mktemp("build")
    # a copy of the sources, so the build leaves no egg-info or build/ in the checkout
    files = subprocess.run(
        [
            "git",
            "-C",
            str(REPO),
            "ls-files",
            "--cached",
            "--others",
            "--exclude-standard",
            "--",
            "pyproject.toml",
            "README.md",
            "src",
        ],
        check=True,
        capture_output=True,
        text=True,
    )
    for name in files.stdout.split():
        dest = build / name
        dest.parent.mkdir(parents=True, exist_ok=True)
        if (REPO / name).is_file():
            dest.write_bytes((REPO / name).read_bytes())
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-deps",
            "--no-build-isolation",
            "--target",
            str(target),
            str(build),
        ],
        check=True,
        capture_output=True,
    )
    return target


def _xlt(installed, *args, cwd):
    env = {**os.environ, "PYTHONPATH": str(installed)}
    return subprocess.run(
        [sys.executable, "-c", "import sys, xlt.cli; sys.exit(xlt.cli.main())", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
    )


def test_package_data_is_installed(installed):
    assert (installed / "xlt" / "core" / "schema.yaml").is_file()
    for family in ("freeze_depth", "sbert", "adapt", "monox", "dual", "alignment"):
        assert (installed / "xlt" / "families" / family / "schema.yaml").is_file(), family
        assert (installed / "xlt" / "families" / family / "caption.rst").is_file(), family
        assert (installed / "xlt" / "families" / family / "rules.smk").is_file(), family  # the Snakefile includes it
    assert (installed / "xlt" / "report" / "positive_control" / "caption.rst").is_file()


@pytest.mark.parametrize("args", [["config", "show"], ["sweep"]])
def test_commands_read_the_installed_schema_from_another_folder(installed, tmp_path, args):
    result = _xlt(installed, *args, "--config", str(REPO / "config.yaml"), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "freeze_depth" in result.stdout
    imported = subprocess.run(
        [sys.executable, "-c", "import xlt; print(xlt.__file__)"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(installed)},
    ).stdout
    assert imported.startswith(str(installed)), imported
