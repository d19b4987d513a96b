"""The Snakemake DAG covers the adapt family, for the offline demo and the paper-scale config."""

import re
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[3]
RULES = ("adapt_eval_set", "adapt_mlm", "adapt_reference_perplexity", "aggregate_adapt", "adapt_summary", "plot_adapt")


def _job_counts(dry_runs, configfile: str) -> dict[str, int]:
    """The rule counts of the session's dry run of `configfile` (every job planned: a fresh copy)."""
    counts = dict(re.findall(r"^(\w+)\s+(\d+)$", dry_runs(configfile).stdout, flags=re.MULTILINE))
    return {rule: int(n) for rule, n in counts.items()}


@pytest.mark.slow
def test_demo_dag_has_the_adapt_jobs(dry_runs):
    counts = _job_counts(dry_runs, "config.yaml")
    assert {rule: counts.get(rule) for rule in RULES} == {
        "adapt_eval_set": 4,  # target dev, target test, multilingual, comparison sentences
        "adapt_mlm": 3,  # 3 schemes x 1 seed
        "adapt_reference_perplexity": 2,  # native + untouched transfer model
        "aggregate_adapt": 1,
        "adapt_summary": 1,
        "plot_adapt": 5,  # word-nll beside final-perplexity
    }
    # every demo model of config.yaml is built once, the adapt family's native model among them
    config = yaml.safe_load((ROOT / "config.yaml").read_text())
    demo_models = {name for name, model in config["models"].items() if model["source"] == "demo"}
    assert config["adapt"]["native"] in demo_models
    assert counts["build_demo_model"] == len(demo_models)


@pytest.mark.slow
def test_paper_dag_has_the_adapt_jobs_offline(dry_runs):
    counts = _job_counts(dry_runs, "config/paper.yaml")
    assert counts["adapt_mlm"] == 15  # the seed's 5 schemes x 3 seeds
    assert counts["adapt_reference_perplexity"] == 2 and counts["adapt_eval_set"] == 4
    assert counts["plot_adapt"] == 5 and counts["adapt_summary"] == 1


def test_the_default_run_compares_adapt_schemes():
    """The statistics rule writes adapt_tests.csv from every adapted run's and reference model's
    metrics (their per-sentence outputs lie beside them)."""
    from xlt.analysis import targets as statistics
    from xlt.core import settings
    from xlt.families.adapt import plan

    config = settings.load(str(ROOT / "config.yaml"))
    assert "results/tables/adapt_tests.csv" in statistics.targets(config)
    files = statistics.evaluation_files(config, "adapt")
    assert sorted(files) == sorted(
        [plan.RUN.format(run_id=r) for r in plan.jobs(config)["adapt_mlm"]]
        + [plan.REFERENCE.format(run_id=r["run_id"]) for r in plan.references(config)]
    )
    assert len(files) == 3 + 2
