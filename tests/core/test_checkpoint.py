"""Resumable checkpoints: atomic saves, exact RNG round trips, and a toy training loop that
is killed (SIGKILL, SIGTERM) in a subprocess and resumed to exactly the parameters and
metrics of an uninterrupted run."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import torch
from helpers import toy_training

from xlt.core import checkpoint as ckpt

TESTS = Path(__file__).resolve().parents[1]


def _tiny_setup(seed: int = 0):
    torch.manual_seed(seed)
    model = torch.nn.Linear(4, 3)
    optimizer = torch.optim.AdamW(model.parameters(), lr=0.1)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: 1.0 - s / 10)
    for _ in range(2):
        model(torch.randn(5, 4)).pow(2).mean().backward()
        optimizer.step()
        scheduler.step()
        optimizer.zero_grad()
    return model, optimizer, scheduler


def _draws() -> list:
    return [random.random(), np.random.rand(3).tolist(), torch.rand(3).tolist(), torch.randn(2).tolist()]


def test_round_trip_restores_state_and_identical_rng_streams(tmp_path):
    model, optimizer, scheduler = _tiny_setup()
    random.seed(3), np.random.seed(3), torch.manual_seed(3)
    random.gauss(0, 1)  # leaves a cached Gaussian in Python's state
    ckpt.save_checkpoint(
        tmp_path,
        2,
        model,
        optimizer,
        scheduler,
        extra={"best": np.float32(0.5), "hist": [{"a": np.arange(3)}]},
        epoch=1,
        position=7,
        order_seed=42,
    )
    expected = _draws() + [random.gauss(0, 1)]
    expected_params = {k: v.clone() for k, v in model.state_dict().items()}
    expected_lr = scheduler.get_last_lr()

    fresh_model, fresh_opt, fresh_sched = _tiny_setup(seed=99)  # different weights and RNG use
    state = ckpt.load_checkpoint(tmp_path)
    ckpt.restore(state, fresh_model, fresh_opt, fresh_sched)
    assert _draws() + [random.gauss(0, 1)] == expected
    assert all(torch.equal(fresh_model.state_dict()[k], v) for k, v in expected_params.items())
    assert fresh_sched.get_last_lr() == expected_lr
    assert fresh_opt.state_dict()["state"][0]["step"] == 2
    assert (state["step"], state["epoch"], state["position"], state["order_seed"]) == (2, 1, 7, 42)
    assert state["extra"]["best"] == 0.5 and torch.equal(state["extra"]["hist"][0]["a"], torch.arange(3))


def test_load_without_checkpoint_is_none_and_extra_must_be_plain(tmp_path):
    assert ckpt.load_checkpoint(tmp_path / "missing") is None
    model, optimizer, scheduler = _tiny_setup()
    with pytest.raises(TypeError, match=r"extra\['fn'\]"):
        ckpt.save_checkpoint(tmp_path, 1, model, optimizer, scheduler, extra={"fn": object()})


def test_failed_write_keeps_previous_checkpoint(tmp_path, monkeypatch):
    model, optimizer, scheduler = _tiny_setup()
    ckpt.save_checkpoint(tmp_path, 1, model, optimizer, scheduler)
    before = ckpt.checkpoint_path(tmp_path).read_bytes()

    def crash_mid_write(obj, f):
        f.write(b"PK\x03\x04 half a checkpoint")
        raise OSError("disk full")

    monkeypatch.setattr(ckpt.torch, "save", crash_mid_write)
    with pytest.raises(OSError, match="disk full"):
        ckpt.save_checkpoint(tmp_path, 2, model, optimizer, scheduler)
    monkeypatch.undo()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["checkpoint.pt"]
    assert ckpt.checkpoint_path(tmp_path).read_bytes() == before
    assert ckpt.load_checkpoint(tmp_path)["step"] == 1

    # a SIGKILL mid-write leaves a temporary behind: it is ignored, then cleaned up
    stale = tmp_path / ".checkpoint.pt.abc123.tmp"
    stale.write_bytes(b"truncated")
    assert ckpt.load_checkpoint(tmp_path)["step"] == 1
    ckpt.save_checkpoint(tmp_path, 3, model, optimizer, scheduler)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["checkpoint.pt"]  # only the latest
    assert ckpt.load_checkpoint(tmp_path)["step"] == 3
    stale.write_bytes(b"truncated")
    ckpt.remove_checkpoint(tmp_path)
    assert not tmp_path.exists()


def test_graceful_stop_turns_signals_into_a_flag():
    previous = signal.getsignal(signal.SIGTERM)
    with ckpt.GracefulStop() as stop:
        assert not stop.requested
        os.kill(os.getpid(), signal.SIGUSR1)
        time.sleep(0.01)
        assert stop.requested and stop.signal == signal.SIGUSR1
        with pytest.raises(SystemExit) as exit_info:
            stop.exit()
        assert exit_info.value.code == ckpt.EXIT_PREEMPTED
    assert signal.getsignal(signal.SIGTERM) == previous


def _toy(out: Path, ckdir: Path, *extra: str) -> list[str]:
    return [str(out), "--checkpoint-dir", str(ckdir), *extra]


def _start_toy(out: Path, ckdir: Path, *extra: str) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(TESTS.parent / "src"), os.environ.get("PYTHONPATH", "")]))
    return subprocess.Popen(
        [sys.executable, str(TESTS / "helpers" / "toy_training.py"), *_toy(out, ckdir, *extra)],
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )


def _wait_for_line(proc: subprocess.Popen, prefix: str) -> list[str]:
    lines = []
    for line in proc.stderr:
        lines.append(line)
        if line.startswith(prefix):
            return lines
    raise AssertionError(f"toy training ended before printing {prefix!r}:\n{''.join(lines)}")


def _same_result(a: Path, b: Path) -> None:
    pa, pb = torch.load(a / "params.pt"), torch.load(b / "params.pt")
    assert pa.keys() == pb.keys() and all(torch.equal(pa[k], pb[k]) for k in pa)
    assert json.loads((a / "metrics.json").read_text()) == json.loads((b / "metrics.json").read_text())


@pytest.mark.slow
def test_killed_toy_training_resumes_to_the_uninterrupted_result(tmp_path):
    # the interrupted runs start first and run in parallel (torch imports are slow)
    killed = _start_toy(tmp_path / "killed", tmp_path / "ck_killed", "--checkpoint-every", "3", "--sleep", "0.05")
    terminated = _start_toy(tmp_path / "term", tmp_path / "ck_term", "--sleep", "0.05")

    assert toy_training.main(_toy(tmp_path / "reference", tmp_path / "ck_reference")) == 0
    reference = json.loads((tmp_path / "reference" / "metrics.json").read_text())
    assert len(reference["history"]) == 8 and not (tmp_path / "ck_reference").exists()

    _wait_for_line(killed, "checkpoint at step 6")
    killed.kill()  # SIGKILL at whatever point it is: maybe inside a save
    assert killed.wait() == -signal.SIGKILL
    _wait_for_line(terminated, "training")
    time.sleep(0.3)
    terminated.send_signal(signal.SIGTERM)
    term_log = "".join(_wait_for_line(terminated, "stopping at step"))
    assert terminated.wait() == ckpt.EXIT_PREEMPTED, term_log
    stopped_at = ckpt.load_checkpoint(tmp_path / "ck_term")["step"]
    assert 0 < stopped_at < 30, "SIGTERM came too late to test a stop mid-run"

    for name in ("killed", "term"):
        assert not (tmp_path / name).exists()
        assert toy_training.main(_toy(tmp_path / name, tmp_path / f"ck_{name}")) == 0
        _same_result(tmp_path / name, tmp_path / "reference")
        assert not (tmp_path / f"ck_{name}").exists()  # removed once the outputs exist


def _shared_loop_run(checkpoint_dir, on_step=None, max_steps=12, lr=5e-2, identity=None):
    """xlt.core.training.train on a small classifier: dropout, AdamW with decay groups, warm-up and
    decay, gradient accumulation across epoch boundaries, evaluation with best-state selection."""
    from xlt.core.train_args import TrainArgs
    from xlt.core.train_inputs import DevSelection, LayerSchedule, Objective, Resumable
    from xlt.core.training import train

    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(6, 16), torch.nn.ReLU(), torch.nn.Dropout(0.3), torch.nn.Linear(16, 3))
    g = torch.Generator().manual_seed(1)
    x = torch.randn(37, 6, generator=g)
    examples = [{"x": x[i], "y": int(x[i, :3].sum() > 0) + int(x[i, 3] > 1)} for i in range(37)]

    def collate(batch):
        return {"x": torch.stack([e["x"] for e in batch]), "y": torch.tensor([e["y"] for e in batch])}

    def evaluate(m):
        m.eval()
        with torch.no_grad():
            batch = collate(examples[:12])
            acc = (m(batch["x"]).argmax(-1) == batch["y"]).float().mean().item()
        return {"score": acc, "dev_accuracy": acc}

    args = TrainArgs(
        max_steps=max_steps,
        batch_size=8,
        grad_accum=2,
        lr=lr,
        warmup_ratio=0.25,
        eval_every=3,
        device="cpu",
        log_every=2,
        checkpoint_every=5,
        seed=3,
    )
    result = train(
        model,
        Objective(examples, collate, lambda m, b: torch.nn.functional.cross_entropy(m(b["x"]), b["y"])),
        args,
        dev=DevSelection(evaluate),
        checkpoint=Resumable(checkpoint_dir, identity),
        layers=LayerSchedule(on_step=on_step),
    )
    return model, result


def test_shared_training_loop_stops_on_a_signal_and_resumes_exactly(tmp_path):
    ref_model, ref = _shared_loop_run(None)

    def sigterm_at_step_6(step, epoch):
        if step == 6:
            os.kill(os.getpid(), signal.SIGTERM)

    with pytest.raises(SystemExit) as stopped:
        _shared_loop_run(tmp_path / "ck", on_step=sigterm_at_step_6)
    assert stopped.value.code == ckpt.EXIT_PREEMPTED
    assert ckpt.load_checkpoint(tmp_path / "ck")["step"] == 7  # the step in flight completes, then it stops

    model, result = _shared_loop_run(tmp_path / "ck")
    assert all(torch.equal(a, b) for a, b in zip(model.state_dict().values(), ref_model.state_dict().values()))
    assert result.history == ref.history and len(ref.history) == 4
    assert (result.steps, result.best_step, result.best_score) == (ref.steps, ref.best_step, ref.best_score)


def _sigterm_at_step_6(step, epoch):
    if step == 6:
        os.kill(os.getpid(), signal.SIGTERM)


def _stopped_at_step_7(checkpoint_dir, **kwargs) -> None:
    with pytest.raises(SystemExit) as stopped:
        _shared_loop_run(checkpoint_dir, on_step=_sigterm_at_step_6, **kwargs)
    assert stopped.value.code == ckpt.EXIT_PREEMPTED and ckpt.load_checkpoint(checkpoint_dir)["step"] == 7


def _same_weights(a, b) -> bool:
    return all(torch.equal(x, y) for x, y in zip(a.state_dict().values(), b.state_dict().values()))


def _discards(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.getMessage().startswith("discarding the checkpoint")]


@pytest.mark.parametrize("changed", [{"lr": 2e-2}, {"max_steps": 14}])
def test_a_rerun_with_other_settings_discards_the_checkpoint_and_trains_fresh(tmp_path, caplog, changed):
    """Killed mid-run, rerun with another lr (or step budget): the result is a fresh run's with
    the new settings, not the old run's state continued (which is what resuming did before)."""
    fresh_model, fresh = _shared_loop_run(None, **changed)
    _stopped_at_step_7(tmp_path / "ck")
    with caplog.at_level("INFO", logger="xlt.core"):
        model, result = _shared_loop_run(tmp_path / "ck", **changed)
    assert _same_weights(model, fresh_model)
    assert (result.history, result.steps, result.best_step) == (fresh.history, fresh.steps, fresh.best_step)
    [line] = _discards(caplog)  # one line, naming what changed
    name, value = next(iter(changed.items()))
    assert f"train_args.{name}" in line and repr(value) in line, line
    assert not any(r.getMessage().startswith("resumed from") for r in caplog.records)


def test_an_unchanged_rerun_with_an_identity_still_resumes(tmp_path, caplog):
    data = tmp_path / "train.jsonl"
    data.write_text('{"text": "a"}\n')
    identity = ckpt.run_identity({"model": "tiny", "margin": 0.3}, [data])
    ref_model, ref = _shared_loop_run(None)
    _stopped_at_step_7(tmp_path / "ck", identity=identity)
    with caplog.at_level("INFO", logger="xlt.core"):
        model, result = _shared_loop_run(
            tmp_path / "ck", identity=ckpt.run_identity({"model": "tiny", "margin": 0.3}, [data])
        )
    assert any(r.getMessage().startswith("resumed from step 7") for r in caplog.records)
    assert not _discards(caplog)
    assert _same_weights(model, ref_model) and result.history == ref.history


@pytest.mark.parametrize("change", ["input", "setting"])
def test_a_changed_input_file_or_caller_setting_discards_the_checkpoint(tmp_path, caplog, change):
    data = tmp_path / "train.jsonl"
    data.write_text('{"text": "a"}\n')
    _stopped_at_step_7(tmp_path / "ck", identity=ckpt.run_identity({"margin": 0.3}, [data]))
    margin = 0.3
    if change == "input":
        data.write_text('{"text": "b"}\n')  # same size, other bytes
    else:
        margin = 0.5
    steps = []
    with caplog.at_level("INFO", logger="xlt.core"):
        _shared_loop_run(
            tmp_path / "ck",
            on_step=lambda step, epoch: steps.append(step),
            identity=ckpt.run_identity({"margin": margin}, [data]),
        )
    assert steps[0] == 0 and len(steps) == 12  # trained from the start
    [line] = _discards(caplog)
    assert (f"input {data} changed" if change == "input" else "margin 0.3 -> 0.5") in line, line


def test_a_checkpoint_without_a_key_counts_as_another_run(tmp_path, caplog):
    model, optimizer, scheduler = _tiny_setup()
    ckpt.save_checkpoint(tmp_path / "ck", 2, model, optimizer, scheduler)  # as written before keys existed
    identity = ckpt.run_identity({"lr": 0.1})
    with caplog.at_level("INFO", logger="xlt.core"):
        assert ckpt.load_checkpoint(tmp_path / "ck", identity=identity) is None
    assert "written before checkpoints were keyed" in _discards(caplog)[0]
    assert not ckpt.checkpoint_path(tmp_path / "ck").exists()
    ckpt.save_checkpoint(tmp_path / "ck", 3, model, optimizer, scheduler, identity=identity)
    assert ckpt.load_checkpoint(tmp_path / "ck", identity=ckpt.run_identity({"lr": 0.1}))["step"] == 3


def test_run_identity_hashes_contents_in_order_not_paths(tmp_path):
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    a.write_bytes(b"x" * 3_000_000)  # several chunks
    b.write_bytes(b"y")
    model = tmp_path / "model"
    model.mkdir()
    (model / "config.json").write_text("{}")
    key = ckpt.identity_key(ckpt.run_identity({"lr": 1e-3}, [a, b, *ckpt.model_inputs(str(model))]))
    moved = tmp_path / "moved"
    moved.mkdir()
    (moved / "a.jsonl").write_bytes(a.read_bytes())
    assert ckpt.identity_key(ckpt.run_identity({"lr": 1e-3}, [moved / "a.jsonl", b, model])) == key
    assert ckpt.identity_key(ckpt.run_identity({"lr": 1e-3}, [b, a, model])) != key
    assert ckpt.identity_key(ckpt.run_identity({"lr": 2e-3}, [a, b, model])) != key
    (model / "config.json").write_text("[]")
    assert ckpt.identity_key(ckpt.run_identity({"lr": 1e-3}, [a, b, model])) != key


def _hub_cache(root: Path, hub_id: str, refs: dict[str, str]) -> Path:
    """The layout huggingface_hub reads offline: refs/<revision> names a commit, snapshots/<commit>/ holds its files."""
    repo = root / f"models--{hub_id.replace('/', '--')}"
    for revision, commit in refs.items():
        (repo / "snapshots" / commit).mkdir(parents=True, exist_ok=True)
        (repo / "snapshots" / commit / "config.json").write_text("{}")
        (repo / "refs").mkdir(parents=True, exist_ok=True)
        (repo / "refs" / revision).write_text(commit)
    return root


def test_a_hub_model_is_keyed_by_the_commit_its_revision_resolves_to(tmp_path, monkeypatch, caplog):
    """A branch moves: the same id (or id@main) on another commit is another run; a local
    directory keeps its content key."""
    from huggingface_hub import constants

    hub_id, commit_a, commit_b = "xlt-test/tiny", "a" * 40, "b" * 40
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(_hub_cache(tmp_path / "hub", hub_id, {"main": commit_a})))
    [resolved] = ckpt.model_inputs(hub_id)
    assert (resolved.ref, resolved.commit) == (hub_id, commit_a)
    assert ckpt.model_inputs(f"{hub_id}@{commit_b}")[0].commit is None  # not in the cache: unresolved, said so
    before = {ref: ckpt.run_identity({"model": ref}, ckpt.model_inputs(ref)) for ref in (hub_id, f"{hub_id}@main")}
    assert ckpt.identity_key(ckpt.run_identity({"model": hub_id}, ckpt.model_inputs(hub_id))) == ckpt.identity_key(
        before[hub_id]
    )  # an unchanged cache: the same key, so the run resumes
    _hub_cache(tmp_path / "hub", hub_id, {"main": commit_b})  # main moved on
    for ref, identity in before.items():
        now = ckpt.run_identity({"model": ref}, ckpt.model_inputs(ref))
        assert ckpt.identity_key(now) != ckpt.identity_key(identity), ref
        assert ckpt.identity_changes(identity, now) == [f"input {ref} changed (commit {commit_a} -> commit {commit_b})"]
    # the checkpoint of the old commit is discarded, with the line naming the commits
    model, optimizer, scheduler = _tiny_setup()
    ckpt.save_checkpoint(tmp_path / "ck", 2, model, optimizer, scheduler, identity=before[hub_id])
    with caplog.at_level("INFO", logger="xlt.core"):
        assert (
            ckpt.load_checkpoint(
                tmp_path / "ck", identity=ckpt.run_identity({"model": hub_id}, ckpt.model_inputs(hub_id))
            )
            is None
        )
    assert f"commit {commit_a} -> commit {commit_b}" in _discards(caplog)[0]
    local = tmp_path / "local"
    local.mkdir()
    (local / "config.json").write_text("{}")
    assert ckpt.model_inputs(str(local)) == [local]
