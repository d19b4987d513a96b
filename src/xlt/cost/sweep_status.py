"""`xlt status`: how far a sweep is, per family, and when it will end.

The counts come from Snakemake's own records (xlt.cost.snakemake_records), never from the
outputs on disk:
- done: jobs a run's log shows finished (earlier runs' included, unless a later run started the
  job again or has it still to run);
- running: jobs the latest run started and has not finished, while its Snakemake lives (on
  SLURM: submitted and not finished); once Snakemake is gone they are waiting again (the next
  run reruns them);
- failed: jobs the latest run's log shows an error for;
- waiting: the rest of the jobs the latest run had to run at its start ("Job stats").
Each job of the sweep counts once. The latest run's job list gives counts per rule, not which
jobs: a job it has still to run may be one an earlier run finished (`--forcerun`, a removed
output), and is then waiting, not also done. Per rule, the waiting jobs beyond those known
not to be done (failed or cut off earlier, or the plan's jobs of the rule that no log shows:
new; a rule no plan prices has none of the latter) are taken from the earlier runs' done jobs.
A job's family is the family whose plan has its rule (`jobs(config)` of each registered family,
as `xlt plan` lists them); the plan's shared jobs (demo models, data) are "shared", and every
other rule (aggregation, plots, the report) is "report".

The ETA prices the remaining jobs with `xlt plan` (xlt.cost.estimate) and scales them by what
the finished ones measured: their Snakemake benchmark files (xlt.cost.ledger) against their
planned seconds. See docs/monitoring.md.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from xlt.cost.snakemake_records import JobRecord, RunLog

STATES = ("done", "running", "failed", "waiting")
SHARED, REPORT = "shared", "report"


@dataclass
class Progress:
    """Every job of the sweep that Snakemake's records show, by state."""

    done: list = field(default_factory=list)  # JobRecords
    running: list = field(default_factory=list)
    failed: list = field(default_factory=list)
    waiting: dict = field(default_factory=dict)  # rule -> count (jobs not started yet have no record)
    interrupted: list = field(default_factory=list)  # started by a Snakemake that is gone: waiting again


def progress(runs: list[RunLog], alive: bool, plan_keys: dict[str, set] | None = None) -> Progress:
    """The state of every job, from the logs of `runs` (oldest first), whether the latest run's
    Snakemake is still alive and the sweep's plan (`plan_keys`: rule -> its jobs' keys)."""
    *earlier, latest = runs
    latest_jobs = {job.ident for job in latest.jobs.values()}
    done_before: dict[tuple[str, str], JobRecord] = {}
    undone: set[tuple[str, str]] = set()  # failed or cut off in an earlier run, not done since
    for run in earlier:
        for job in run.jobs.values():
            if job.state == "done":
                done_before[job.ident] = job
                undone.discard(job.ident)
            else:  # failed or cut off: it ran again later, or still has to
                done_before.pop(job.ident, None)
                undone.add(job.ident)
    earlier_done = [job for ident, job in done_before.items() if ident not in latest_jobs]
    out = Progress()
    started: dict[str, int] = {}
    for job in latest.jobs.values():
        started[job.rule] = started.get(job.rule, 0) + 1
        if job.state == "done":
            out.done.append(job)
        elif job.state == "failed":
            out.failed.append(job)
        elif alive and not latest.ended:
            out.running.append(job)
        else:
            out.interrupted.append(job)
    for rule, planned in latest.planned.items():
        # jobs the run had to run minus those it started; a cut-off job waits again
        left = planned - started.get(rule, 0) + sum(job.rule == rule for job in out.interrupted)
        if left > 0:
            out.waiting[rule] = left
    out.done = _not_redone(earlier_done, out, undone - latest_jobs, latest_jobs, plan_keys or {}) + out.done
    return out


def _not_redone(
    earlier_done: list[JobRecord], state: Progress, undone: set, latest_jobs: set, plan_keys: dict
) -> list[JobRecord]:
    """The earlier runs' done jobs less, per rule, those the latest run has still to run: its
    waiting jobs of the rule beyond those not done yet (`undone`: failed or cut off earlier, and
    not started by the latest run; and the plan's jobs of the rule that no run has shown, new
    ones). Which of the done ones will run again is unknown until they start; the count is not."""
    known = {job.ident for job in earlier_done} | undone | latest_jobs
    keep: dict[str, int] = {}
    for rule in dict.fromkeys(job.rule for job in earlier_done):
        done = sum(job.rule == rule for job in earlier_done)
        new = sum(ident[0] == rule for ident in undone)
        new += sum((rule, key) not in known for key in plan_keys.get(rule, ()))
        waiting = state.waiting.get(rule, 0) - sum(job.rule == rule for job in state.interrupted)
        keep[rule] = done - min(max(waiting - new, 0), done)
    kept = []
    for job in earlier_done:  # in their order, each rule's first `keep` of them
        if keep[job.rule] > 0:
            kept.append(job)
            keep[job.rule] -= 1
    return kept


def plan_keys(plan: dict) -> dict[str, set]:
    """rule -> the keys of its jobs in `xlt plan`'s jobs (what progress() counts new jobs by)."""
    keys: dict[str, set] = {}
    for job in plan["jobs"]:
        keys.setdefault(job["rule"], set()).add(job["run_id"])
    return keys


def rule_families(plan: dict) -> dict[str, str]:
    """rule -> family, from `xlt plan`'s jobs (its shared jobs are "shared")."""
    return {job["rule"]: job["family"] for job in plan["jobs"]}


def family_of(rule: str, families: dict[str, str]) -> str:
    return families.get(rule, REPORT)


def counts(state: Progress, families: dict[str, str]) -> dict[str, dict[str, int]]:
    """family -> {done, running, failed, waiting, total}, and "total" over all of them; families
    in the plan's order, then report."""
    order = list(dict.fromkeys([*families.values(), REPORT]))
    table = {family: dict.fromkeys((*STATES, "total"), 0) for family in order}
    for name in ("done", "running", "failed"):
        for job in getattr(state, name):
            table[family_of(job.rule, families)][name] += 1
    for rule, n in state.waiting.items():
        table[family_of(rule, families)]["waiting"] += n
    for row in table.values():
        row["total"] = sum(row[s] for s in STATES)
    table = {family: row for family, row in table.items() if row["total"]}
    table["total"] = {key: sum(row[key] for row in table.values()) for key in (*STATES, "total")}
    return table


def rule_counts(state: Progress) -> dict[str, dict[str, int]]:
    """rule -> {done, running, failed, waiting}: what `snakemake -n` of the rest (waiting,
    failed and interrupted jobs) and its `--summary` can be checked against."""
    table: dict[str, dict[str, int]] = {}
    for name in ("done", "running", "failed"):
        for job in getattr(state, name):
            table.setdefault(job.rule, dict.fromkeys(STATES, 0))[name] += 1
    for rule, n in state.waiting.items():
        table.setdefault(rule, dict.fromkeys(STATES, 0))["waiting"] += n
    return dict(sorted(table.items()))


@dataclass(frozen=True)
class Lanes:
    """What runs side by side: Snakemake's --cores (a job takes its threads of them) and, with
    a GPU profile, --gpus (a model job takes the GPU seconds the plan charges it)."""

    cores: int
    gpus: int = 0


def measured_ratio(cost_rows: list[dict]) -> dict:
    """Measured over planned seconds of the finished model jobs (the cost ledger's rows): the
    factor that scales the plan's remaining seconds. 1 (the plan as it is) before any finished."""
    timed = [row for row in cost_rows if row["measured_s"] and row["planned_s"]]
    planned = sum(row["planned_s"] for row in timed)
    measured = sum(row["measured_s"] for row in timed)
    return {
        "jobs_measured": len(timed),
        "planned_s": round(planned, 2),
        "measured_s": round(measured, 2),
        "ratio": measured / planned if planned else 1.0,
    }


def remaining_jobs(state: Progress, plan: dict, threads: dict[str, int], ratio: float, now: datetime) -> list[dict]:
    """One entry per job still to run ({rule, family, key, planned_s, seconds, gpu_seconds,
    threads}): planned_s as the plan prices it, seconds and gpu_seconds scaled by the measured
    `ratio`. A job the plan prices is found by its rule and key; a job not started yet (no
    record, so no key) costs the mean of its rule's planned jobs that are not done; a rule the
    plan does not price (the report's) costs the plan's per-job start-up. A running job is
    charged what is left of its expected seconds."""
    priced = {(job["rule"], job["run_id"]): job for job in plan["jobs"]}
    finished = {job.ident for job in state.done}
    overhead = float(plan["profile"].get("overhead_s", 0.0))
    families = rule_families(plan)

    def entry(rule: str, key: str | None, planned: tuple[float, float, bool], spent: float = 0.0) -> dict:
        family = family_of(rule, families)
        seconds, gpu_seconds, model = planned
        return {
            "rule": rule,
            "family": family,
            "key": key,
            "planned_s": seconds,
            "seconds": max(seconds * ratio - spent, 0.0),
            "gpu_seconds": max(gpu_seconds * ratio - spent, 0.0) if gpu_seconds else 0.0,
            "threads": threads.get(family, 1) if model else 1,
        }

    def price(job: dict | None) -> tuple[float, float, bool]:
        if job is None:
            return overhead, 0.0, False
        model = bool(job.get("loads_model"))
        return job["seconds"], job["gpu_seconds"] if model else 0.0, model

    out = []
    started = [*state.running, *state.failed, *state.interrupted]
    for job in started:
        spent = (now - job.started).total_seconds() if job in state.running and job.started else 0.0
        out.append(
            entry(job.rule, job.key, price(priced.get(job.ident) or _rule_mean(plan, job.rule, finished)), spent)
        )
    keys = {job.ident for job in started}
    for rule, n in state.waiting.items():
        left = n - sum(job.rule == rule for job in state.interrupted)
        if left <= 0:
            continue
        planned = price(_rule_mean(plan, rule, finished | keys))
        out.extend(entry(rule, None, planned) for _ in range(left))
    return out


def _rule_mean(plan: dict, rule: str, exclude: set) -> dict | None:
    """The mean planned job of `rule` among those not in `exclude` (all of the rule's when every
    one is), or None when the plan has no job of that rule."""
    jobs = [job for job in plan["jobs"] if job["rule"] == rule]
    if not jobs:
        return None
    left = [job for job in jobs if (job["rule"], job["run_id"]) not in exclude] or jobs
    return {
        "seconds": sum(job["seconds"] for job in left) / len(left),
        "gpu_seconds": sum(job["gpu_seconds"] for job in left) / len(left),
        "loads_model": any(job.get("loads_model") for job in left),
    }


def eta(remaining: list[dict], lanes: Lanes, gpu_profile: bool) -> dict:
    """Seconds until the last remaining job ends: the remaining jobs' expected seconds
    (`remaining_jobs`) spread over the lanes (cores by each job's threads; GPUs by the plan's GPU
    seconds under a GPU profile); never less than the longest single job left (jobs do not split)."""
    cpu_work = sum(
        job["seconds"] * min(job["threads"], lanes.cores)
        for job in remaining
        if not (gpu_profile and job["gpu_seconds"])
    )
    gpu_work = sum(job["gpu_seconds"] for job in remaining if gpu_profile and job["gpu_seconds"])
    spread = cpu_work / max(lanes.cores, 1)
    if gpu_work:
        spread = max(spread, gpu_work / max(lanes.gpus, 1))
    longest = max((job["seconds"] for job in remaining), default=0.0)
    return {
        "seconds": round(max(spread, longest), 1),
        "remaining_planned_s": round(sum(job["planned_s"] for job in remaining), 1),
        "remaining_jobs": len(remaining),
        "longest_job_s": round(longest, 1),
        "cores": lanes.cores,
        "gpus": lanes.gpus if gpu_profile else 0,
    }
