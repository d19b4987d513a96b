"""benchmarks/gpu_check.sh --smoke (the device check's code paths on the CPU, tiny shape): every
section written, every figure computed from what was measured and what the plan says; and the
pieces it is built from (the length sample, the plan's prediction, the concurrent window, the
budget) checked against independent counts."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "benchmarks"))

import gpu_check  # noqa: E402
import gpu_worker  # noqa: E402


@pytest.fixture(scope="module")
def smoke(tmp_path_factory):
    out = tmp_path_factory.mktemp("gpu-check")
    env = {**os.environ, "PYTHON": sys.executable}
    proc = subprocess.run(
        ["bash", str(REPO / "benchmarks" / "gpu_check.sh"), str(out), "--smoke"],
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return out, json.loads((out / "gpu_check.json").read_text()), (out / "gpu_check.md").read_text()


@pytest.mark.slow
def test_smoke_writes_every_section(smoke):
    out, results, md = smoke
    log = (out / "gpu_check.log").read_text()
    assert log.startswith("# GPU check: estimated")
    assert "depth 1, bucketed, compiled: " in log and "planned (measured / planned " in log
    for key in ("torch", "transformers", "gpu", "nvidia_smi", "git_commit", "cuda"):
        assert key in results["environment"]
    runs = results["paper_shape"]
    assert [(r["compile"], r["bucketing"], r["depth"]) for r in runs] == [
        (False, True, 1),
        (False, False, 1),
        (True, True, 1),
    ]
    assert [(r["batch_size"], r["processes"]) for r in results["concurrency"]] == [(8, 1), (8, 2)]
    assert not [r for r in runs + results["concurrency"] if "skipped" in r]
    for heading in ("## Environment", "## 1. Paper shape", "## 2. Concurrency"):
        assert heading in md
    for row in (
        "| 1 | bucketed | eager | 5 |",
        "| 1 | random | eager | 5 |",
        "| 1 | bucketed | compiled | 5 |",
        "\n| 8 | 1 | 1 | 4 |",
        "\n| 8 | 2 | 1 | 4 |",
    ):
        assert row in md


@pytest.mark.slow  # the module's smoke fixture: gpu_check.sh --smoke in a subprocess
def test_smoke_ratios_are_measured_over_planned(smoke):
    _, results, _ = smoke
    eager, random_batches, compiled = results["paper_shape"]
    for r in (eager, random_batches, compiled):
        m = r["measured"]
        assert m["timed_steps"] == 8 - 3
        assert r["ratio"] == pytest.approx(m["step_s"] / r["planned"]["step_s"])
        assert r["within"] == (1 / gpu_check.WITHIN <= r["ratio"] <= gpu_check.WITHIN)
        assert m["useful_tokens_per_example"] <= m["padded_tokens_per_example"] <= 128
    assert compiled["compile_step_ratio"] == pytest.approx(compiled["measured"]["step_s"] / eager["measured"]["step_s"])
    assert compiled["compile_s"] == pytest.approx(
        compiled["measured"]["startup_excess_s"] - eager["measured"]["startup_excess_s"]
    )
    # bucketing pads less than random batches, in the sample and in the plan
    assert eager["measured"]["padded_tokens_per_example"] < random_batches["measured"]["padded_tokens_per_example"]
    assert eager["planned"]["padded_tokens_per_example"] < random_batches["planned"]["padded_tokens_per_example"]
    one, two = results["concurrency"]
    assert one["speedup_vs_one"] == 1.0
    assert two["speedup_vs_one"] == pytest.approx(two["useful_tokens_per_s"] / one["useful_tokens_per_s"])
    assert len(two["step_s_each"]) == 2 and two["window_s"] > 0


def test_plan_prediction_is_the_plans_job_cost():
    from xlt.cost import profile, tokens

    s = gpu_check.settings(gpu_check.build_parser().parse_args(["--out", "x"]))
    h100 = profile.load("h100")
    eager = gpu_check.planned(s, {"compile": False, "bucketing": True, "depth": -1}, h100)
    compiled = gpu_check.planned(s, {"compile": True, "bucketing": True, "depth": -1}, h100)
    deep = gpu_check.planned(s, {"compile": False, "bucketing": True, "depth": 8}, h100)
    assert compiled["step_s"] == pytest.approx(eager["step_s"] * h100["compile_step_ratio"])
    assert compiled["compile_s"] == h100["compile_s"] and eager["compile_s"] == 0
    assert deep["step_s"] < eager["step_s"]
    xnli = tokens.KNOWN_LENGTHS[gpu_worker.XNLI]
    assert eager["padded_tokens_per_example"] == pytest.approx(
        tokens.example_tokens(xnli, ("pair",), 128, 32, bucketing=True), rel=1e-6
    )
    # the profile's own step: overheads + 6 x params x tokens / rate (mBERT, nothing frozen)
    batch_tokens = 32 * eager["padded_tokens_per_example"]
    by_hand = (
        h100["step_s"]
        + 12 * h100["step_layer_s"]
        + 32 * 12 * h100["step_example_layer_s"]
        + 6 * 12 * 768**2 * 12 * batch_tokens / h100["train_flops"]
    )
    assert eager["step_s"] == pytest.approx(by_hand)


def test_length_sample_follows_the_plans_table():
    from xlt.cost import tokens

    lengths = gpu_worker.sample_lengths(20000, 128, seed=3)
    assert max(lengths) <= 128 and min(lengths) >= 3
    expected = tokens.useful_length(tokens.KNOWN_LENGTHS[gpu_worker.XNLI]["pair"], 128)
    assert sum(lengths) / len(lengths) == pytest.approx(expected, rel=0.02)


def test_concurrent_window_counts_only_the_overlap():
    # A: steps of 10 tokens starting at 0,1,2,3, ends at 4; B: steps of 20 tokens at 1.5, 2.5, ends 3.5.
    # Past warm-up (1 step): A from 1, B from 2.5; the window is 2.5 .. 3.5 (B ends first):
    # A does 10 tokens a second there, B 20: 30 tokens/s together
    a = {"step_starts": [0.0, 1.0, 2.0, 3.0], "end": 4.0, "useful_tokens": [10] * 4, "padded_tokens": [12] * 4}
    b = {"step_starts": [1.5, 2.5], "end": 3.5, "useful_tokens": [20] * 2, "padded_tokens": [40] * 2}
    out = gpu_check.aggregate([a, b], warmup=1)
    assert out["window_s"] == pytest.approx(1.0)
    assert out["useful_tokens_per_s"] == pytest.approx(30.0)
    assert out["padded_tokens_per_s"] == pytest.approx(52.0)


def test_over_budget_skips_with_a_note_and_still_writes(tmp_path):
    assert gpu_check.main(["--out", str(tmp_path), "--smoke", "--budget-s", "0"]) == 0
    results = json.loads((tmp_path / "gpu_check.json").read_text())
    rows = results["paper_shape"] + results["concurrency"]
    assert len(rows) == 5 and all(r["skipped"].startswith("over budget") for r in rows)
    assert results["environment"]["torch"]
    assert "skipped: over budget" in (tmp_path / "gpu_check.md").read_text()


def test_environment_names_the_commit_without_a_git_checkout(tmp_path, monkeypatch):
    monkeypatch.setattr(gpu_check, "REPO", tmp_path)  # a copy of the tree without .git
    monkeypatch.setenv("XLT_COMMIT", "abc1234")
    assert gpu_check.environment()["git_commit"] == "abc1234"
    monkeypatch.delenv("XLT_COMMIT")
    assert gpu_check.environment()["git_commit"].startswith("unknown")


def test_paper_runs_parse_and_refuse_what_they_do_not_know():
    runs = [
        gpu_check.parse_run(t)
        for t in (
            "bucketed:eager:-1:pad8:profile",
            "random:compiled:8:cudagraphs",
            "bucketed:eager:-1:b8",
            "bucketed:capture:8:b8",
            "bucketed:graphs-compile:-1",
        )
    ]
    assert runs == [
        {"compile": False, "bucketing": True, "depth": -1, "pad_multiple": 8, "profile": True},
        {"compile": True, "bucketing": False, "depth": 8, "compile_mode": "reduce-overhead"},
        {"compile": False, "bucketing": True, "depth": -1, "batch_size": 8},
        {"compile": False, "bucketing": True, "depth": 8, "graphs": "capture", "batch_size": 8},
        {"compile": False, "bucketing": True, "depth": -1, "graphs": "compile"},
    ]
    assert [gpu_check.mode_of(r) for r in runs] == ["eager", "compiled", "eager", "capture", "graphs-compile"]
    assert [gpu_check.batches_label(r) for r in runs] == [
        "bucketed, padded to x8, profiled",
        "random, CUDA graphs",
        "bucketed, batch 8",
        "bucketed, batch 8, graphs: capture",
        "bucketed, graphs: compile",
    ]
    assert [gpu_check.batch_of({"batch_size": 32}, r) for r in runs] == [32, 32, 8, 8, 32]
    early, late = gpu_check.paper_runs(
        {
            "paper_runs": [
                "bucketed:eager:-1",
                "bucketed:compiled:-1",
                "bucketed:capture:-1",
                "bucketed:graphs-compile:8",
            ]
        }
    )
    # the compiles (minutes each) after the rest
    assert [gpu_check.mode_of(r) for r in early + late] == ["eager", "capture", "compiled", "graphs-compile"]
    for bad in (
        "sorted:eager:-1",
        "bucketed:eager:-1:pad",
        "bucketed:eager:-1:cudagraphs",
        "bucketed:capture:-1:cudagraphs",
        "bucketed:jit:0",
        "bucketed:eager:0:b",
    ):
        with pytest.raises(SystemExit, match="--paper-runs"):
            gpu_check.parse_run(bad)


def device_settings(*argv):
    return gpu_check.settings(gpu_check.build_parser().parse_args(["--out", "unused", *argv]))


def test_the_default_device_call_is_the_issues_one_within_8_minutes():
    """Without --paper-runs (issue 46): eager at depth -1, batch 32; the captured steps at depths -1
    and 8, batches 32 and 8; one short profiled captured run; the rounds of the captured mode at
    N = 1, 4, 8; torch.compile reduce-overhead last, as far as the budget goes; estimated <= 480 s."""
    s = device_settings()
    early, late = gpu_check.paper_runs(s)
    assert [(gpu_check.mode_of(r), r["depth"], gpu_check.batch_of(s, r), bool(r.get("profile"))) for r in early] == [
        ("eager", -1, 32, False),
        ("capture", -1, 32, False),
        ("capture", 8, 32, False),
        ("capture", -1, 8, False),
        ("capture", 8, 8, False),
        ("capture", -1, 32, True),
    ]
    assert early[-1]["steps"] == s["warmup"] + gpu_check.PROFILE_STEPS  # a short run: 10 profiled steps and margin
    assert [(gpu_check.mode_of(r), r["depth"]) for r in late] == [("graphs-compile", -1)]
    assert s["concurrency"] == (1, 4, 8) and s["concurrency_mode"] == "capture"
    assert s["concurrency_batch_sizes"] == (32, 8)
    assert gpu_check.estimate_s(s) <= gpu_check.DEVICE_BUDGET_S == 480
    assert gpu_check.build_parser().parse_args(["--out", "x"]).budget_s == 480
    lines = gpu_check.estimate_lines(s)
    assert len(lines) == len(early) + len(late) + 6 and lines[-1].endswith("(last)")


def test_paper_runs_start_no_concurrency_round_unless_asked():
    """f3310b3's second call picked its runs with --paper-runs and still ran the default rounds,
    which spent the budget its compiled runs needed."""
    assert device_settings("--paper-runs", "bucketed:capture:-1:b8")["concurrency"] == ()
    assert device_settings("--paper-runs", "bucketed:capture:-1", "--concurrency", "1", "4")["concurrency"] == (1, 4)
    assert device_settings("--concurrency")["concurrency"] == ()
    s = device_settings("--paper-runs", "bucketed:capture:-1:b8")
    assert gpu_check.estimate_s(s) == s["estimates"]["capture"]


def test_a_rounds_mode_is_its_runs_mode_and_costs_its_set_up():
    s = device_settings("--concurrency-mode", "eager")
    e = s["estimates"]
    assert gpu_check.round_cost(s, 4) == e["round"] + 4 * e["per_process"]
    s = device_settings("--concurrency-mode", "graphs-compile")
    assert gpu_check.round_cost(s, 4) == e["round"] + 4 * e["per_process"] + e["graphs-compile"] - e["eager"]
    with pytest.raises(SystemExit):
        device_settings("--concurrency-mode", "static")


def test_the_gpu_busy_share_is_the_union_of_the_kernels_over_their_span():
    # two overlapping kernels (0-4, 2-6), a gap, one more (8-10): busy 8 of a 10 span
    assert gpu_worker.busy_time([(8.0, 10.0), (0.0, 4.0), (2.0, 6.0)]) == (8.0, 10.0)
    assert gpu_worker.busy_time([]) == (0.0, 0.0)
