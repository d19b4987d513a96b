"""`xlt status` on a real sweep cut off half way: its counts are Snakemake's own (a dry run of
the rest), rule by rule; and on a finished sweep partly rerun with --forcerun, each job once."""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import time

import pytest
from helpers.workflow_runs import SNAKEMAKE, job_counts, local_env, snakemake, workflow_copy

from xlt.cost import snakemake_records

TINY = ("--configfile", "config/tiny.yaml")


def finished_jobs(work) -> int:
    logs = snakemake_records.log_files(work)
    return sum(job.state == "done" for job in snakemake_records.parse_log(logs[-1]).jobs.values()) if logs else 0


def _interruptible() -> None:
    """Snakemake takes Ctrl-C's SIGINT even when pytest was started from a background shell,
    which starts its commands with SIGINT ignored (POSIX, without job control); a child inherits
    that, and Snakemake would then run the whole sweep instead of stopping."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.mark.slow
def test_status_of_a_cut_off_tiny_sweep_counts_what_snakemake_has_left(tmp_path):
    work = workflow_copy(tmp_path)
    run = subprocess.Popen(
        [*SNAKEMAKE, "--cores", "2", *TINY],
        cwd=work,
        env=local_env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.STDOUT,
        preexec_fn=_interruptible,
    )
    deadline = time.monotonic() + 600
    while finished_jobs(work) < 6 and run.poll() is None and time.monotonic() < deadline:
        time.sleep(0.5)
    assert run.poll() is None, "the tiny sweep ended before it could be cut off"
    run.send_signal(signal.SIGINT)  # Ctrl-C: Snakemake stops its running jobs and exits
    run.wait(timeout=300)

    status = subprocess.run(
        ["xlt", "status", "--directory", str(work), "--json"], env=local_env(), capture_output=True, text=True
    )
    assert status.returncode == 0, status.stderr
    report = json.loads(status.stdout)
    assert not report["snakemake"]["running"] and report["running_jobs"] == []

    dry = snakemake(work, "-n", "--cores", "2", "--rerun-incomplete", *TINY)
    rest = job_counts(dry.stdout + dry.stderr)
    rest.pop("total")
    left = {rule: row["waiting"] + row["failed"] for rule, row in report["rules"].items()}
    assert {rule: n for rule, n in left.items() if n} == rest
    total = report["families"]["total"]
    assert total["done"] >= 6 and total["done"] + sum(rest.values()) == total["total"]
    assert report["eta"]["remaining_jobs"] == sum(rest.values()) and report["eta"]["seconds"] > 0
    for family, row in report["families"].items():
        assert row["total"] == sum(row[s] for s in ("done", "running", "failed", "waiting")), family


def status_json(work) -> dict:
    status = subprocess.run(
        ["xlt", "status", "--directory", str(work), "--json"], env=local_env(), capture_output=True, text=True
    )
    assert status.returncode == 0, status.stderr
    return json.loads(status.stdout)


@pytest.mark.slow
def test_status_of_a_finished_sweep_rerun_in_part_counts_each_job_once(tiny_sweep, tmp_path):
    """`--forcerun aggregate_freeze_depth` on (a copy of) the session's finished tiny sweep: the rerun
    lists the aggregation and what depends on it again, jobs an earlier run finished; cut off half
    way, every job of the sweep counts once."""
    work = tmp_path / "wf"
    shutil.copytree(tiny_sweep.work, work, symlinks=True)  # the session's copy stays as it is for the other tests
    first, *_ = snakemake_records.log_files(work)
    sweep_jobs = sum(snakemake_records.parse_log(first).planned.values())
    assert status_json(work)["families"]["total"] == {
        "done": sweep_jobs,
        "running": 0,
        "failed": 0,
        "waiting": 0,
        "total": sweep_jobs,
    }
    logs_before = len(snakemake_records.log_files(work))
    run = subprocess.Popen(
        [*tiny_sweep.command, "--forcerun", "aggregate_freeze_depth"],
        cwd=work,
        env=tiny_sweep.env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.STDOUT,
        preexec_fn=_interruptible,
    )
    deadline = time.monotonic() + 300
    while run.poll() is None and time.monotonic() < deadline:
        if len(snakemake_records.log_files(work)) > logs_before and finished_jobs(work) >= 1:
            break  # the rerun's own log shows a job finished
        time.sleep(0.2)
    assert run.poll() is None, "the rerun ended before it could be cut off"
    run.send_signal(signal.SIGINT)  # cut off with jobs done, started and not started: each counts once
    run.wait(timeout=300)
    rerun = snakemake_records.parse_log(snakemake_records.log_files(work)[-1])
    assert sum(rerun.planned.values()) >= 3  # the aggregation, its plots, the report, `all`
    stopped = status_json(work)
    total = stopped["families"]["total"]
    assert not stopped["snakemake"]["running"] and stopped["warnings"] == []
    assert total["total"] == sweep_jobs, stopped["families"]
    assert total["waiting"] > 0 and total["done"] < sweep_jobs  # the rest of the rerun: waiting, not also done
