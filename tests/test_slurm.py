"""The workflow on a real single-node SLURM: every compute job goes through sbatch, with the
GPU request of profiles/cluster, and the light rules stay on the submit host.

Needs root (brings up munged/slurmctld/slurmd with tests/slurm/slurm_up.sh, installing
Debian's slurm-wlm and munge when missing); skipped otherwise. Run alone with
`pytest -m slurm tests/test_slurm.py`.
"""
from __future__ import annotations

import collections
import fcntl
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch
import yte

REPO = Path(__file__).resolve().parents[1]
SLURM_DIR = REPO / "tests" / "slurm"
PROFILE = REPO / "profiles" / "cluster"
STANDIN = SLURM_DIR / "standin"
PARTITION = "gpu"  # the test cluster's partition; passed to the profile as XLT_SLURM_PARTITION

pytestmark = pytest.mark.slurm


def _slurm_responds() -> bool:
    try:
        out = subprocess.run(["sinfo", "-h", "-N", "-o", "%T"], capture_output=True, text=True, timeout=10)
    except (FileNotFoundError, subprocess.TimeoutExpired):
        return False
    return out.returncode == 0 and "idle" in out.stdout.split()


@pytest.fixture(scope="module")
def slurm_cluster():
    """A running single-node SLURM; stopped afterwards if this fixture started it."""
    if os.geteuid() != 0:
        pytest.skip("the SLURM test needs root (it writes /etc/slurm and starts daemons)")
    if shutil.which("slurmctld") is None and shutil.which("apt-get") is None:
        pytest.skip("slurm-wlm is not installed and apt-get is unavailable")
    # one SLURM test at a time on a machine: the cluster and /etc/slurm are global
    lock = open("/tmp/xlt-slurm.lock", "w")
    fcntl.flock(lock, fcntl.LOCK_EX)
    already_up = _slurm_responds()
    started = time.monotonic()
    up = subprocess.run([str(SLURM_DIR / "slurm_up.sh")], capture_output=True, text=True)
    if up.returncode != 0:
        lock.close()
        if shutil.which("slurmctld") is None:
            pytest.skip(f"could not install slurm-wlm/munge: {up.stderr.strip()[-500:]}")
        pytest.fail(f"SLURM did not come up:\n{up.stderr}")
    print(f"SLURM bring-up: {time.monotonic() - started:.1f} s; {up.stderr.strip()}")
    try:
        yield
    finally:
        if not already_up:
            subprocess.run([str(SLURM_DIR / "slurm_down.sh")], check=False)
        lock.close()


def _profile() -> dict:
    with open(PROFILE / "config.yaml") as f:
        return yte.process_yaml(f, require_use_yte=True)


def _snakemake_command(*extra: str) -> list[str]:
    return [
        sys.executable, "-m", "snakemake",
        "--profile", str(PROFILE),
        "--snakefile", str(STANDIN / "Snakefile"),
        "--configfile", str(STANDIN / "config" / "tiny.yaml"),
        "--slurm-init-seconds-before-status-checks", "2",  # the default 40 s only slows the test
        *extra,
    ]


def _snakemake_env() -> dict[str, str]:
    env = dict(os.environ)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO / "src"), env.get("PYTHONPATH")) if p)
    env["XLT_SLURM_PARTITION"] = PARTITION
    return env


def _jobs_in_log(log: str) -> tuple[dict[str, set], dict[str, set]]:
    """(remote, local): rule -> set of Snakemake job ids, from the job headers of the log."""
    remote, local = collections.defaultdict(set), collections.defaultdict(set)
    for kind, rule, jobid in re.findall(r"^(localrule|rule) (\w+):\n(?:    .*\n)*?    jobid: (\d+)$", log, re.M):
        (local if kind == "localrule" else remote)[rule].add(jobid)
    return remote, local


def _job_stats(log: str) -> dict[str, int]:
    table = log.split("Job stats:", 1)[1].split("total", 1)[0]
    return {m[0]: int(m[1]) for m in re.findall(r"^(\w+)\s+(\d+)$", table, re.M)}


def _slurm_jobs(run_id: str) -> list[dict[str, str]]:
    """Every job SLURM still remembers (MinJobAge) that this Snakemake run submitted."""
    out = subprocess.run(["scontrol", "show", "job", "-d", "--oneliner"], capture_output=True, text=True, check=True).stdout
    jobs = []
    for line in out.splitlines():
        fields = dict(re.findall(r"(\S+?)=(\S*)", line))
        if fields.get("JobName") == run_id:
            jobs.append(fields)
    return jobs


def _minutes(limit: str) -> int:
    """SLURM's [D-]HH:MM:SS time limit in minutes."""
    days, _, clock = limit.rpartition("-")
    h, m, s = map(int, clock.split(":"))
    return (int(days or 0) * 24 + h) * 60 + m + (s > 0)


def _runtime(rule: str) -> int:
    profile = _profile()
    return profile["set-resources"].get(rule, {}).get("runtime", profile["default-resources"]["runtime"])


def test_profile_requests_gpus_for_training_rules():
    """profiles/cluster asks `gpu` (never also `gres`) for every training rule."""
    profile = _profile()
    assert profile["executor"] == "slurm"
    assert profile["slurm-status-command"] == "squeue"
    assert profile["configfile"] == "config/paper.yaml"
    training = {"finetune", "train_sbert", "train_teacher", "distill", "adapt_mlm", "train_dual"}
    assert training <= set(profile["set-resources"])
    for rule in training:
        resources = profile["set-resources"][rule]
        assert resources["gpu"] == 1 and "gres" not in resources, rule
        assert {"runtime", "mem_mb", "cpus_per_task"} <= set(resources), rule
    # a workflow profile would replace these keys wholesale (see the profile's header)
    default_profile = REPO / "profiles" / "default"
    if default_profile.exists():
        with open(next(default_profile.glob("*.yaml"))) as f:
            clashing = set(yte.process_yaml(f)) & {"default-resources", "set-resources", "executor"}
        assert not clashing, f"profiles/default overrides {clashing} of profiles/cluster"


def test_sweep_runs_through_sbatch(slurm_cluster, tmp_path):
    started = time.monotonic()
    run = subprocess.run(_snakemake_command(), cwd=tmp_path, env=_snakemake_env(), capture_output=True, text=True, timeout=600)
    wall = time.monotonic() - started
    log = run.stdout + run.stderr
    print(f"snakemake on SLURM: {wall:.1f} s")
    assert run.returncode == 0, log[-5000:]

    run_id = re.search(r"SLURM run ID: (\S+)", log)[1]
    remote, local = _jobs_in_log(log)
    stats = _job_stats(log)
    assert sum(stats.values()) == sum(map(len, remote.values())) + sum(map(len, local.values())), log
    assert remote, "no job was sent to SLURM"

    jobs = _slurm_jobs(run_id)
    by_rule = collections.defaultdict(list)
    for job in jobs:
        by_rule[re.match(r"rule_(\w+?)(?:_wildcards_|$)", job["Comment"])[1]].append(job)
    gpu_rules = {rule for rule, res in _profile()["set-resources"].items() if res.get("gpu")}

    for rule, jobids in remote.items():
        completed = {job["Comment"] for job in by_rule[rule] if job["JobState"] == "COMPLETED"}
        assert len(completed) == len(jobids), f"{rule}: {len(jobids)} jobs in the log, SLURM completed {completed}"
        for job in by_rule[rule]:
            assert job["Partition"] == PARTITION
            assert _minutes(job["TimeLimit"]) == _runtime(rule), job  # the profile's runtime reached -t
            if rule in gpu_rules:
                assert job.get("TresPerJob") == "gres:gpu:1", job
                assert job.get("JOB_GRES") == "gpu:1", job  # allocated, not only requested
            else:
                assert "gpu" not in job.get("TresPerJob", ""), job
    for rule in local:
        assert rule not in by_rule, f"local rule {rule} went to SLURM"
    assert set(by_rule) <= set(remote), f"SLURM ran jobs of rules the log does not show: {set(by_rule) - set(remote)}"

    # the stand-in's outputs say where each job ran
    summary = json.loads((tmp_path / "results" / "summary.json").read_text())
    assert summary["aggregate_slurm_job_id"] is None
    slurm_ids = {job["JobId"] for job in jobs}
    for entry in summary["runs"]:
        assert entry["slurm_job_id"] in slurm_ids
        assert entry["cuda_visible_devices"] in {"0", "1"}


def test_signalled_training_job_checkpoints_and_resumes(slurm_cluster, tmp_path):
    """SIGUSR1 to a running training job (what `--signal=USR1@300` sends before the time
    limit): it checkpoints and exits, Snakemake's retry resubmits it through sbatch, and
    the resumed run ends with exactly the result of an uninterrupted one."""
    sys.path.insert(0, str(REPO / "tests"))
    import toy_training

    snakemake = subprocess.Popen(_snakemake_command("results/toy/params.pt"), cwd=tmp_path, env=_snakemake_env(),
                                 stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    train_log = tmp_path / "logs" / "train_sbert.log"
    deadline = time.monotonic() + 300
    while not (train_log.exists() and "training" in train_log.read_text()):
        assert snakemake.poll() is None, snakemake.stdout.read()
        assert time.monotonic() < deadline, "the training job never started"
        time.sleep(0.5)
    running = subprocess.run(["squeue", "-h", "--states=RUNNING", "-o", "%i %k"], capture_output=True, text=True, check=True).stdout
    job_id = next(line.split()[0] for line in running.splitlines() if line.split()[1] == "rule_train_sbert")
    time.sleep(1)  # a few steps in, so there is progress to keep
    subprocess.run(["scancel", "--signal=USR1", job_id], check=True)

    log = snakemake.communicate(timeout=600)[0]
    assert snakemake.returncode == 0, log[-5000:]
    assert re.search(r"^resumed at step [1-9]\d*$", train_log.read_text(), re.M), train_log.read_text()
    run_id = re.search(r"SLURM run ID: (\S+)", log)[1]
    states = [job["JobState"] for job in sorted(_slurm_jobs(run_id), key=lambda job: int(job["JobId"]))]
    assert states == ["FAILED", "COMPLETED"], states  # the stopped attempt, then the retry
    assert not (tmp_path / "checkpoints" / "toy").exists()

    assert toy_training.main([str(tmp_path / "reference"), "--checkpoint-dir", str(tmp_path / "ck_reference")]) == 0
    got, want = torch.load(tmp_path / "results" / "toy" / "params.pt"), torch.load(tmp_path / "reference" / "params.pt")
    assert got.keys() == want.keys() and all(torch.equal(got[k], want[k]) for k in got)
    assert json.loads((tmp_path / "results" / "toy" / "metrics.json").read_text()) == json.loads((tmp_path / "reference" / "metrics.json").read_text())
