"""`xlt status` (xlt.cost.snakemake_records, sweep_status, status_report) on fabricated
Snakemake records: logs written as Snakemake 9 writes them, incomplete markers, locks and
benchmark files."""

from __future__ import annotations

import base64
import json
from datetime import datetime
from pathlib import Path

import pytest

from xlt import cli
from xlt.core.errors import XltError
from xlt.cost import snakemake_records, status_report, sweep_status
from xlt.cost.ledger import benchmark_file

T0 = datetime(2026, 11, 27, 21, 0, 0)


def stamp(seconds: int) -> str:
    moment = datetime.fromtimestamp(T0.timestamp() + seconds)
    return f"[{moment.strftime(snakemake_records.TIME_FORMAT)}]"


def snakemake_start(config: str = "config.yaml", date: int | None = None) -> list[str]:
    """What Snakemake writes as it starts, before building the DAG (its Date when `date` is given:
    seconds after T0)."""
    moment = datetime.fromtimestamp(T0.timestamp() + date) if date is not None else None
    return [
        "Assuming unrestricted shared filesystem usage.",
        "",
        "SNAKEMAKE",
        "=========",
        *([f"  Date: {moment:%Y-%m-%d %H:%M:%S}"] if moment else []),
        f"  Config file(s): ['{config}']",
        "",
        "Building DAG of jobs...",
    ]


def header(stats: dict, config: str = "config.yaml", cores: int = 2, date: int | None = None) -> list[str]:
    rows = [f"{rule:<20}{n:>7}" for rule, n in stats.items()]
    return [
        *snakemake_start(config, date),
        f"Provided cores: {cores}",
        "Job stats:",
        "job                   count",
        "------------------  -------",
        *rows,
        f"{'total':<20}{sum(stats.values()):>7}",
        "",
        "Select jobs to execute...",
    ]


def start(at: int, rule: str, jobid: int, wildcards: str = "", output: str = "out") -> list[str]:
    lines = [
        stamp(at),
        f"localrule {rule}:",
        f"    output: {output}",
        f"    log: logs/{jobid}.log",
        f"    jobid: {jobid}",
    ]
    lines += [f"    reason: Missing output files: {output}"]
    if wildcards:
        lines.append(f"    wildcards: {wildcards}")
    return [*lines, "    resources: tmpdir=/tmp"]


def finish(at: int, jobid: int, rule: str) -> list[str]:
    return [stamp(at), f"Finished jobid: {jobid} (Rule: {rule})", "1 of 9 steps (11%) done"]


def fail(at: int, jobid: int, rule: str) -> list[str]:
    return [
        "RuleException:",
        "CalledProcessError in file Snakefile, line 5:",
        stamp(at),
        f"Error in rule {rule}:",
        "    message: None",
        f"    jobid: {jobid}",
        "    output: out",
        "    shell:",
        "        xlt finetune ...",
        "        (command exited with non-zero exit code)",
    ]


END = ["Exiting because a job execution failed. Look above for error messages", "Complete log(s): x.log"]


def write_log(root: Path, name: str, lines: list[str]) -> Path:
    path = root / ".snakemake" / "log" / f"2026-11-27T{name}.snakemake.log"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n")
    return path


def first_run(root: Path) -> Path:
    """The first run: 2 demo models and 2 finetunes planned (+ aggregate, all); both models
    and one finetune finish, the other finetune fails."""
    return write_log(
        root,
        "210000.000000",
        [
            *header({"build_demo_model": 2, "finetune": 2, "aggregate_freeze_depth": 1, "all": 1}),
            *start(0, "build_demo_model", 3, "model=demo-a"),
            *start(0, "build_demo_model", 4, "model=demo-b"),
            *finish(100, 3, "build_demo_model"),
            *finish(120, 4, "build_demo_model"),
            *start(120, "finetune", 1, "run_id=a-depth0"),
            *start(120, "finetune", 2, "run_id=a-depth1"),
            *finish(150, 1, "finetune"),
            *fail(160, 2, "finetune"),
            *END,
        ],
    )


def second_run(root: Path, ended: bool) -> Path:
    """The second run: the failed finetune again, a mining job (two wildcards) and the rest;
    the finetune is running."""
    lines = [
        *header({"finetune": 1, "mine": 1, "aggregate_freeze_depth": 1, "all": 1}, config="config/other.yaml"),
        *start(1000, "finetune", 7, "run_id=a-depth1"),
        *start(1000, "mine", 8, "run_id=a-depth0, pair=qaa-en"),
        *finish(1030, 8, "mine"),
    ]
    return write_log(root, "220000.000000", [*lines, *(END if ended else [])])


def test_a_log_parses_into_its_planned_jobs_starts_finishes_and_errors(tmp_path):
    run = snakemake_records.parse_log(first_run(tmp_path))
    assert run.planned == {"build_demo_model": 2, "finetune": 2, "aggregate_freeze_depth": 1, "all": 1}
    assert run.config_files == ["config.yaml"] and run.cores == 2 and run.ended
    assert [(j.rule, j.key, j.state) for j in run.jobs.values()] == [
        ("build_demo_model", "demo-a", "done"),
        ("build_demo_model", "demo-b", "done"),
        ("finetune", "a-depth0", "done"),
        ("finetune", "a-depth1", "failed"),
    ]
    assert run.jobs[2].log == "logs/2.log" and run.jobs[2].ended == datetime.fromtimestamp(T0.timestamp() + 160)
    second = snakemake_records.parse_log(second_run(tmp_path, ended=False))
    assert second.jobs[8].wildcards == {"run_id": "a-depth0", "pair": "qaa-en"}
    assert second.jobs[8].key == "a-depth0/qaa-en"  # the plan's and the ledger's key of a mining job
    assert not second.ended and second.config_files == ["config/other.yaml"]


def test_counts_take_done_jobs_from_every_run_and_the_rest_from_the_latest(tmp_path):
    first_run(tmp_path)
    second_run(tmp_path, ended=False)
    runs = snakemake_records.runs(tmp_path)
    state = sweep_status.progress(runs, alive=True)
    assert sorted(j.ident for j in state.done) == [
        ("build_demo_model", "demo-a"),
        ("build_demo_model", "demo-b"),
        ("finetune", "a-depth0"),
        ("mine", "a-depth0/qaa-en"),
    ]
    assert [j.ident for j in state.running] == [("finetune", "a-depth1")]  # failed first, started again
    assert state.failed == [] and state.waiting == {"aggregate_freeze_depth": 1, "all": 1}
    families = {"build_demo_model": "shared", "finetune": "freeze_depth", "mine": "dual"}
    table = sweep_status.counts(state, families)
    assert table == {
        "shared": {"done": 2, "running": 0, "failed": 0, "waiting": 0, "total": 2},
        "freeze_depth": {"done": 1, "running": 1, "failed": 0, "waiting": 0, "total": 2},
        "dual": {"done": 1, "running": 0, "failed": 0, "waiting": 0, "total": 1},
        "report": {"done": 0, "running": 0, "failed": 0, "waiting": 2, "total": 2},
        "total": {"done": 4, "running": 1, "failed": 0, "waiting": 2, "total": 7},
    }
    # once its Snakemake is gone the started job waits again: the next run reruns it
    gone = sweep_status.progress(runs, alive=False)
    assert gone.running == [] and gone.waiting == {"finetune": 1, "aggregate_freeze_depth": 1, "all": 1}
    assert sweep_status.rule_counts(gone)["finetune"] == {"done": 1, "running": 0, "failed": 0, "waiting": 1}


def test_failed_jobs_are_the_latest_runs_errors(tmp_path):
    first_run(tmp_path)
    state = sweep_status.progress(snakemake_records.runs(tmp_path), alive=False)
    assert [j.ident for j in state.failed] == [("finetune", "a-depth1")]
    assert state.waiting == {"aggregate_freeze_depth": 1, "all": 1}
    assert sweep_status.counts(state, {})["total"] == {"done": 3, "running": 0, "failed": 1, "waiting": 2, "total": 6}


def finished_run(root: Path) -> Path:
    """A whole sweep run to its end: 2 demo models, 2 finetunes, their aggregate and `all`."""
    return write_log(
        root,
        "210000.000000",
        [
            *header({"build_demo_model": 2, "finetune": 2, "aggregate_freeze_depth": 1, "all": 1}),
            *start(0, "build_demo_model", 3, "model=demo-a"),
            *finish(10, 3, "build_demo_model"),
            *start(10, "build_demo_model", 4, "model=demo-b"),
            *finish(20, 4, "build_demo_model"),
            *start(20, "finetune", 1, "run_id=a-depth0"),
            *finish(30, 1, "finetune"),
            *start(30, "finetune", 2, "run_id=a-depth1"),
            *finish(40, 2, "finetune"),
            *start(40, "aggregate_freeze_depth", 5),
            *finish(50, 5, "aggregate_freeze_depth"),
            *start(50, "all", 6),
            *finish(50, 6, "all"),
            "Complete log(s): x.log",
        ],
    )


FINETUNE_KEYS = {"build_demo_model": {"demo-a", "demo-b"}, "finetune": {"a-depth0", "a-depth1"}}


def test_a_job_being_redone_is_running_or_waiting_never_also_done(tmp_path):
    """`snakemake --forcerun finetune` of a finished sweep: its job list counts the finetunes and
    what depends on them again, without saying which; until one starts, each is waiting, not done."""
    finished_run(tmp_path)
    forced = [*header({"finetune": 2, "aggregate_freeze_depth": 1, "all": 1}, date=990)]
    write_log(tmp_path, "211630.000000", forced)
    every = {"done": 6, "running": 0, "failed": 0, "waiting": 0, "total": 6}
    for plan_keys in (FINETUNE_KEYS, {}):  # the plan says both finetunes exist; without it, the same
        state = sweep_status.progress(snakemake_records.runs(tmp_path), alive=True, plan_keys=plan_keys)
        assert sorted(j.ident for j in state.done) == [("build_demo_model", "demo-a"), ("build_demo_model", "demo-b")]
        assert state.waiting == {"finetune": 2, "aggregate_freeze_depth": 1, "all": 1}
        assert sweep_status.counts(state, {})["total"] == {**every, "done": 2, "waiting": 4}
    write_log(tmp_path, "211630.000000", [*forced, *start(1000, "finetune", 7, "run_id=a-depth1")])
    state = sweep_status.progress(snakemake_records.runs(tmp_path), alive=True, plan_keys=FINETUNE_KEYS)
    assert [j.ident for j in state.running] == [("finetune", "a-depth1")] and state.waiting["finetune"] == 1
    assert sweep_status.counts(state, {})["total"] == {**every, "done": 2, "running": 1, "waiting": 3}
    # cut off (Ctrl-C): the started finetune waits again, still once
    gone = sweep_status.progress(snakemake_records.runs(tmp_path), alive=False, plan_keys=FINETUNE_KEYS)
    assert sweep_status.counts(gone, {})["total"] == {**every, "done": 2, "waiting": 4}
    # every job redone: the sweep's six, all done again
    write_log(
        tmp_path,
        "211630.000000",
        [
            *forced,
            *start(1000, "finetune", 7, "run_id=a-depth1"),
            *finish(1010, 7, "finetune"),
            *start(1010, "finetune", 8, "run_id=a-depth0"),
            *finish(1020, 8, "finetune"),
            *start(1020, "aggregate_freeze_depth", 9),
            *finish(1030, 9, "aggregate_freeze_depth"),
            *start(1030, "all", 10),
            *finish(1030, 10, "all"),
            "Complete log(s): x.log",
        ],
    )
    state = sweep_status.progress(snakemake_records.runs(tmp_path), alive=False, plan_keys=FINETUNE_KEYS)
    assert sweep_status.counts(state, {})["total"] == every


def test_new_jobs_of_a_grown_sweep_are_waiting_and_the_done_ones_stay_done(tmp_path):
    """A seed added to the config: the next run's list has the new finetune (the plan knows it is
    new) and the aggregation it changes; the finished finetunes stay done."""
    finished_run(tmp_path)
    write_log(tmp_path, "211630.000000", header({"finetune": 1, "aggregate_freeze_depth": 1, "all": 1}, date=990))
    plan_keys = {**FINETUNE_KEYS, "finetune": {"a-depth0", "a-depth1", "a-depth0-seed2"}}
    state = sweep_status.progress(snakemake_records.runs(tmp_path), alive=True, plan_keys=plan_keys)
    assert sorted(j.key for j in state.done if j.rule == "finetune") == ["a-depth0", "a-depth1"]
    assert sweep_status.counts(state, {})["total"] == {"done": 4, "running": 0, "failed": 0, "waiting": 3, "total": 7}


def test_a_job_rerun_by_a_later_run_counts_once(tmp_path):
    first_run(tmp_path)
    write_log(
        tmp_path,
        "230000.000000",
        [*header({"build_demo_model": 1, "finetune": 1}), *start(2000, "build_demo_model", 1, "model=demo-a")],
    )
    state = sweep_status.progress(snakemake_records.runs(tmp_path), alive=False)
    assert sorted(j.ident for j in state.done) == [("build_demo_model", "demo-b"), ("finetune", "a-depth0")]
    assert state.waiting == {"build_demo_model": 1, "finetune": 1}


def test_dry_runs_are_not_runs_and_a_directory_without_records_is_refused(tmp_path):
    with pytest.raises(XltError, match=r"no \.snakemake/.*pass the directory"):
        snakemake_records.runs(tmp_path)
    (tmp_path / "Snakefile").write_text("")
    with pytest.raises(XltError, match="Snakemake has not run there yet"):
        snakemake_records.runs(tmp_path)
    write_log(tmp_path, "200000.000000", [*header({"finetune": 2}), "This was a dry-run (flag -n)."])
    with pytest.raises(XltError, match="only dry runs"):
        snakemake_records.runs(tmp_path)


def test_incomplete_markers_and_a_lock_left_behind(tmp_path):
    marker = tmp_path / ".snakemake" / "incomplete"
    marker.mkdir(parents=True)
    (marker / base64.urlsafe_b64encode(b"results/runs/x/metrics.json").decode()).touch()
    assert snakemake_records.incomplete_outputs(tmp_path) == ["results/runs/x/metrics.json"]
    assert not snakemake_records.snakemake_alive(tmp_path)
    locks = tmp_path / ".snakemake" / "locks"
    locks.mkdir()
    (locks / "0.output.lock").touch()
    assert snakemake_records.locked(tmp_path)
    # a lock and no Snakemake process working in the directory: it was killed
    assert snakemake_records.snakemake_alive(tmp_path) is (snakemake_records.snakemake_processes(tmp_path) is None)


def plan_job(family, rule, key, seconds, gpu_seconds=None, loads_model=True):
    return {
        "family": family,
        "rule": rule,
        "run_id": key,
        "seconds": seconds,
        "gpu_seconds": seconds if gpu_seconds is None else gpu_seconds,
        "loads_model": loads_model,
        "peak_memory_gib": 0.1,
    }


PLAN = {
    "profile": {"name": "cpu", "overhead_s": 5.0, "gpu": False},
    "jobs": [
        plan_job("shared", "build_demo_model", "demo-a", 50.0),
        plan_job("shared", "build_demo_model", "demo-b", 50.0),
        plan_job("freeze_depth", "finetune", "a-depth0", 100.0),
        plan_job("freeze_depth", "finetune", "a-depth1", 300.0),
        plan_job("dual", "mine", "a-depth0/qaa-en", 20.0),
    ],
}


def test_the_eta_scales_the_plans_remaining_seconds_by_the_measured_ratio():
    rows = [{"planned_s": 50.0, "measured_s": 100.0}, {"planned_s": 100.0, "measured_s": 200.0}]
    ratio = sweep_status.measured_ratio(rows)
    assert ratio == {"jobs_measured": 2, "planned_s": 150.0, "measured_s": 300.0, "ratio": 2.0}
    assert sweep_status.measured_ratio([])["ratio"] == 1.0  # nothing measured yet: the plan as it is
    done = snakemake_records.JobRecord("finetune", 1, key="a-depth0", state="done")
    running = snakemake_records.JobRecord("finetune", 2, key="a-depth1", started=T0)
    state = sweep_status.Progress(done=[done], running=[running], waiting={"mine": 1, "aggregate_freeze_depth": 2})
    now = datetime.fromtimestamp(T0.timestamp() + 100)
    left = sweep_status.remaining_jobs(state, PLAN, {"freeze_depth": 2, "dual": 1}, 2.0, now)
    # the running finetune: 300 planned x 2 - 100 s spent; mine 20 x 2; the report's rule: 5 s start-up x 2 each
    assert [(j["rule"], j["seconds"], j["threads"]) for j in left] == [
        ("finetune", 500.0, 2),
        ("mine", 40.0, 1),
        ("aggregate_freeze_depth", 10.0, 1),
        ("aggregate_freeze_depth", 10.0, 1),
    ]
    # 4 cores: (500 x 2 + 40 + 10 + 10) / 4 = 265 core-seconds a core, less than the finetune alone
    eta = sweep_status.eta(left, sweep_status.Lanes(cores=4), gpu_profile=False)
    assert eta["seconds"] == 500.0 and eta["longest_job_s"] == 500.0
    assert eta["remaining_planned_s"] == 300 + 20 + 5 + 5 and eta["remaining_jobs"] == 4
    # 1 core: threads beyond the cores are scaled down, as Snakemake does
    assert sweep_status.eta(left, sweep_status.Lanes(cores=1), gpu_profile=False)["seconds"] == 560.0


def test_the_eta_on_gpus_spreads_the_plans_gpu_seconds():
    plan = {**PLAN, "profile": {"name": "h100", "overhead_s": 5.0, "gpu": True}}
    state = sweep_status.Progress(waiting={"finetune": 4})
    left = sweep_status.remaining_jobs(state, plan, {"freeze_depth": 8}, 1.0, T0)
    assert [j["seconds"] for j in left] == [200.0] * 4  # none started: the mean of the rule's jobs
    assert sweep_status.eta(left, sweep_status.Lanes(cores=16, gpus=2), gpu_profile=True)["seconds"] == 400.0
    assert sweep_status.eta(left, sweep_status.Lanes(cores=16, gpus=8), gpu_profile=True)["seconds"] == 200.0


def test_every_rule_of_a_family_plan_maps_to_that_family():
    from xlt.core import settings
    from xlt.cost import profile, sweep

    config = settings.load("config.yaml")
    families = sweep_status.rule_families(sweep.plan(config, profile.load("cpu")))
    for family in settings.FAMILIES:
        if settings.family(config, family):
            for rule in settings.plan_module(family).jobs(config):
                assert sweep_status.family_of(rule, families) == family
    assert sweep_status.family_of("build_demo_model", families) == "shared"
    assert sweep_status.family_of("prepare_data", families) == "shared"
    assert sweep_status.family_of("positive_control", families) == sweep_status.REPORT


def fabricated_sweep(root: Path) -> status_report.Sweep:
    first_run(root)
    second_run(root, ended=True)
    for key, seconds in (("demo-a", 100.0), ("demo-b", 100.0)):
        path = root / benchmark_file("shared", "build_demo_model", key)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("s\th:m:s\tmax_rss\tcpu_time\n" + f"{seconds}\t0:01:40\t100\t90\n")
    return status_report.Sweep(root, root / "config.yaml", {}, PLAN, {"freeze_depth": 1})


def test_the_report_and_its_json_fields(tmp_path):
    status = status_report.report(fabricated_sweep(tmp_path), now=datetime.fromtimestamp(T0.timestamp() + 1100))
    assert set(status) == {
        "schema",
        "directory",
        "config",
        "warnings",
        "snakemake",
        "elapsed_s",
        "elapsed_all_runs_s",
        "families",
        "rules",
        "running_jobs",
        "failed_jobs",
        "incomplete_outputs",
        "eta",
    }
    assert status["snakemake"]["running"] is False and status["snakemake"]["runs"] == 2
    assert status["families"]["total"] == {"done": 4, "running": 0, "failed": 0, "waiting": 3, "total": 7}
    assert status["elapsed_s"] == 30.0 and status["elapsed_all_runs_s"] == 160.0 + 30.0
    eta = status["eta"]
    # measured 200 s of 100 planned: x2; the cut-off finetune 300 s, then 2 report jobs at 5 s, on 2 cores
    assert eta["measured_over_planned"] == 2.0 and eta["jobs_measured"] == 2
    assert eta["seconds"] == 600.0 and eta["remaining_jobs"] == 3 and eta["cores"] == 2
    assert eta["finish_at"] == "2026-11-27T21:28:20"
    json.dumps(status)  # every field serialises
    text = status_report.format_text(status)
    assert "[" + "#" * 23 in text and "4 of 7 jobs done (57%)" in text and "ETA 0:10:00" in text


def test_the_verb_refuses_a_directory_that_is_not_a_sweep(tmp_path, capsys):
    assert cli.main(["status", "--directory", str(tmp_path)]) != 0
    assert "is not a sweep's working directory" in capsys.readouterr().err


def test_the_verb_prints_json(tmp_path, capsys, monkeypatch):
    sweep = fabricated_sweep(tmp_path)
    monkeypatch.setattr(status_report, "load_sweep", lambda *args: sweep)
    assert cli.main(["status", "--directory", str(tmp_path), "--json", "--cores", "4"]) == 0
    status = json.loads(capsys.readouterr().out)
    assert status["eta"]["cores"] == 4 and status["rules"]["finetune"]["done"] == 1


def test_the_start_is_snakemakes_from_its_first_line_and_elapsed_counts_the_dag(tmp_path):
    """Snakemake's Date (written before it builds the DAG) is the start, else the log's file name
    (Snakemake names it by the same moment); never a None while the DAG is built."""
    path = write_log(tmp_path, "205950.000000", snakemake_start(date=-10))
    building = snakemake_records.parse_log(path)
    assert building.building and building.started == datetime.fromtimestamp(T0.timestamp() - 10)
    path = write_log(tmp_path, "205950.000000", [*header({"finetune": 1}, date=-10), *start(20, "finetune", 1)])
    run = snakemake_records.parse_log(path)
    assert not run.building and run.started == datetime.fromtimestamp(T0.timestamp() - 10)
    path.write_text("\n".join([*header({"finetune": 1}), *start(20, "finetune", 1)]) + "\n")
    assert snakemake_records.parse_log(path).started == datetime(2026, 11, 27, 20, 59, 50)  # the file's name
    path.rename(path.with_name("2026-11-27T213000.000000.snakemake.log"))  # a name after its first job: not its start
    assert snakemake_records.parse_log(tmp_path / ".snakemake/log/2026-11-27T213000.000000.snakemake.log").started == (
        datetime.fromtimestamp(T0.timestamp() + 20)
    )


def test_a_run_building_its_dag_shows_from_its_first_moment(tmp_path, monkeypatch):
    first_run(tmp_path)
    write_log(tmp_path, "211630.000000", snakemake_start(date=990))
    monkeypatch.setattr(snakemake_records, "snakemake_processes", lambda root: [])
    assert [run.path.name for run in snakemake_records.runs(tmp_path)] == ["2026-11-27T210000.000000.snakemake.log"]
    monkeypatch.setattr(snakemake_records, "snakemake_processes", lambda root: [4242])  # it lives: building
    sweep = status_report.Sweep(tmp_path, tmp_path / "config.yaml", {}, PLAN, {"freeze_depth": 1})
    status = status_report.report(sweep, now=datetime.fromtimestamp(T0.timestamp() + 1000))
    smk = status["snakemake"]
    assert smk["running"] and smk["building_dag"] and smk["started"] == "2026-11-27T21:16:30" and smk["runs"] == 2
    assert status["elapsed_s"] == 10.0
    # the earlier run's finished jobs; the new run lists its jobs once its DAG is built
    assert status["families"]["total"] == {"done": 3, "running": 0, "failed": 0, "waiting": 0, "total": 3}
    text = status_report.format_text(status)
    assert "building its DAG" in text and "started 2026-11-27T21:16:30" in text and "None" not in text
    assert "ETA once Snakemake has listed" in text and "nothing left to run" not in text


def test_a_config_that_is_not_the_sweeps_is_named_in_a_warning(tmp_path, capsys, monkeypatch):
    sweep = fabricated_sweep(tmp_path)  # its latest run used config/other.yaml
    (tmp_path / "config").mkdir()
    (tmp_path / "config" / "other.yaml").touch()
    same = status_report.Sweep(tmp_path, tmp_path / "config" / "other.yaml", {}, PLAN, sweep.threads)
    assert status_report.report(same)["warnings"] == []
    warnings = status_report.report(sweep)["warnings"]
    assert len(warnings) == 1 and "is not the config the latest run used (config/other.yaml" in warnings[0]
    # another sweep's plan: the jobs the logs show for its rules are not in it
    other = {**PLAN, "jobs": [job for job in PLAN["jobs"] if job["run_id"] != "a-depth0"]}
    warnings = status_report.report(status_report.Sweep(tmp_path, same.config_file, {}, other, {}))["warnings"]
    assert warnings == [
        "1 of the 5 jobs Snakemake ran for rules other.yaml plans are not in its plan (e.g. finetune a-depth0): it "
        "does not match the sweep on disk; pass the config the sweep runs with --config"
    ]
    monkeypatch.setattr(status_report, "load_sweep", lambda *args: sweep)
    assert cli.main(["status", "--directory", str(tmp_path)]) == 0
    assert capsys.readouterr().out.startswith(f"warning: {tmp_path / 'config.yaml'} is not the config")
