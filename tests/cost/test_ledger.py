"""The cost ledger: benchmark files on every model rule, joined with the plan into cost.csv."""
import csv
import re
from pathlib import Path

from xlt.cli import main
from xlt.core import settings
from xlt.cost import estimate, ledger

# what Snakemake's benchmark directive writes (snakemake.benchmark.BenchmarkRecord)
TSV = ("s\th:m:s\tmax_rss\tmax_vms\tmax_uss\tmax_pss\tio_in\tio_out\tmean_load\tcpu_time\n"
       "{s}\t0:00:12\t812.5\t2000.1\t700.0\t710.0\t1.0\t2.0\t90.0\t{cpu}\n")


def test_every_rule_that_loads_a_model_writes_a_benchmark_file():
    config = settings.load("config.yaml")
    rules_text = "".join(p.read_text() for p in Path("workflow/rules").glob("*.smk"))
    benchmarked = {(fam, rule) for fam, rule in re.findall(r'benchmark_pattern\("(\w+)", "(\w+)"', rules_text)}
    ledgered = {(fam, rule) for fam, rules in ledger.LEDGER_RULES.items() for rule in rules}
    assert benchmarked == ledgered
    for family, rule, _, args in estimate.all_jobs(config):
        if "--model" in [str(a) for a in args]:
            assert (family, rule) in ledgered, f"{rule} loads a model but has no benchmark: file"


def test_cost_table_joins_benchmarks_with_the_plan(tmp_path, capsys):
    config = settings.load("config.yaml")
    unit = {"name": "unit", "train_flops": 1e9, "eval_flops": 1e9, "overhead_s": 5.0, "gpu": False, "source": "t"}
    planned = estimate.plan(config, unit)
    jobs = [j for j in planned["jobs"] if j["rule"] == "finetune"][:2]
    for job, measured in zip(jobs, (jobs[0]["seconds"] * 1.5, jobs[1]["seconds"] * 3)):
        path = tmp_path / ledger.benchmark_file(job["family"], job["rule"], job["run_id"])
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(TSV.format(s=measured, cpu=measured * 0.9))
    rows = ledger.cost_rows(planned, tmp_path)
    assert [r["run_id"] for r in rows] == [j["run_id"] for j in jobs]
    assert rows[0]["max_rss_mb"] == 812.5 and rows[0]["measured_s"] == jobs[0]["seconds"] * 1.5
    summary = ledger.within_factor(rows)
    assert (summary["jobs"], summary["jobs_within"]) == (2, 1)
    assert summary["total_ratio"] == sum(r["planned_s"] for r in rows) / sum(r["measured_s"] for r in rows)
    out = tmp_path / "cost.csv"
    ledger.write_cost_table(rows, out)
    with open(out) as f:
        table = list(csv.DictReader(f))
    assert list(table[0]) == list(ledger.COLUMNS) and len(table) == 2


def test_cost_table_verb_writes_csv_and_plot(tmp_path, monkeypatch, capsys):
    config = settings.load("config.yaml")
    job = next(j for j in estimate.all_jobs(config) if j[1] == "evaluate_xnli")
    path = tmp_path / ledger.benchmark_file(job[0], job[1], job[2])
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(TSV.format(s=7.0, cpu=6.0))
    out, plot = tmp_path / "cost.csv", tmp_path / "cost.png"
    assert main(["cost-table", "--config", "config.yaml", "--gpu", "cpu", "--root", str(tmp_path),
                 "--out", str(out), "--plot", str(plot)]) == 0
    assert plot.stat().st_size > 0
    assert len(out.read_text().splitlines()) == 2
    assert "1 jobs" in capsys.readouterr().out

