"""What Snakemake itself recorded about a sweep's runs in its working directory: the logs of its
runs (.snakemake/log/), its incomplete markers (.snakemake/incomplete/) and its locks
(.snakemake/locks/), read without starting Snakemake (which would wait for the lock and build
the whole DAG).

A run's log opens with Snakemake's start time ("Date:", before the DAG is built; the log's file
name carries it too), lists the jobs it had to run at its start ("Job stats:"), then one block per job
as the job starts ("rule NAME:" or "localrule NAME:", its output, jobid and wildcards; on SLURM
as it is submitted), "Finished jobid: N" as one ends and "Error in rule NAME:" as one fails.
A job is known by its rule and its key, the wildcard values joined by "/" in the order the log
prints them (the key its family's plan and the cost ledger give it, xlt.cost.ledger)."""

from __future__ import annotations

import base64
import os
import re
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from xlt.core.errors import XltError

SNAKEMAKE_DIR = ".snakemake"
TIME_FORMAT = "%a %b %d %H:%M:%S %Y"  # "[Fri Nov 27 21:15:11 2026]", local time

_TIME = re.compile(r"^\[(\w{3} \w{3} +\d+ \d\d:\d\d:\d\d \d{4})\]$")
_JOB = re.compile(r"^(?:local)?rule (\S+):$")
_CHECKPOINT = re.compile(r"^(?:local)?checkpoint (\S+):$")
_FIELD = re.compile(r"^ {4}(\w+): (.*)$")
_FINISHED = re.compile(r"^Finished (?:jobid: |job )(\d+)")
_ERROR = re.compile(r"^Error in rule (\S+):$")
_STATS_ROW = re.compile(r"^(\S+)\s+(\d+)$")
_WILDCARD = re.compile(r"(?:^|, )(\w+)=")
_CONFIG = re.compile(r"^\s*Config file\(s\): \[(.*)\]$")
_CORES = re.compile(r"^Provided cores: (\d+)")
_DATE = re.compile(r"^\s*Date: (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)$")
# Snakemake names its log datetime.now().isoformat() with the ":" dropped
_LOG_NAME = re.compile(r"^(\d{4}-\d\d-\d\dT\d{6})(?:\.\d+)?\.snakemake\.log$")
_END = ("Complete log", "Nothing to be done")
_DRY = "This was a dry-run"


@dataclass
class JobRecord:
    """One job as a run's log shows it."""

    rule: str
    jobid: int
    key: str = ""
    wildcards: dict = field(default_factory=dict)
    outputs: list = field(default_factory=list)
    log: str = ""
    started: datetime | None = None
    ended: datetime | None = None
    state: str = "started"  # started, done or failed

    @property
    def ident(self) -> tuple[str, str]:
        return self.rule, self.key


@dataclass
class RunLog:
    """One Snakemake run, from its log file."""

    path: Path
    planned: dict = field(default_factory=dict)  # rule -> jobs the run had to run at its start ("Job stats")
    jobs: dict = field(default_factory=dict)  # jobid -> JobRecord, in the order they started
    config_files: list = field(default_factory=list)
    cores: int | None = None
    started: datetime | None = None  # Snakemake's start (DAG building included), local time
    last_time: datetime | None = None
    ended: bool = False  # Snakemake wrote its closing line (done, failed or interrupted)
    nothing_to_do: bool = False
    dry_run: bool = False

    @property
    def building(self) -> bool:
        """The log of a Snakemake still building its DAG: no job list yet, no closing line."""
        return not self.planned and not self.nothing_to_do and not self.ended and not self.dry_run


def _name_time(path: Path) -> datetime | None:
    named = _LOG_NAME.match(path.name)
    return datetime.strptime(named.group(1), "%Y-%m-%dT%H%M%S") if named else None


def _wildcards(text: str) -> dict:
    names = list(_WILDCARD.finditer(text))
    return {
        m.group(1): text[m.end() : names[i + 1].start() if i + 1 < len(names) else len(text)]
        for i, m in enumerate(names)
    }


def _config_files(text: str) -> list[str]:
    # "['config.yaml']" or "[PosixPath('/x/config.yaml')]"
    return re.findall(r"'([^']+)'", text)


def parse_log(path: str | Path) -> RunLog:
    """A run's log file, line by line (a log still being written parses as far as it goes)."""
    run = RunLog(Path(path))
    launched = _name_time(run.path)  # Snakemake's start: the header's Date, else the file's name
    first_stamp: datetime | None = None
    now: datetime | None = None
    block: JobRecord | None = None
    in_stats = False
    error_rule: str | None = None
    for line in Path(path).read_text(errors="replace").splitlines():
        stamp = _TIME.match(line)
        if stamp:
            now = datetime.strptime(stamp.group(1), TIME_FORMAT)
            first_stamp = first_stamp or now
            run.last_time = now
            block = None
            continue
        if in_stats:  # the table's header lines, then "rule count" rows up to "total N"
            row = _STATS_ROW.match(line)
            if row and row.group(1) == "total":
                in_stats = False
            elif row:
                run.planned[row.group(1)] = int(row.group(2))
            continue
        if line.startswith("Job stats:") and not run.planned:
            in_stats = True
            continue
        job = _JOB.match(line) or _CHECKPOINT.match(line)
        if job:
            block = JobRecord(rule=job.group(1), jobid=-1, started=now)
            error_rule = None
            continue
        error = _ERROR.match(line)
        if error:
            block, error_rule = None, error.group(1)
            continue
        field_line = _FIELD.match(line)
        if field_line and error_rule is not None:
            if field_line.group(1) == "jobid":
                failed = run.jobs.get(int(field_line.group(2)))
                if failed is not None:
                    failed.state, failed.ended = "failed", now
                error_rule = None
            continue
        if field_line and block is not None:
            name, value = field_line.groups()
            if name == "jobid":
                block.jobid = int(value)
                run.jobs[block.jobid] = block
            elif name == "output":
                block.outputs = [p.strip() for p in value.split(",")]
            elif name == "log":
                block.log = value.strip()
            elif name == "wildcards":
                block.wildcards = _wildcards(value)
                block.key = "/".join(block.wildcards.values())
            continue
        finished = _FINISHED.match(line)
        if finished:
            done = run.jobs.get(int(finished.group(1)))
            if done is not None:
                done.state, done.ended = "done", now
            continue
        if _DATE.match(line) and first_stamp is None:
            launched = datetime.strptime(_DATE.match(line).group(1), "%Y-%m-%d %H:%M:%S")
        elif _CONFIG.match(line):
            run.config_files = _config_files(_CONFIG.match(line).group(1))
        elif _CORES.match(line):
            run.cores = int(_CORES.match(line).group(1))
        elif line.startswith(_END):
            run.ended = True
            run.nothing_to_do = run.nothing_to_do or line.startswith("Nothing to be done")
        elif _DRY in line:
            run.dry_run = True
    # a start after the first job's stamp is not Snakemake's (a renamed log): the stamp is the better bound
    run.started = min(filter(None, (launched, first_stamp)), default=None)
    run.last_time = run.last_time or run.started
    return run


def log_files(root: str | Path) -> list[Path]:
    """The logs of the runs in `root`, oldest first (Snakemake names them by their start time)."""
    return sorted((Path(root) / SNAKEMAKE_DIR / "log").glob("*.snakemake.log"))


def runs(root: str | Path) -> list[RunLog]:
    """Every real run of `root` (dry runs and logs that never reached their job list left out),
    oldest first, and last the run still building its DAG where a Snakemake works in `root`
    (its log has no job list yet: RunLog.building). A directory that Snakemake never ran in is
    refused with what to do."""
    root = Path(root)
    if not (root / SNAKEMAKE_DIR).is_dir():
        hint = (
            "it has a Snakefile but Snakemake has not run there yet: start the sweep (snakemake --cores N)"
            if (root / "Snakefile").is_file()
            else "pass the directory a sweep runs in (the one with the Snakefile and .snakemake/), e.g. "
            "`xlt status --directory /path/to/checkout`"
        )
        raise XltError(f"{root.resolve()} is not a sweep's working directory: it has no {SNAKEMAKE_DIR}/; {hint}")
    logs = [parse_log(path) for path in log_files(root)]
    out = [run for run in logs if not run.dry_run and (run.planned or run.nothing_to_do)]
    if logs and logs[-1].building and snakemake_processes(root):  # the lock is taken after the DAG
        out.append(logs[-1])
    if not out:
        raise XltError(
            f"{root.resolve()}/{SNAKEMAKE_DIR}/log/ holds no log of a run that listed its jobs (only dry runs, or "
            "none): start the sweep (snakemake --cores N), or pass the directory it ran in"
        )
    return out


def incomplete_outputs(root: str | Path) -> list[str]:
    """The outputs Snakemake marked incomplete: jobs started and not finished (its marker is the
    output path, base64-encoded)."""
    out = []
    for marker in sorted((Path(root) / SNAKEMAKE_DIR / "incomplete").glob("*")):
        try:
            out.append(base64.urlsafe_b64decode(marker.name).decode())
        except ValueError:  # not one of Snakemake's markers
            continue
    return out


def locked(root: str | Path) -> bool:
    """Whether a Snakemake holds the directory's lock (a killed one leaves it behind)."""
    return any((Path(root) / SNAKEMAKE_DIR / "locks").glob("*.lock"))


def snakemake_processes(root: str | Path) -> list[int] | None:
    """Process ids of the Snakemakes running in `root` (their working directory), or None where
    /proc cannot tell (not Linux)."""
    proc = Path("/proc")
    if not proc.is_dir():
        return None
    target = Path(root).resolve()
    out = []
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().split(b"\0")
            if not any(part.endswith(b"snakemake") for part in cmdline[:3]):  # the script, or python -m snakemake
                continue
            if Path(os.readlink(entry / "cwd")).resolve() == target:
                out.append(int(entry.name))
        except OSError:  # gone meanwhile, or another user's
            continue
    return out


def snakemake_alive(root: str | Path) -> bool:
    """A Snakemake still runs the sweep: it holds the lock and (where /proc tells) its process lives."""
    if not locked(root):
        return False
    pids = snakemake_processes(root)
    return True if pids is None else bool(pids)
