"""`xlt plan --levers` (xlt.cost.levers): what each input of a plan carries is the plan's total less
the plan without it, checked against the same hours counted job by job; measured or assumed as the
inputs' sources say."""

from __future__ import annotations

import json

import pytest

from xlt.cli import main
from xlt.core import settings
from xlt.cost import levers, profile, sweep


@pytest.fixture(scope="module")
def paper_alone():
    """The paper sweep on the h100 profile with one job a GPU: each GPU job occupies it for its own
    seconds, so a lever's hours can be counted job by job."""
    config = settings.load("config/paper.yaml")
    config["gpu_sharing"] = {**config["gpu_sharing"], "slots_per_gpu": 1}
    h100 = profile.load("h100")
    planned = sweep.plan(config, h100)
    return h100, planned, {row["lever"]: row for row in levers.levers(config, h100, planned)}


@pytest.mark.slow  # the paper sweep planned nine times
def test_each_lever_carries_the_hours_its_input_adds_to_the_jobs_that_pay_it(paper_alone):
    h100, planned, rows = paper_alone
    assert list(rows) == [lever.name for lever in levers.LEVERS]
    gpu_jobs = [job for job in planned["jobs"] if job["loads_model"]]
    compiled = [job for job in gpu_jobs if job["compiled"]]
    assert compiled and len(compiled) < len(gpu_jobs)
    assert rows["job start-up"]["hours"] == pytest.approx(len(gpu_jobs) * h100["overhead_s"] / 3600)
    assert rows["torch.compile time"]["hours"] == pytest.approx(len(compiled) * h100["compile_s"] / 3600)
    # the training FLOPs' seconds, a compiled job's at the compiled step's ratio
    flop_s = sum(
        job["train_flops"] / h100["train_flops"] * (h100["compile_step_ratio"] if job["compiled"] else 1)
        for job in gpu_jobs
    )
    assert rows["training FLOP rate"]["hours"] == pytest.approx(flop_s / 3600)
    assert rows["GPU sharing gain"]["hours"] == 0  # sharing is already off
    for name in ("per-step overhead", "evaluation rate and overhead"):  # costs the plan adds
        assert rows[name]["hours"] > 0
    for name in ("frozen layer's share of a step", "torch.compile step ratio"):  # savings it claims
        assert rows[name]["hours"] < 0
    total = planned["total"]["gpu_hours"]
    for row in rows.values():
        assert row["share"] == pytest.approx(abs(row["hours"]) / total)


@pytest.mark.slow  # the paper_alone fixture
def test_the_h100_inputs_are_measured_or_assumed_as_their_sources_say(paper_alone):
    _, _, rows = paper_alone
    assert {name for name, row in rows.items() if row["status"] == "measured"} == {
        "training FLOP rate",
        "per-step overhead",
        "frozen layer's share of a step",
        "torch.compile time",
        "GPU sharing gain",
    }
    # measured at one compiled shape, applied to the others
    assert "not measured at the others" in rows["torch.compile step ratio"]["source"]
    assert rows["evaluation rate and overhead"]["source"] == levers.EVAL_DERIVED


def test_a_profile_without_sourced_constants_speaks_for_its_fitted_inputs():
    start_up, sharing = levers.LEVERS[0], levers.LEVERS[-1]
    a100 = profile.load("a100")
    assert levers.source(start_up, a100) == a100["source"] and not levers.measured(a100["source"])
    calibrated = {"source": "measured: xlt calibrate on this machine (cpu, 2 threads), 2026-11-28"}
    assert levers.measured(levers.source(start_up, calibrated))
    assert levers.source(sharing, calibrated).startswith("measured")  # the same constant for every profile


def test_measured_means_a_measured_source_that_assumes_nothing():
    assert levers.measured("measured: benchmarks/mfu.py on an H100")
    assert not levers.measured("measured: at batch 128; applied at every other shape: assumed")
    assert not levers.measured("assumed: a typical value")
    assert not levers.measured("not measured: scaled from the H100")


def test_plan_levers_prints_each_lever_and_names_the_assumptions_over_the_limit(capsys):
    assert main(["plan", "--config", "config.yaml", "--gpu", "h100", "--levers", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["levers"]
    assert [row["lever"] for row in rows] == [lever.name for lever in levers.LEVERS]
    heavy = [r["lever"] for r in rows if r["status"] == "assumed" and r["share"] > levers.MAX_ASSUMED_SHARE]
    assert heavy  # the demo's jobs are mostly start-up, an assumed GPU figure
    assert main(["plan", "--config", "config.yaml", "--gpu", "h100", "--levers"]) == 0
    text = capsys.readouterr().out
    assert f"assumed inputs carrying over 20% of the total: {heavy[0]} (" in text
    for row in rows:
        assert f"{row['lever']:<34}{row['status']:<10}{row['hours']:>+9.2f}" in text
