"""Running the workflow from tests: a scratch copy of it, Snakemake in a subprocess (locally or
through the test SLURM's profile), and readers for what a run prints."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SNAKEMAKE = [sys.executable, "-m", "snakemake"]
PROFILE = REPO / "profiles" / "cluster"
SLURM_DIR = REPO / "tests" / "slurm"
ASK_SLURM = "XLT_TEST_SLURM"  # the real-SLURM tests run only when this is 1 (.ci/run exports it)
PARTITION = "gpu"  # the test cluster's partition; passed to the profile as XLT_SLURM_PARTITION
OFFLINE = {"HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}


def workflow_copy(tmp_path: Path) -> Path:
    """The workflow's files in tmp_path/wf; the package itself is imported from the installed `xlt`."""
    work = tmp_path / "wf"
    work.mkdir()
    for name in ("Snakefile", "config.yaml"):
        shutil.copy(REPO / name, work / name)
    for name in ("workflow", "config", "profiles", "envs", "src"):  # rules name envs/ and the captions in src/
        shutil.copytree(REPO / name, work / name)
    return work


def local_env() -> dict[str, str]:
    """Offline, with this interpreter's scripts (`xlt`, `snakemake`) first on PATH."""
    return {**os.environ, **OFFLINE, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}


def slurm_env() -> dict[str, str]:
    """local_env() plus this checkout's package inside the SLURM jobs (sbatch --export=ALL)
    and the test cluster's partition for the profile."""
    env = local_env()
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO / "src"), os.environ.get("PYTHONPATH")) if p)
    env["XLT_SLURM_PARTITION"] = PARTITION
    return env


def slurm_snakemake(*args: str) -> list[str]:
    # the default 40 s before the first status check only slows the test down
    return [*SNAKEMAKE, "--slurm-init-seconds-before-status-checks", "2", *args]


def snakemake(work: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    proc = subprocess.run(SNAKEMAKE + list(args), cwd=work, env=local_env(), capture_output=True, text=True)
    if check and proc.returncode != 0:
        raise AssertionError(f"snakemake {' '.join(args)} failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-5000:]}")
    return proc


# the configs in the repository that tests dry-run as they are (a test that edits a config runs its own)
SHARED_DRY_RUN_CONFIGS = ("config.yaml", "config/tiny.yaml", "config/paper.yaml")


class DryRuns:
    """`snakemake -n -p --cores 1 --configfile CONFIG` of a repository config, run once in one
    workflow copy and kept: a dry run of config/paper.yaml costs seconds of CPU, and a dozen tests
    read one. -p adds each job's `Shell command:` line and changes nothing else a test reads; in
    a fresh copy every job is planned, as with --forceall."""

    def __init__(self, work: Path):
        self.work = work
        self._runs: dict[str, subprocess.CompletedProcess] = {}

    def __call__(self, configfile: str) -> subprocess.CompletedProcess:
        if configfile not in SHARED_DRY_RUN_CONFIGS:
            raise ValueError(f"{configfile}: shared dry runs are of {SHARED_DRY_RUN_CONFIGS} only")
        if configfile not in self._runs:
            self._runs[configfile] = snakemake(self.work, "-n", "-p", "--cores", "1", "--configfile", configfile)
        return self._runs[configfile]

    def output(self, configfile: str) -> str:
        """What the dry run printed, stdout then stderr."""
        proc = self(configfile)
        return proc.stdout + proc.stderr


def job_counts(output: str) -> dict:
    """Parse the 'Job stats' table of a dry run."""
    lines = output.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("Job stats"))
    counts = {}
    for line in lines[start + 3 :]:
        parts = line.split()
        if len(parts) != 2 or not parts[1].isdigit():
            break
        counts[parts[0]] = int(parts[1])
    return counts
