"""The h100 profile plans what the H200 measured (benchmarks/measurements/h200-gpu-check-*.json):
every measured paper-shape step within 1.3x, through the prediction the GPU check prints
(gpu_check.planned: xlt.cost.estimate.job_cost of the same job shape); the range's low end plans
the faster hosts' steps; the constants are the files' figures; sharing is the measured speed-up."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "benchmarks"))

import gpu_check  # noqa: E402

from xlt.cost import profile, sharing  # noqa: E402
from xlt.cost.constants import value  # noqa: E402

MEASUREMENTS = REPO / "benchmarks" / "measurements"
CALLS = [json.loads((MEASUREMENTS / f"h200-gpu-check-f3310b3-call{i}.json").read_text()) for i in (1, 2)]
WITHIN = 1.3  # the bound (gpu_check.WITHIN)


def planned_step_s(prof: dict, depth: int, batch: int, compiled: bool = False) -> float:
    s = {**CALLS[0]["settings"], "batch_size": 32}
    run = {"compile": compiled, "bucketing": True, "depth": depth, "batch_size": batch}
    return gpu_check.planned(s, run, prof)["step_s"]


def measured_rows():
    """(label, depth, batch, compiled, measured step s) of every timed paper-shape run and every
    one-process concurrency round in both calls."""
    for i, call in enumerate(CALLS, 1):
        for r in call["paper_shape"]:
            if "measured" in r:
                batch = r.get("batch_size", 32)
                yield (
                    f"call{i} d{r['depth']} b{batch} c{r['compile']}",
                    r["depth"],
                    batch,
                    r["compile"],
                    r["measured"]["step_s"],
                )
        for r in call["concurrency"]:
            if r["processes"] == 1:
                yield f"call{i} N=1 b{r['batch_size']}", -1, r["batch_size"], False, r["step_s_each"][0]


ROWS = list(measured_rows())


def test_every_measured_row_is_read():
    assert len(ROWS) == 10  # 5 + 1 paper-shape runs timed, 2 + 2 one-process rounds


@pytest.mark.parametrize("label, depth, batch, compiled, measured", ROWS, ids=[r[0] for r in ROWS])
def test_the_plan_holds_each_measured_h200_step_within_1_3x(label, depth, batch, compiled, measured):
    planned = planned_step_s(profile.load("h100"), depth, batch, compiled)
    assert 1 / WITHIN <= measured / planned <= WITHIN, f"{label}: {measured * 1e3:.1f} ms against {planned * 1e3:.1f}"


def test_the_range_low_end_plans_the_faster_hosts():
    """The same shape took 34.5 ms a step on another H200 (bda09e8's check, padded to x8) and the H100
    host's fixed-length batch-32 steps 32.3 ms: the profile's host_low overheads plan both within 1.3x."""
    h100 = profile.load("h100")
    fast = {**h100, **h100["host_low"]}
    other = json.loads((MEASUREMENTS / "h200-gpu-check-2-bda09e8.json").read_text())
    (row,) = [r for r in other["paper_shape"] if r.get("pad_multiple") == 8]
    assert 1 / WITHIN <= row["measured"]["step_s"] / planned_step_s(fast, -1, 32) <= WITHIN
    assert planned_step_s(fast, -1, 32) < planned_step_s(h100, -1, 32) / 1.5  # a range, not a point


def test_the_constants_are_the_files_figures():
    """xlt.cost.constants copies the measured figures (rounded to 10 us and 0.001): the same numbers."""
    steps = {}  # call by call: its paper-shape rows, then its one-process rounds
    for call in CALLS:
        for r in call["paper_shape"]:
            if "measured" in r and not r["compile"]:
                steps.setdefault((r["depth"], r.get("batch_size", 32)), []).append(r["measured"]["step_s"])
        for r in call["concurrency"]:
            if r["processes"] == 1:
                steps[(-1, r["batch_size"])].append(r["step_s_each"][0])
    table = value("h200_eager_step_s")
    assert set(table) == set(steps)
    for key, measured in steps.items():
        assert table[key] == pytest.approx(tuple(measured), abs=5e-6), key
    compiled, eager = value("h200_compiled_step_s")
    (row,) = [r for r in CALLS[0]["paper_shape"] if r["compile"] and "measured" in r]
    assert (compiled, eager) == pytest.approx(
        (row["measured"]["step_s"], CALLS[0]["paper_shape"][0]["measured"]["step_s"]), abs=5e-6
    )
    assert value("compile_s") == pytest.approx(row["compile_s"], abs=0.05)
    speedups = {}
    for call in CALLS:
        for r in call["concurrency"]:
            if r["processes"] > 1:
                speedups.setdefault(r["processes"], []).append(r["speedup_vs_one"])
    for n, measured in speedups.items():
        assert value("sharing_speedups")[n] == pytest.approx(tuple(measured), abs=5e-4), n


def test_the_fit_is_the_minimax_one():
    """No measured step is further from the plan than the fit's worst ratio, and that ratio is met
    (the fit's own FLOP count uses the measured padded tokens; the plan's, its length table)."""
    fit = profile.H200_FIT
    assert 1.0 < fit["worst_ratio"] < WITHIN
    assert all(fit[k] >= 0 for k in profile.OVERHEADS[1:])


@pytest.mark.parametrize("peers, expected", [(1, 1.0), (4, 3.56), (8, 5.08), (16, 5.08)])
def test_sharing_is_the_measured_speed_up(peers, expected):
    assert sharing.speedup(peers) == pytest.approx(expected, abs=0.01)
    two, four = sharing.speedup(2), sharing.speedup(4)
    assert sharing.speedup(3) == pytest.approx((two + four) / 2)


def test_a_shared_host_bound_step_occupies_the_gpu_for_one_over_the_speed_up():
    h100 = profile.load("h100")
    small = 1e9  # FLOP/s far below the saturating rate: host-bound
    assert sharing.gpu_seconds(100.0, small * 100, 1, 4, h100) == pytest.approx(100 / sharing.speedup(4))
    assert math.isclose(sharing.gpu_seconds(100.0, small * 100, 4, 4, h100), 100.0)
