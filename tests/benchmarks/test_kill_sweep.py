"""benchmarks/kill_sweep.py, the fast version: a real `xlt finetune` job killed at 3 points (SIGKILL
inside a checkpoint write, SIGKILL inside the final save, SIGTERM after a step), each resumed and
compared exactly with an uninterrupted run; and the sweep's checks themselves, shown to catch what
they are there to catch."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest
import torch
from helpers.job_server import job_server

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))

import kill_sweep  # noqa: E402
from kill_sweep import Job, Point  # noqa: E402

JOB = Job(steps=60, checkpoint_every=15, eval_every=20)


@pytest.fixture(scope="module")
def swept(tmp_path_factory):
    from xlt import cli

    workdir = tmp_path_factory.mktemp("kill-sweep")
    # the inputs in this process (torch is loaded already): 2 fewer `xlt` start-ups; every
    # run that is killed, resumed or compared is still its own `xlt finetune` process
    inputs = workdir / "inputs"
    for args in kill_sweep.input_commands(inputs):
        assert cli.main(args) == 0, args
    lines = []
    # each `xlt finetune` (killed, resumed or uninterrupted) forks from one job server, as the jobs
    # of a local workflow run do: a process of its own, killed and signalled as one, without
    # importing torch and transformers again (7 runs)
    with job_server(kill_sweep.environment()) as server:
        outcomes = kill_sweep.sweep(3, JOB, workdir, echo=lines.append, inputs=inputs)
    assert server.summary == "xlt job-server: 7 jobs forked, 0 declined", server.summary
    return workdir, outcomes, lines


@pytest.mark.slow
def test_three_kills_resume_to_the_uninterrupted_result(swept):
    workdir, outcomes, lines = swept
    assert [o.point for o in outcomes] == [
        Point("step", 30, "TERM"),
        Point("checkpoint", 2, "KILL"),
        Point("save", 1, "KILL"),
    ]
    for outcome in outcomes:
        assert outcome.problems == [] and outcome.identical, "\n".join(lines)
    # the kills landed where planned (the sweep checks it; here the figures themselves)
    term, in_checkpoint, in_save = outcomes
    assert (term.exit_status, term.left_checkpoint, term.resumed_from, term.temporaries) == (75, 30, 30, 0)
    assert (in_checkpoint.exit_status, in_checkpoint.left_checkpoint, in_checkpoint.temporaries) == (-9, 15, 1)
    assert (in_save.exit_status, in_save.left_checkpoint, in_save.temporaries) == (-9, 45, 1)
    assert in_save.resumed_from == 45
    history = json.loads((workdir / "reference" / "train.json").read_text())["meta"]["history"]
    assert [h["step"] for h in history] == [20, 40, 60]


@pytest.mark.slow  # the module's swept fixture: a real job killed 3 times
def test_the_comparison_sees_one_changed_weight_and_one_changed_metric(swept, tmp_path):
    from safetensors.torch import load_file, save_file

    workdir, _, _ = swept
    reference = workdir / "reference"
    copy = tmp_path / "copy"
    shutil.copytree(reference, copy)
    assert kill_sweep.differences(copy, reference) == []

    weights = load_file(copy / "model" / "model.safetensors")
    name = sorted(weights)[0]
    weights[name] = weights[name].clone()
    weights[name].view(-1)[0] = torch.nextafter(weights[name].view(-1)[0], torch.tensor(float("inf")))  # one ulp
    save_file(weights, copy / "model" / "model.safetensors", metadata={"format": "pt"})
    metrics = json.loads((copy / "train.json").read_text())
    metrics["meta"]["history"][0]["loss"] += 1e-12
    metrics["meta"]["train_wall_s"] += 5.0  # timings are not compared
    (copy / "train.json").write_text(json.dumps(metrics))
    found = kill_sweep.differences(copy, reference)
    assert len(found) == 2 and name in found[0] and "history" in found[1], found


@pytest.mark.slow
def test_the_atomicity_check_finds_half_written_files_and_ignores_temporaries(swept, tmp_path):
    workdir, _, _ = swept
    reference = workdir / "reference"
    run = tmp_path / "run"
    (run / "checkpoint").mkdir(parents=True)
    (run / "checkpoint" / ".checkpoint.pt.x1.tmp").write_bytes(b"PK\x03 half")  # a killed write's leftover
    (run / ".model.x2.tmp").mkdir()
    (run / ".model.x2.tmp" / "config.json").write_text("{")
    assert kill_sweep.half_written(run, reference) == ([], 2, None)

    (run / "train.json").write_text('{"meta": {')  # a half-written output
    (run / "checkpoint" / "checkpoint.pt").write_bytes(b"PK\x03 half")
    problems, _, _ = kill_sweep.half_written(run, reference)
    assert any(p.startswith("train.json does not load") for p in problems)
    assert any(p.startswith("checkpoint/checkpoint.pt does not load") for p in problems)
    assert "train.json exists without the model it describes" in problems

    (run / "train.json").unlink()
    shutil.copytree(reference / "model", run / "model")
    (run / "model" / "tokenizer.json").unlink()  # an incomplete model directory
    problems, _, _ = kill_sweep.half_written(run, reference)
    assert any("model files" in p for p in problems)


def test_the_points_are_spread_and_alternate():
    points = kill_sweep.plan_points(20, Job(240, 25, 45))
    steps = [p for p in points if p.where == "step"]
    assert [p.n for p in steps] == list(range(15, 241, 15))
    assert [p.signal for p in steps] == ["TERM", "KILL"] * 8
    assert sorted((p.where, p.signal) for p in points if p.where != "step") == [
        ("checkpoint", "KILL"),
        ("checkpoint", "TERM"),
        ("save", "KILL"),
        ("save", "TERM"),
    ]
    assert kill_sweep.expected_after_kill(Point("step", 150, "KILL"), Job(240, 25, 45)) == ({-9}, 125)
    assert kill_sweep.expected_after_kill(Point("checkpoint", 1, "KILL"), Job(240, 25, 45)) == ({-9}, None)
