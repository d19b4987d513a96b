"""Wall times of the workflow itself: `snakemake -n` on the paper-scale sweep, the default demo
run (`snakemake --cores 2` on config.yaml) and the test suite, each with the load average
before and after (the machine is shared: a figure means little without it).

Runs happen in a scratch copy of the workflow (Snakefile, config.yaml, workflow/, config/),
never in the checkout, so no results/ or .snakemake/ state is touched; `xlt` inside the jobs
is this checkout's package (PYTHONPATH=<repo>/src).

Peak memory per demo job: every job's `xlt` call goes through a small shim (first on PATH)
that runs the real command as its child and then appends the child's peak RSS
(getrusage(RUSAGE_CHILDREN).ru_maxrss: the largest resident set of the command's process
tree) to a JSONL file; snakemake's own process is not counted.

    python benchmarks/workflow.py [benchmarks/bench.py options]    (same as: benchmarks/bench.py --dry-run ...;
    add --demo and --tests for the demo run and the test suite)
"""

from __future__ import annotations

import json
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from machine import load_average

OFFLINE = {"HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
WORKFLOW_FILES = ("Snakefile", "config.yaml")
WORKFLOW_DIRS = ("workflow", "config", "profiles")

SHIM = """#!{python}
# benchmarks/workflow.py: run the real `xlt` and record the peak RSS of its process tree
import json, os, resource, subprocess, sys, time
started = time.time()
code = subprocess.call([sys.executable, "-m", "xlt.cli", *sys.argv[1:]])
peak_kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
with open(os.environ["XLT_BENCH_JOBS"], "a") as log:
    log.write(json.dumps({{"verb": sys.argv[1] if len(sys.argv) > 1 else "", "argv": sys.argv[1:],
                          "peak_rss_mb": peak_kib / 1024, "wall_s": time.time() - started, "rc": code}}) + "\\n")
sys.exit(code)
"""


def scratch_workflow(repo: Path, dest: Path) -> Path:
    dest.mkdir(parents=True, exist_ok=True)
    for name in WORKFLOW_FILES:
        shutil.copy(repo / name, dest / name)
    for name in WORKFLOW_DIRS:
        if (repo / name).is_dir():
            shutil.copytree(repo / name, dest / name)
    return dest


def package_env(repo: Path, bin_dirs: list[Path] = ()) -> dict:
    env = {**os.environ, **OFFLINE}
    src = str(repo / "src")
    env["PYTHONPATH"] = src + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env["PATH"] = os.pathsep.join([*(str(d) for d in bin_dirs), str(Path(sys.executable).parent), env["PATH"]])
    return env


def _children_cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed(cmd: list[str], cwd: Path, env: dict) -> dict:
    """Wall time and CPU time (user + system, the whole process tree) of one command."""
    load_before = load_average()
    cpu_before = _children_cpu_s()
    started = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - started
    return {
        "wall_s": wall,
        "cpu_s": _children_cpu_s() - cpu_before,
        "rc": proc.returncode,
        "load_before": load_before,
        "load_after": load_average(),
        "output": proc.stdout + proc.stderr,
    }


def job_count(output: str) -> int | None:
    """The 'total' line of snakemake's job stats table."""
    match = re.search(r"^total\s+(\d+)\s*$", output, flags=re.MULTILINE)
    return int(match.group(1)) if match else None


def dry_run(repo: Path, configfile: str = "config/paper.yaml", repeats: int = 3, echo=print) -> dict:
    """`snakemake -n` on a config: median wall time over `repeats` (the first includes cold imports)."""
    with tempfile.TemporaryDirectory(prefix="xlt-bench-dry-") as tmp:
        work = scratch_workflow(repo, Path(tmp) / "wf")
        cmd = [sys.executable, "-m", "snakemake", "-n", "--cores", "1", "--configfile", configfile]
        runs = [timed(cmd, work, package_env(repo)) for _ in range(repeats)]
    failed = [r for r in runs if r["rc"] != 0]
    if failed:
        raise RuntimeError(f"snakemake -n --configfile {configfile} failed:\n{failed[0]['output'][-3000:]}")
    walls = [r["wall_s"] for r in runs]
    cpus = [r["cpu_s"] for r in runs]
    result = {
        "configfile": configfile,
        "jobs": job_count(runs[0]["output"]),
        "walls": walls,
        "cpu_s": cpus,
        "median_s": statistics.median(walls),
        "median_cpu_s": statistics.median(cpus),
        "loads": [(r["load_before"], r["load_after"]) for r in runs],
    }
    echo("| command | jobs planned | runs | median wall s | min .. max wall s | median CPU s | load before .. after |")
    echo("|---|---|---|---|---|---|---|")
    echo(
        f"| snakemake -n --cores 1 --configfile {configfile} | {result['jobs']} | {repeats} "
        f"| {result['median_s']:.1f} | {min(walls):.1f} .. {max(walls):.1f} | {result['median_cpu_s']:.1f} "
        f"| {runs[0]['load_before']} .. {runs[-1]['load_after']} |"
    )
    return result


def demo_run(repo: Path, cores: int = 2, targets: list[str] = (), keep: Path | None = None, echo=print) -> dict:
    """`snakemake --cores N` on the default config in a scratch copy: wall time, jobs, peak RSS per job."""
    tmp = Path(tempfile.mkdtemp(prefix="xlt-bench-demo-"))
    try:
        work = scratch_workflow(repo, tmp / "wf")
        shim_dir = tmp / "bin"
        shim_dir.mkdir()
        shim = shim_dir / "xlt"
        shim.write_text(SHIM.format(python=sys.executable))
        shim.chmod(0o755)
        jobs_log = tmp / "jobs.jsonl"
        env = package_env(repo, [shim_dir]) | {"XLT_BENCH_JOBS": str(jobs_log)}
        run = timed([sys.executable, "-m", "snakemake", "--cores", str(cores), *targets], work, env)
        if run["rc"] != 0:
            raise RuntimeError(f"the demo run failed:\n{run['output'][-4000:]}")
        jobs = [json.loads(line) for line in jobs_log.read_text().splitlines()] if jobs_log.exists() else []
        if keep is not None:
            shutil.copytree(work / "results", keep, dirs_exist_ok=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    by_verb: dict[str, list[dict]] = {}
    for job in jobs:
        by_verb.setdefault(job["verb"], []).append(job)
    peak = max(jobs, key=lambda j: j["peak_rss_mb"]) if jobs else None
    summary = {
        v: {
            "jobs": len(js),
            "max_peak_rss_mb": max(j["peak_rss_mb"] for j in js),
            "sum_wall_s": sum(j["wall_s"] for j in js),
        }
        for v, js in by_verb.items()
    }
    result = {
        "cores": cores,
        "wall_s": run["wall_s"],
        "cpu_s": run["cpu_s"],
        "jobs": len(jobs),
        "load_before": run["load_before"],
        "load_after": run["load_after"],
        "job_details": jobs,
        "peak_job": peak,
        "by_verb": summary,
    }
    largest = f"{peak['peak_rss_mb']:.0f} ({peak['verb']})" if peak else "n/a"
    echo("| command | wall s | CPU s | xlt jobs | largest job peak RSS MB | load before .. after |")
    echo("|---|---|---|---|---|---|")
    echo(
        f"| snakemake --cores {cores} {' '.join(targets)} (config.yaml) | {run['wall_s']:.0f} | {run['cpu_s']:.0f} "
        f"| {len(jobs)} | {largest} | {run['load_before']} .. {run['load_after']} |"
    )
    echo("\n| verb | jobs | max peak RSS MB | summed job wall s |")
    echo("|---|---|---|---|")
    for verb, info in sorted(result["by_verb"].items(), key=lambda kv: -kv[1]["sum_wall_s"]):
        echo(f"| {verb} | {info['jobs']} | {info['max_peak_rss_mb']:.0f} | {info['sum_wall_s']:.0f} |")
    return result


def test_suite(repo: Path, pytest_args: list[str] = (), echo=print) -> dict:
    """`python -m pytest tests -q` in the checkout: wall time and the summary line."""
    env = package_env(repo)
    run = timed(
        [sys.executable, "-m", "pytest", "tests", "-q", "-rfE", "-p", "no:cacheprovider", *pytest_args], repo, env
    )
    lines = run["output"].splitlines()
    summary = next((line for line in reversed(lines) if re.search(r"\d+ (passed|failed|error)", line)), "")
    failed = [line for line in lines if line.startswith(("FAILED", "ERROR"))]
    echo("| command | wall s | CPU s | result | load before .. after |")
    echo("|---|---|---|---|---|")
    echo(
        f"| python -m pytest tests -q {' '.join(pytest_args)} | {run['wall_s']:.0f} | {run['cpu_s']:.0f} "
        f"| {summary.strip('= ')} | {run['load_before']} .. {run['load_after']} |"
    )
    for line in failed:
        echo(f"    {line}")
    return {
        "wall_s": run["wall_s"],
        "cpu_s": run["cpu_s"],
        "rc": run["rc"],
        "summary": summary,
        "failed": failed,
        "load_before": run["load_before"],
        "load_after": run["load_after"],
    }


if __name__ == "__main__":
    from bench import main

    sys.exit(main(["--dry-run", *sys.argv[1:]]))
