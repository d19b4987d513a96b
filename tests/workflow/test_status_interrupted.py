"""`xlt status` on a real sweep cut off half way: its counts are Snakemake's own (a dry run of
the rest), rule by rule."""

from __future__ import annotations

import json
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
