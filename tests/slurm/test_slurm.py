"""The workflow on a real single-node SLURM: `snakemake --profile profiles/cluster
--configfile config/tiny.yaml` sends every compute job through sbatch with the resources the
config asks for (a GPU for fine-tuning), keeps the light rules on the submit host, and a
signalled training job checkpoints, is retried and resumes.

Runs only when asked, with XLT_TEST_SLURM=1 (.ci/run sets it), and needs root:
tests/slurm/slurm_up.sh writes /etc/slurm, starts munged/slurmctld/slurmd and installs
Debian's slurm-wlm and munge with apt-get when missing; skipped otherwise, so a plain
`pytest` never installs anything. Run alone with `XLT_TEST_SLURM=1 pytest -m slurm
tests/slurm/test_slurm.py` (the profile checks need no cluster and always run).
"""

from __future__ import annotations

import collections
import json
import os
import re
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
import torch
import yte
from helpers.rule_files import rule_files
from helpers.workflow_runs import ASK_SLURM as ASK
from helpers.workflow_runs import PARTITION, PROFILE, SLURM_DIR, slurm_env, slurm_snakemake

from xlt.core import registry, settings

REPO = Path(__file__).resolve().parents[2]
# rules that must never wait in a queue, whatever a family names its other light rules
ALWAYS_LOCAL = re.compile(r"build_demo_model|prepare_data|aggregate_\w+|plot_\w+")
# model-loading rule -> the config family whose `resources:` (and cpus as threads) it requests
MODEL_RULES = {
    "prefix_states": "freeze_depth",
    "finetune": "freeze_depth",
    "evaluate_xnli": "freeze_depth",
    "train_sbert": "sbert",
    "eval_sbert": "sbert",
    "train_teacher": "monox",
    "distill": "monox",
    "adapt_mlm": "adapt",
    "adapt_reference_perplexity": "adapt",
    "prefix_states_dual": "dual",
    "train_dual": "dual",
    "tatoeba_dual": "dual",
    "mine": "dual",
    "align_layers": "alignment",
}


def _workflow_rules() -> dict[str, str]:
    """rule name -> its body, from the Snakefile, workflow/rules/*.smk and the families' rules.smk;
    a rule made once per family in a loop (`rule:` with `name: f"..._{family}"` or
    `f"..._{family}_..."`, report.smk) once under each registered family's name, its body dedented
    to a named rule's."""
    rules = {}
    for smk in [REPO / "Snakefile", *rule_files()]:
        text = smk.read_text()
        for name, body in re.findall(r"^rule (\w+):\n((?:[ \t].*\n|\n)*)", text, re.M):
            rules[name] = body
        looped = r'^( *)rule:\n\1    name:\n\1        f"(\w*)\{family\}(\w*)"\n((?:\1 .*\n|\n)*)'
        for _indent, prefix, suffix, body in re.findall(looped, text, re.M):
            body = textwrap.dedent(body).replace("\n", "\n    ")
            for family in registry.names():
                rules[prefix + family + suffix] = "    " + body
    return rules


def _declared_local(rules: dict[str, str]) -> set[str]:
    return {name for name, body in rules.items() if re.search(r"^    localrule: True$", body, re.M)}


def _profile() -> dict:
    with open(PROFILE / "config.yaml") as f:
        return yte.process_yaml(f, require_use_yte=True)


def _jobs_in_log(log: str) -> tuple[dict[str, dict], dict[str, set]]:
    """(remote, local) jobs from the job headers of the log: remote maps the comment the
    SLURM executor gives the job (rule_<name>[_wildcards_<values>]) to its rule and stated
    resources; local maps a rule to its Snakemake job ids."""
    remote, local = {}, collections.defaultdict(set)
    for kind, rule, body in re.findall(r"^(localrule|rule) (\w+):\n((?:    .*\n)+)", log, re.M):
        fields = dict(re.findall(r"^    (\w+): (.*)$", body, re.M))
        if kind == "localrule":
            local[rule].add(fields["jobid"])
            continue
        wildcards = [value for _, value in re.findall(r"(\w+)=([^,]+)", fields.get("wildcards", ""))]
        comment = f"rule_{rule}_wildcards_{'_'.join(wildcards).replace('/', '_')}" if wildcards else f"rule_{rule}"
        resources = dict(re.findall(r"(\w+)=([^,]+)", fields["resources"]))
        remote[comment] = {"rule": rule, "resources": resources}
    return remote, local


def _job_stats(log: str) -> dict[str, int]:
    table = log.split("Job stats:", 1)[1].split("total", 1)[0]
    return {m[0]: int(m[1]) for m in re.findall(r"^(\w+)\s+(\d+)$", table, re.M)}


def _slurm_jobs(run_id: str) -> list[dict[str, str]]:
    """Every job SLURM still remembers (MinJobAge) that this Snakemake run submitted."""
    out = subprocess.run(
        ["scontrol", "show", "job", "-d", "--oneliner"], capture_output=True, text=True, check=True
    ).stdout
    jobs = []
    for line in out.splitlines():
        fields = dict(re.findall(r"(\S+?)=(\S*)", line))
        if fields.get("JobName") == run_id:
            jobs.append(fields)
    return sorted(jobs, key=lambda job: int(job["JobId"]))


def _minutes(limit: str) -> int:
    """SLURM's [D-]HH:MM:SS time limit in minutes."""
    days, _, clock = limit.rpartition("-")
    h, m, s = map(int, clock.split(":"))
    return (int(days or 0) * 24 + h) * 60 + m + (s > 0)


def test_profile_keeps_to_site_settings():
    """profiles/cluster: slurm executor polled with squeue, paper config by default, and no
    resource amounts for the GPU rules (set-resources would override the config's)."""
    profile = _profile()
    assert profile["executor"] == "slurm"
    assert profile["slurm-status-command"] == "squeue"
    assert profile["configfile"] == "config/paper.yaml" and (REPO / "config" / "paper.yaml").exists()
    assert set(MODEL_RULES) <= set(profile["set-resources"])
    for rule in MODEL_RULES:
        assert not {"gpu", "gres", "runtime", "mem_mb", "cpus_per_task"} & set(profile["set-resources"][rule]), rule
    # a workflow profile would replace these keys wholesale (see the profile's header)
    default_profile = REPO / "profiles" / "default"
    if default_profile.exists():
        with open(next(default_profile.glob("*.yaml"))) as f:
            clashing = set(yte.process_yaml(f)) & {"default-resources", "set-resources", "executor"}
        assert not clashing, f"profiles/default overrides {clashing} of profiles/cluster"


def test_light_rules_are_local_and_model_rules_request_config_resources():
    """The workflow side of profiles/cluster: light rules carry `localrule: True`; each rule
    that loads a model (training and evaluation) passes its family's config resources under
    SLURM's names and runs with the family's cpus as threads."""
    rules = _workflow_rules()
    local = _declared_local(rules)
    light = {name for name in rules if ALWAYS_LOCAL.fullmatch(name)}
    assert light and light <= local, f"light rules without `localrule: True`: {light - local}"
    assert set(MODEL_RULES) <= set(rules), set(MODEL_RULES) - set(rules)
    for rule, family in MODEL_RULES.items():
        assert rule not in local, rule
        assert f'**job_resources("{family}", "{rule}")' in rules[rule], (
            f"{rule} must request job_resources({family!r}, {rule!r})"
        )
        assert f'threads: job_threads("{family}")' in rules[rule], f"{rule} must run on job_threads({family!r})"


@pytest.mark.slurm
def test_tiny_sweep_runs_through_sbatch(slurm_cluster, tiny_sweep):
    """The session's tiny sweep (conftest.tiny_sweep) went through sbatch: what it wrote is
    test_workflow's to check, how it ran is this test's."""
    assert tiny_sweep.through_slurm
    print(f"tiny sweep on SLURM: {tiny_sweep.seconds:.1f} s")
    work, log = tiny_sweep.work, tiny_sweep.log
    assert (work / "results" / "tables" / "freeze_depth.csv").exists()

    run_id = re.search(r"SLURM run ID: (\S+)", log)[1]
    remote, local = _jobs_in_log(log)
    stats = _job_stats(log)
    assert sum(stats.values()) == len(remote) + sum(map(len, local.values())), log
    remote_rules = {job["rule"] for job in remote.values()}
    assert {"finetune", "evaluate_xnli", "train_sbert", "eval_sbert"} <= remote_rules, log
    declared_local = _declared_local(_workflow_rules()) | {"all"}
    assert set(local) <= declared_local, (
        f"ran on the submit host without `localrule: True`: {set(local) - declared_local}"
    )
    assert not remote_rules & declared_local, (
        f"`localrule: True` rules went to the queue: {remote_rules & declared_local}"
    )
    # the local rules' `xlt` calls forked from the job server the Snakefile starts beside Snakemake;
    # the cluster jobs (SLURM exports the same XLT_JOB_SERVER to them) ran in their own processes
    # without asking it: none declined, and no more forks than local jobs
    server_log = (work / "results" / "logs" / "job-server.log").read_text()
    forked = re.search(r"xlt job-server: (\d+) jobs forked, 0 declined", server_log)
    assert forked and 0 < int(forked[1]) <= sum(map(len, local.values())), server_log

    slurm_jobs = _slurm_jobs(run_id)
    assert {job["Comment"] for job in slurm_jobs} == set(remote), "SLURM ran other jobs than the log's remote ones"
    assert all(job["JobState"] == "COMPLETED" for job in slurm_jobs), [
        (j["Comment"], j["JobState"]) for j in slurm_jobs
    ]
    for job in slurm_jobs:
        resources = remote[job["Comment"]]["resources"]
        # what Snakemake asked for reached sbatch, and SLURM allocated it
        assert job["Partition"] == PARTITION, job
        assert _minutes(job["TimeLimit"]) == int(resources["runtime"]), job
        assert int(job["CPUs/Task"]) == int(resources["cpus_per_task"]), job
        if "gpu" in resources:
            assert (
                job.get("TresPerJob") == f"gres:gpu:{resources['gpu']}"
                and job.get("JOB_GRES") == f"gpu:{resources['gpu']}"
            ), job
        else:
            assert "gpu" not in job.get("TresPerJob", "") + job.get("JOB_GRES", ""), job

    # ... and those requests are the config's (defaults filled) for model-loading jobs, the
    # profile's defaults otherwise
    tiny = settings.load(REPO / "config" / "tiny.yaml")
    defaults = _profile()["default-resources"]
    for job in remote.values():
        family = MODEL_RULES.get(job["rule"])
        wanted = {"runtime_min": defaults["runtime"], "cpus": defaults["cpus_per_task"]}
        wanted |= tiny[family]["resources"] if family else {}
        got = job["resources"]
        assert (int(got["runtime"]), int(got["cpus_per_task"])) == (wanted["runtime_min"], wanted["cpus"]), job
        assert int(got.get("gpu", 0)) == wanted.get("gpus", 0), job

    # torch in every model-loading job ran on exactly the CPUs SLURM gave it (xlt logs it)
    threads = {}
    for log_file in (work / "results" / "logs").rglob("*.log"):
        found = re.findall(r"^torch threads: (\d+)$", log_file.read_text(), re.M)
        if found:
            threads[log_file.relative_to(work / "results" / "logs").parts[0]] = {int(n) for n in found}
    for family in ("freeze_depth", "sbert"):
        assert threads.get(family) == {tiny[family]["resources"]["cpus"]}, (family, threads)
    assert tiny["freeze_depth"]["resources"]["cpus"] > 1, "tiny.yaml must ask for more than one CPU somewhere"


@pytest.mark.slurm
def test_signalled_training_job_checkpoints_and_resumes(slurm_cluster, tiny_sweep_started, tmp_path):
    """SIGUSR1 to a running training job (what `--signal=USR1@300` sends before the time
    limit): it checkpoints and exits, Snakemake's retry resubmits it through sbatch, and
    the resumed run ends with exactly the result of an uninterrupted one. (The session's tiny
    sweep, tiny_sweep_started, goes through the same queue meanwhile: this test mostly waits.)"""
    from helpers import toy_training

    (tmp_path / "empty.yaml").write_text("{}\n")
    cmd = slurm_snakemake(
        "--profile", str(PROFILE), "--configfile", "empty.yaml", "--snakefile", str(SLURM_DIR / "preempt" / "Snakefile")
    )
    snakemake = subprocess.Popen(
        cmd, cwd=tmp_path, env=slurm_env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    try:
        train_log = tmp_path / "logs" / "train_sbert.log"
        deadline = time.monotonic() + 300
        while not (train_log.exists() and "training" in train_log.read_text()):
            assert snakemake.poll() is None, snakemake.stdout.read()
            assert time.monotonic() < deadline, "the training job never started"
            time.sleep(0.5)
        running = subprocess.run(
            ["squeue", "-h", "--states=RUNNING", "-o", "%i %k"], capture_output=True, text=True, check=True
        ).stdout
        job_id = next(line.split()[0] for line in running.splitlines() if line.split()[1] == "rule_train_sbert")
        time.sleep(1)  # a few steps in, so there is progress to keep
        subprocess.run(["scancel", "--signal=USR1", job_id], check=True)
        log = snakemake.communicate(timeout=600)[0]
    finally:
        if snakemake.poll() is None:
            snakemake.kill()
    assert snakemake.returncode == 0, log[-5000:]
    assert re.search(r"^resumed at step [1-9]\d*$", train_log.read_text(), re.M), train_log.read_text()
    run_id = re.search(r"SLURM run ID: (\S+)", log)[1]
    states = [job["JobState"] for job in _slurm_jobs(run_id)]
    assert states == ["FAILED", "COMPLETED"], states  # the stopped attempt, then the retry
    assert not (tmp_path / "checkpoints" / "toy").exists()

    assert toy_training.main([str(tmp_path / "reference"), "--checkpoint-dir", str(tmp_path / "ck_reference")]) == 0
    got, want = torch.load(tmp_path / "results" / "toy" / "params.pt"), torch.load(tmp_path / "reference" / "params.pt")
    assert got.keys() == want.keys() and all(torch.equal(got[k], want[k]) for k in got)
    assert json.loads((tmp_path / "results" / "toy" / "metrics.json").read_text()) == json.loads(
        (tmp_path / "reference" / "metrics.json").read_text()
    )


@pytest.mark.slurm
def test_jobs_sharing_a_gpu_ask_slurm_for_shards(slurm_cluster, tiny_sweep_started, tmp_path):
    """A job of 2 slots under gpu_sharing (4 a GPU, slurm: shard) goes through the profile as
    --gres=shard:2, not a whole GPU, and the test cluster (4 shards a GPU) runs it on one GPU.
    (Beside the session's tiny sweep, as the preemption test.)"""
    (tmp_path / "empty.yaml").write_text("{}\n")
    cmd = slurm_snakemake(
        "--profile", str(PROFILE), "--configfile", "empty.yaml", "--snakefile", str(SLURM_DIR / "shards" / "Snakefile")
    )
    run = subprocess.run(cmd, cwd=tmp_path, env=slurm_env(), capture_output=True, text=True, timeout=600)
    log = run.stdout + run.stderr
    assert run.returncode == 0, log[-5000:]
    run_id = re.search(r"SLURM run ID: (\S+)", log)[1]
    jobs = _slurm_jobs(run_id)
    assert len(jobs) == 2 and all(job["JobState"] == "COMPLETED" for job in jobs), jobs
    for job in jobs:
        # --gres is per node (TresPerNode); no whole GPU besides (--gpus would be TresPerJob)
        assert job.get("JOB_GRES") == "shard:2" and job.get("TresPerNode") == "gres:shard:2", job
        assert "gpu" not in job.get("TresPerJob", ""), job
    for name in ("a", "b"):
        start, end, device = (tmp_path / "results" / f"{name}.txt").read_text().split()
        assert device in {"0", "1"}  # SLURM gave the job one GPU's shards


def test_plain_pytest_runs_no_apt_get(tmp_path):
    """Without XLT_TEST_SLURM=1 the real-SLURM tests skip with the reason and call no apt-get
    (a fake one on PATH records any call)."""
    called = tmp_path / "apt-get-called"
    fake = tmp_path / "bin" / "apt-get"
    fake.parent.mkdir()
    fake.write_text(f'#!/bin/sh\necho "$@" >> {called}\nexit 1\n')
    fake.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if k != ASK}
    env["PATH"] = f"{fake.parent}{os.pathsep}{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    out = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider", "-m", "slurm", str(Path(__file__))],
        capture_output=True,
        text=True,
        env=env,
        cwd=REPO,
        timeout=300,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    assert not called.exists(), f"apt-get was called: {called.read_text()}"
    assert re.search(r"3 skipped", out.stdout), out.stdout
    assert f"set {ASK}=1 to run it" in out.stdout
