"""`xlt job-server`: an `xlt` call under it runs in a fork of the server and behaves as in its own
process (working directory, stdout, stderr, exit status), a call whose import-time environment
differs runs in its own process, and a failing job fails Snakemake."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.workflow_runs import local_env

SCRIPT = """
set -u
cd work
xlt sample-texts --data in.jsonl --max-size 2 --seed 1 --out out.jsonl > ok.out 2> ok.err; echo "ok $?" >> ../status
xlt sample-texts --data missing.jsonl --max-size 2 --out x.jsonl > bad.out 2> bad.err; echo "bad $?" >> ../status
xlt --version > version.out; echo "version $?" >> ../status
xlt no-such-verb 2> usage.err; echo "usage $?" >> ../status
HF_HOME=$PWD/elsewhere xlt --version > declined.out; echo "declined $?" >> ../status
SLURM_JOB_ID=7 xlt --version > cluster.out; echo "cluster $?" >> ../status
SLURM_JOB_ID=7 XLT_JOB_SERVER_SLURM_JOB=7 xlt --version > cluster_asks.out; echo "cluster_asks $?" >> ../status
"""


def _serve(tmp_path: Path, *command: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "xlt.cli", "job-server", "--", *command],
        cwd=tmp_path,
        env=local_env(),
        capture_output=True,
        text=True,
        timeout=600,
    )


@pytest.mark.slow
def test_calls_run_in_forks_as_in_their_own_process(tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    (work / "in.jsonl").write_text("".join(json.dumps({"text": f"sentence {i}"}) + "\n" for i in range(5)))
    (tmp_path / "script.sh").write_text(SCRIPT)
    proc = _serve(tmp_path, "bash", "script.sh")
    assert proc.returncode == 0, proc.stderr
    status = dict(line.split() for line in (tmp_path / "status").read_text().splitlines())
    assert status == {
        "ok": "0",
        "bad": "2",
        "version": "0",
        "usage": "2",
        "declined": "0",
        "cluster": "0",
        "cluster_asks": "0",
    }
    # relative paths resolved in the caller's directory, output in the caller's files
    assert len((work / "out.jsonl").read_text().splitlines()) == 2
    assert "rerun: xlt sample-texts" in (work / "ok.err").read_text()
    assert "file(s) not found: missing.jsonl" in (work / "bad.err").read_text()
    assert (work / "bad.out").read_text() == ""
    assert (work / "version.out").read_text().startswith("xlt ")
    assert "invalid choice: 'no-such-verb'" in (work / "usage.err").read_text()
    # an import-time variable of its own: declined, run in its own process, with the same result
    assert (work / "declined.out").read_text() == (work / "version.out").read_text()
    assert "declined `xlt --version` (import-time variables differ: HF_HOME)" in proc.stderr
    # a call inside another SLURM job (a cluster job of a Snakemake run on the submit host) runs in its
    # own process: it does not ask the server, and the server declines one that asks anyway
    assert (
        (work / "cluster.out").read_text()
        == (work / "cluster_asks.out").read_text()
        == (work / "version.out").read_text()
    )
    assert "declined `xlt --version` (a call from SLURM job 7 runs in its own process)" in proc.stderr
    assert "xlt job-server: 4 jobs forked, 2 declined" in proc.stderr


@pytest.mark.slow
def test_a_failing_job_fails_snakemake_and_the_command_status_is_the_servers(tmp_path):
    (tmp_path / "in.jsonl").write_text(json.dumps({"text": "a sentence"}) + "\n")
    (tmp_path / "Snakefile").write_text(
        'rule all:\n    input: "good.jsonl", "bad.jsonl"\n\n'
        'rule good:\n    output: "good.jsonl"\n'
        '    shell: "xlt sample-texts --data in.jsonl --max-size 1 --out {output}"\n\n'
        'rule bad:\n    output: "bad.jsonl"\n'
        '    shell: "xlt sample-texts --data missing.jsonl --max-size 1 --out {output}"\n'
    )
    proc = _serve(tmp_path, "snakemake", "--cores", "1", "--keep-going")
    assert proc.returncode == 1
    assert (tmp_path / "good.jsonl").exists() and not (tmp_path / "bad.jsonl").exists()
    assert "Error in rule bad" in proc.stdout + proc.stderr
    assert "2 jobs forked, 0 declined" in proc.stderr


@pytest.mark.slow
def test_a_terminated_server_stops_its_command_and_removes_its_socket(tmp_path):
    proc = subprocess.Popen(
        [sys.executable, "-m", "xlt.cli", "job-server", "--", "bash", "-c", 'echo "$XLT_JOB_SERVER"; exec sleep 300'],
        cwd=tmp_path,
        env=local_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    socket_path = Path(proc.stdout.readline().strip())
    assert socket_path.exists()
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=60) == 128 + signal.SIGTERM
    assert not socket_path.parent.exists()


@pytest.mark.slow
def test_a_server_beside_a_process_serves_its_calls_and_ends_with_it(tmp_path):
    """`xlt job-server --beside PID` (what the Snakefile starts for a local run): it prints its
    socket, forks the calls sent to it, and ends, socket removed, when process PID ends."""
    owner = subprocess.Popen(["sleep", "300"])
    server = subprocess.Popen(
        [sys.executable, "-m", "xlt.cli", "job-server", "--beside", str(owner.pid)],
        cwd=tmp_path,
        env=local_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    socket_path = Path(server.stdout.readline().strip())
    assert socket_path.exists()
    call = subprocess.run(
        [sys.executable, "-m", "xlt.cli", "--version"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={**local_env(), "XLT_JOB_SERVER": str(socket_path)},
    )
    assert call.returncode == 0 and call.stdout.startswith("xlt ")
    owner.kill()
    owner.wait()
    assert server.wait(timeout=60) == 0
    assert not socket_path.parent.exists()
    assert "xlt job-server: 1 jobs forked, 0 declined" in server.stderr.read()


def test_a_server_takes_a_command_or_beside_not_both(tmp_path):
    both = subprocess.run(
        [sys.executable, "-m", "xlt.cli", "job-server", "--beside", "1", "--", "true"],
        cwd=tmp_path,
        env=local_env(),
        capture_output=True,
        text=True,
    )
    assert both.returncode == 2 and "a command (after --) or --beside PID, not both" in both.stderr


def test_xlt_job_server_0_runs_every_call_in_its_own_process(monkeypatch, capsys):
    """XLT_JOB_SERVER=0 turns off the server the Snakefile would start: a call runs on its own, quietly."""
    from xlt.core import job_client

    monkeypatch.setenv(job_client.VARIABLE, "0")
    assert job_client.run_remote(["--version"]) is None
    assert capsys.readouterr().err == ""
