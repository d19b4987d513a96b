"""The cost ledger: benchmark files on every model rule and the runs' manifests, joined with the plan into cost.csv."""

import csv
import json
import re
from pathlib import Path

import pytest
from helpers.rule_files import rule_files

from xlt.cli import main
from xlt.core import settings
from xlt.core.errors import XltError
from xlt.cost import ledger, sweep

# what Snakemake's benchmark directive writes (snakemake.benchmark.BenchmarkRecord)
TSV = (
    "s\th:m:s\tmax_rss\tmax_vms\tmax_uss\tmax_pss\tio_in\tio_out\tmean_load\tcpu_time\n"
    "{s}\t0:00:12\t{rss}\t2000.1\t700.0\t710.0\t1.0\t2.0\t90.0\t{cpu}\n"
)
UNIT = {"name": "unit", "train_flops": 1e9, "eval_flops": 1e9, "overhead_s": 5.0, "gpu": False, "source": "t"}


def _benchmark(root, job, seconds, rss="812.5"):
    path = root / ledger.benchmark_file(job["family"], job["rule"], job["run_id"])
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(TSV.format(s=seconds, cpu=seconds * 0.9, rss=rss))
    return path


def _manifest(root, job, **fields):
    metrics = root / ledger.metrics_file(job["family"], job["rule"], job["run_id"])
    metrics.parent.mkdir(parents=True, exist_ok=True)
    (metrics.parent / "manifest.json").write_text(json.dumps({"jobs": {metrics.name: fields}}))


def test_every_rule_that_loads_a_model_writes_a_benchmark_file():
    config = settings.load("config.yaml")
    rules_text = "".join(p.read_text() for p in rule_files())
    benchmarked = set(re.findall(r'benchmark_pattern\("(\w+)", "(\w+)"', rules_text))
    ledgered = {(fam, rule) for fam, rules in ledger.LEDGER_RULES.items() for rule in rules}
    assert benchmarked == ledgered
    for family, rule, _, spec in sweep.all_jobs(config):
        if spec.has("model") or rule == "build_demo_model":
            assert (family, rule) in ledgered, f"{rule} loads a model but has no benchmark: file"


def test_a_ledgered_jobs_metrics_file_is_the_one_its_command_writes():
    """The manifest the ledger reads lies beside the metrics file the job's `xlt` call names
    (itself, or the run directory it writes into)."""
    config = settings.load("config.yaml")
    seen = set()
    for family, rule, key in ledger.ledger_jobs(config):
        metrics = ledger.metrics_file(family, rule, key)
        if metrics is None:
            continue
        args = [str(a) for a in settings.plan_module(family).jobs(config)[rule][key].args]
        assert metrics in args or str(Path(metrics).parent) in args, (rule, key, metrics, args)
        seen.add((family, rule))
    # every rule whose job writes a metrics file (build_demo_model and prefix_states write none)
    assert seen == {
        (family, rule)
        for family, rules in ledger.LEDGER.items()
        for rule, (_, template) in rules.items()
        if template is not None
    }


def test_benchmark_pattern_refuses_a_rule_the_ledger_does_not_know():
    assert (
        ledger.benchmark_pattern("dual", "mine", ("run_id", "pair"))
        == "results/benchmarks/dual/mine/{run_id}/{pair}.tsv"
    )
    with pytest.raises(XltError, match="not in xlt.cost.ledger.LEDGER"):
        ledger.benchmark_pattern("dual", "make_bucc")
    with pytest.raises(XltError, match="wildcards"):
        ledger.benchmark_pattern("dual", "mine")


def test_cost_rows_join_benchmarks_manifests_and_the_plan(tmp_path):
    planned = sweep.plan(settings.load("config.yaml"), UNIT)
    jobs = [j for j in planned["jobs"] if j["rule"] == "finetune"][:2]
    demo = next(j for j in planned["jobs"] if j["rule"] == "build_demo_model")
    for job, measured in zip(jobs, (jobs[0]["seconds"] * 1.5, jobs[1]["seconds"] * 3)):
        _benchmark(tmp_path, job, measured)
    _benchmark(tmp_path, demo, 40.0, rss="NA")
    _manifest(
        tmp_path,
        jobs[0],
        device="cuda",
        samples_per_s=12.5,
        peak_memory={"cpu_rss_mib": 2048.0, "gpu_allocated_mib": 900.0},
    )
    rows, missing = ledger.cost_rows(planned, tmp_path)
    assert [r["run_id"] for r in rows] == [demo["run_id"], *(j["run_id"] for j in jobs)]
    assert len(missing) == sum(1 for j in planned["jobs"] if j["rule"] in ledger.LEDGER_RULES.get(j["family"], ())) - 3
    demo_row, first, second = rows
    # the manifest's exact figures win; the benchmark's sampled RSS only where there is no manifest
    assert (
        first["device"],
        first["samples_per_s"],
        first["peak_rss_mib"],
        first["peak_gpu_mib"],
        first["rss_from"],
    ) == ("cuda", 12.5, 2048.0, 900.0, "manifest")
    assert (second["device"], second["peak_rss_mib"], second["rss_from"]) == (None, 812.5, "benchmark")
    assert demo_row["peak_rss_mib"] is None and demo_row["measured_s"] == 40.0
    assert first["measured_s"] == pytest.approx(jobs[0]["seconds"] * 1.5)
    assert first["planned_over_measured"] == pytest.approx(1 / 1.5, abs=1e-3)
    summary = ledger.within_factor([first, second])
    assert (summary["jobs"], summary["jobs_within"]) == (2, 1)
    assert summary["total_ratio"] == pytest.approx(
        sum(r["planned_s"] for r in (first, second)) / sum(r["measured_s"] for r in (first, second))
    )
    out = tmp_path / "cost.csv"
    ledger.write_cost_table(rows, out)
    with open(out) as f:
        table = list(csv.DictReader(f))
    assert list(table[0]) == list(ledger.COLUMNS) and len(table) == 3


def test_the_plot_has_a_panel_per_family(tmp_path):
    planned = sweep.plan(settings.load("config.yaml"), UNIT)
    for rule in ("finetune", "train_dual", "mine"):
        job = next(j for j in planned["jobs"] if j["rule"] == rule)
        _benchmark(tmp_path, job, job["seconds"] * 1.2)
    rows, _ = ledger.cost_rows(planned, tmp_path)
    fig = ledger.plot_plan_vs_actual(rows, tmp_path / "cost.png")
    titles = [ax.get_title() for ax in fig.axes if ax.axison]
    assert titles == ["per family", "dual: 2 of 2 jobs within 2x", "freeze_depth: 1 of 1 jobs within 2x"]
    dual = fig.axes[1]
    assert sorted(t.get_text() for t in dual.get_legend().get_texts()) == ["mine", "train_dual"]


def test_cost_table_verb_writes_csv_and_plot(tmp_path, capsys):
    config = settings.load("config.yaml")
    family, rule, key, _ = next(j for j in sweep.all_jobs(config) if j[1] == "evaluate_xnli")
    _benchmark(tmp_path, {"family": family, "rule": rule, "run_id": key}, 7.0)
    out, plot = tmp_path / "cost.csv", tmp_path / "cost.png"
    assert (
        main(
            [
                "cost-table",
                "--config",
                "config.yaml",
                "--gpu",
                "cpu",
                "--root",
                str(tmp_path),
                "--out",
                str(out),
                "--plot",
                str(plot),
            ]
        )
        == 0
    )
    assert plot.stat().st_size > 0
    assert len(out.read_text().splitlines()) == 2
    printed = capsys.readouterr().out
    assert (
        "freeze_depth: 1 jobs" in printed
        and "total: 1 jobs" in printed
        and "without a benchmark file left out" in printed
    )


def test_cost_table_without_benchmarks_says_to_run_the_workflow(tmp_path, capsys):
    assert (
        main(
            [
                "cost-table",
                "--config",
                "config.yaml",
                "--gpu",
                "cpu",
                "--root",
                str(tmp_path),
                "--out",
                str(tmp_path / "cost.csv"),
            ]
        )
        != 0
    )
    err = capsys.readouterr().err
    assert "run the workflow first" in err and "benchmark files" in err
    assert not (tmp_path / "cost.csv").exists()


def test_a_malformed_benchmark_file_is_named(tmp_path):
    path = tmp_path / "bad.tsv"
    path.write_text("seconds\n3\n")
    with pytest.raises(XltError, match="bad.tsv is not a Snakemake benchmark file.*rerun its job"):
        ledger.read_benchmark(path)
    path.write_text("s\tmax_rss\tcpu_time\nabc\t1\t2\n")
    with pytest.raises(XltError, match="bad.tsv.*rerun its job"):
        ledger.read_benchmark(path)


def test_disk_rows_put_each_familys_planned_disk_beside_its_outputs(tmp_path):
    planned = sweep.plan(settings.load("config.yaml"), UNIT)
    (tmp_path / "results" / "runs" / "freeze_depth" / "r").mkdir(parents=True)
    (tmp_path / "results" / "runs" / "freeze_depth" / "r" / "model.bin").write_bytes(b"x" * 2**20)
    (tmp_path / "results" / "data").mkdir(parents=True)
    (tmp_path / "results" / "data" / "d.jsonl").write_bytes(b"y" * 2**10)
    (tmp_path / "results" / "models" / "demo-mbert").mkdir(parents=True)
    (tmp_path / "results" / "models" / "demo-mbert" / "w.bin").write_bytes(b"m" * 2**21)
    (tmp_path / "hub").mkdir()
    (tmp_path / "hub" / "w").write_bytes(b"z" * 2**19)
    rows = {r["family"]: r for r in ledger.disk_rows(planned, tmp_path, tmp_path / "hub")}
    families = {j["family"] for j in planned["jobs"]}
    assert set(rows) == families | {"hub cache", "total"}
    total = rows["total"]  # every row above summed, and its own ratio
    assert total["planned_disk_gib"] == pytest.approx(
        sum(r["planned_disk_gib"] for f, r in rows.items() if f != "total"), abs=1e-5
    )
    assert total["measured_disk_gib"] == pytest.approx((2**20 + 2**10 + 2**21 + 2**19) / 2**30, rel=1e-3)
    assert total["planned_over_measured"] == pytest.approx(
        total["planned_disk_gib"] / total["measured_disk_gib"], rel=1e-2
    )
    fd = rows["freeze_depth"]
    assert (
        fd["measured_disk_gib"] == pytest.approx(2**20 / 2**30, rel=1e-3)
        and fd["measured_in"] == "results/runs/freeze_depth"
    )
    assert fd["planned_disk_gib"] == pytest.approx(
        sum(j["disk_gib"] for j in planned["jobs"] if j["family"] == "freeze_depth"), abs=1e-6
    )
    assert fd["planned_over_measured"] == pytest.approx(fd["planned_disk_gib"] / fd["measured_disk_gib"], rel=1e-2)
    # the shared jobs prepare data and build the demo models: both folders are theirs
    assert rows["shared"]["measured_in"] == "results/data, results/models"
    assert rows["shared"]["measured_disk_gib"] == pytest.approx((2**10 + 2**21) / 2**30, rel=1e-3)
    assert rows["sbert"]["measured_disk_gib"] == 0 and rows["sbert"]["planned_over_measured"] is None
    assert rows["hub cache"]["measured_disk_gib"] == pytest.approx(2**19 / 2**30, rel=1e-3)
    # the demo's sbert models are temp() outputs: planned apart, not in the disk the sweep leaves
    assert rows["sbert"]["planned_temp_gib"] > 0 and rows["sbert"]["planned_disk_gib"] == 0
    assert rows["sbert"]["planned_temp_gib"] == pytest.approx(
        sum(j["temp_gib"] for j in planned["jobs"] if j["family"] == "sbert"), abs=1e-6
    )
    out = tmp_path / "cost_disk.csv"
    ledger.write_cost_table(list(rows.values()), out, ledger.DISK_COLUMNS)
    assert out.read_text().splitlines()[0] == ",".join(ledger.DISK_COLUMNS)
