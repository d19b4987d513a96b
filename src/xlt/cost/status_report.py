"""`xlt status`'s report of a sweep's working directory: the counts and ETA of
xlt.cost.sweep_status as one JSON-ready dict, and as text with a progress bar."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

from xlt.core import settings
from xlt.core.errors import XltError
from xlt.cost import ledger, snakemake_records, sweep, sweep_status
from xlt.cost import profile as profiles

SCHEMA_VERSION = 1
BAR_WIDTH = 40


@dataclass
class Sweep:
    """What stays fixed while one sweep is watched: where it runs, its config, its plan."""

    root: Path
    config_file: Path
    config: dict
    plan: dict
    threads: dict  # family -> threads of its model jobs


def config_file(root: Path, runs: list, given: str | None) -> Path:
    """The config the sweep runs: --config, else the latest run's --configfile (its log says),
    else the Snakefile's default config.yaml."""
    if given:
        path = Path(given)
    else:
        named = runs[-1].config_files
        path = Path(named[-1]) if named else Path("config.yaml")
        path = path if path.is_absolute() else root / path
    if not path.is_file():
        raise XltError(
            f"{path} not found: `xlt status` plans the sweep's remaining jobs from its config; pass the "
            "config the sweep runs with --config"
        )
    return path


def load_sweep(root: str | Path, config: str | None, gpu: str | None, profile: str | None) -> Sweep:
    """Read the sweep's config and plan it as `xlt plan` does (from inside `root`: a config's
    relative paths are the workflow's)."""
    root = Path(root).resolve()
    path = config_file(root, snakemake_records.runs(root), config)
    with contextlib.chdir(root):
        loaded = settings.load(str(path))
        plan = sweep.plan(loaded, profiles.load(gpu, profile))
    threads = {
        family: int(settings.resources(loaded, family)["cpus"])
        for family in settings.FAMILIES
        if settings.family(loaded, family)
    }
    return Sweep(root, path, loaded, plan, threads)


def report(sweep: Sweep, cores: int | None = None, gpus: int | None = None, now: datetime | None = None) -> dict:
    """The sweep's state now: counts per family and per rule, the running and failed jobs,
    elapsed time and the ETA."""
    now = now or datetime.now()
    runs = snakemake_records.runs(sweep.root)
    latest = runs[-1]
    alive = snakemake_records.snakemake_alive(sweep.root)
    state = sweep_status.progress(runs, alive, sweep_status.plan_keys(sweep.plan))
    families = sweep_status.rule_families(sweep.plan)
    rows, _ = ledger.cost_rows(sweep.plan, sweep.root)
    ratio = sweep_status.measured_ratio(rows)
    lanes = sweep_status.Lanes(cores or latest.cores or 1, gpus if gpus is not None else 1)
    remaining = sweep_status.remaining_jobs(state, sweep.plan, sweep.threads, ratio["ratio"], now)
    gpu_profile = bool(sweep.plan["profile"].get("gpu"))
    eta = sweep_status.eta(remaining, lanes, gpu_profile)
    running = (alive or latest.building) and not latest.ended  # runs() keeps a building run only while it lives
    until = now if running else (latest.last_time or now)
    eta_time = now + timedelta(seconds=eta["seconds"])
    return {
        "schema": SCHEMA_VERSION,
        "directory": str(sweep.root),
        "config": str(sweep.config_file),
        "warnings": config_warnings(sweep, latest, state),
        "snakemake": {
            "running": running,
            "log": str(latest.path),
            "started": _iso(latest.started),
            "building_dag": latest.building,
            "ended": latest.ended,
            "lock_left_behind": snakemake_records.locked(sweep.root) and not alive,
            "runs": len(runs),
        },
        "elapsed_s": _seconds(latest.started, until),
        "elapsed_all_runs_s": sum(_seconds(run.started, run.last_time) for run in runs[:-1])
        + _seconds(latest.started, until),
        "families": sweep_status.counts(state, families),
        "rules": sweep_status.rule_counts(state),
        "running_jobs": [_job(job, now) for job in state.running],
        "failed_jobs": [_job(job, now) for job in state.failed],
        "incomplete_outputs": snakemake_records.incomplete_outputs(sweep.root),
        "eta": {
            **eta,
            "finish_at": _iso(eta_time) if eta["remaining_jobs"] else None,
            "measured_over_planned": round(ratio["ratio"], 4),
            "jobs_measured": ratio["jobs_measured"],
            "profile": sweep.plan["profile"]["name"],
        },
    }


def config_warnings(sweep: Sweep, latest, state: sweep_status.Progress) -> list[str]:
    """Why the config planned may not be the sweep's on disk: the latest run's log names another
    config file, or jobs Snakemake ran for the plan's rules are not in the plan (another config's
    models, languages or seeds; the counts are the logs', the ETA prices the plan)."""
    out = []
    named = [Path(name) for name in latest.config_files]
    used = {(name if name.is_absolute() else sweep.root / name).resolve() for name in named}
    if used and sweep.config_file.resolve() not in used:
        out.append(
            f"{sweep.config_file} is not the config the latest run used ({', '.join(map(str, named))}, its log "
            f"says): pass that one with --config, or the ETA prices another sweep"
        )
    keys = sweep_status.plan_keys(sweep.plan)
    jobs = {job.ident for job in [*state.done, *state.running, *state.failed, *state.interrupted] if job.rule in keys}
    foreign = sorted(ident for ident in jobs if ident[1] not in keys[ident[0]])
    if foreign:
        rule, key = foreign[0]
        out.append(
            f"{len(foreign)} of the {len(jobs)} jobs Snakemake ran for rules {sweep.config_file.name} plans are not in "
            f"its plan (e.g. {rule} {key}): it does not match the sweep on disk; pass the config the sweep runs "
            "with --config"
        )
    return out


def _iso(moment: datetime | None) -> str | None:
    return moment.isoformat(timespec="seconds") if moment else None


def _seconds(start: datetime | None, end: datetime | None) -> float:
    return max((end - start).total_seconds(), 0.0) if start and end else 0.0


def _job(job, now: datetime) -> dict:
    return {
        "rule": job.rule,
        "key": job.key,
        "jobid": job.jobid,
        "log": job.log,
        "started": _iso(job.started),
        "elapsed_s": _seconds(job.started, job.ended or now),
    }


def duration(seconds: float) -> str:
    return str(timedelta(seconds=round(seconds)))


def bar(done: int, total: int, width: int = BAR_WIDTH) -> str:
    filled = round(width * done / total) if total else width
    return "[" + "#" * filled + "-" * (width - filled) + "]"


def format_text(status: dict) -> str:
    """The report as a terminal reads it."""
    smk, total, eta = status["snakemake"], status["families"]["total"], status["eta"]
    left = total["waiting"] + total["failed"]
    state = "running" if smk["running"] else "not running, " + ("stopped" if left else "finished")
    lines = [f"warning: {text}" for text in status["warnings"]]
    if smk["building_dag"]:
        state = "building its DAG (the job list comes next)"
    lines += [
        f"sweep {status['directory']} ({Path(status['config']).name}): Snakemake {state}, latest of "
        f"{smk['runs']} run(s) started {smk['started']}, elapsed {duration(status['elapsed_s'])} "
        f"(all runs {duration(status['elapsed_all_runs_s'])})",
        f"{bar(total['done'], total['total'])} {total['done']} of {total['total']} jobs done "
        f"({100 * total['done'] / max(total['total'], 1):.0f}%), {total['running']} running, "
        f"{total['failed']} failed, {total['waiting']} waiting",
        "",
    ]
    width = max(len(name) for name in status["families"])
    lines.append(f"{'family':<{width}}  " + "  ".join(f"{s:>7}" for s in (*sweep_status.STATES, "total")))
    for family, row in status["families"].items():
        lines.append(f"{family:<{width}}  " + "  ".join(f"{row[s]:>7}" for s in (*sweep_status.STATES, "total")))
    lines.append("")
    if eta["remaining_jobs"]:
        lanes = f"{eta['cores']} cores" + (f", {eta['gpus']} GPU(s)" if eta["gpus"] else "")
        lines.append(
            f"ETA {duration(eta['seconds'])} (about {eta['finish_at'][11:]}): {eta['remaining_jobs']} jobs left, "
            f"{eta['remaining_planned_s']:.0f} s planned ({eta['profile']} profile) "
            f"x {eta['measured_over_planned']:.2f} measured/planned (from {eta['jobs_measured']} finished model jobs), "
            f"on {lanes}"
        )
    elif smk["building_dag"]:
        lines.append("ETA once Snakemake has listed the jobs it will run")
    else:
        lines.append("nothing left to run")
    for job in status["running_jobs"]:
        lines.append(f"running: {job['rule']} {job['key']} for {duration(job['elapsed_s'])}")
    for job in status["failed_jobs"]:
        lines.append(f"failed: {job['rule']} {job['key']} (log: {job['log'] or 'see the Snakemake log'})")
    if status["failed_jobs"] and not smk["running"]:
        lines.append(f"see {smk['log']}; fix the cause and run Snakemake again (it reruns the failed jobs)")
    if smk["lock_left_behind"]:
        lines.append("a killed Snakemake left its lock: run `snakemake --unlock` before the next run")
    return "\n".join(lines)
