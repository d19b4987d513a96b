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

from xlt.core import checkpoint as ckpt

TESTS = Path(__file__).resolve().parent
sys.path.insert(0, str(TESTS))
import toy_training  # noqa: E402


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
    ckpt.save_checkpoint(tmp_path, 2, model, optimizer, scheduler, extra={"best": np.float32(0.5), "hist": [{"a": np.arange(3)}]},
                         epoch=1, position=7, order_seed=42)
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
    return subprocess.Popen([sys.executable, str(TESTS / "toy_training.py"), *_toy(out, ckdir, *extra)],
                            stderr=subprocess.PIPE, text=True, env=env)


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


def _shared_loop_run(checkpoint_dir, on_step=None, max_steps=12):
    """xlt.core.training.train on a small classifier: dropout, AdamW with decay groups, warm-up and
    decay, gradient accumulation across epoch boundaries, evaluation with best-state selection."""
    from xlt.core.training import TrainArgs, train

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

    args = TrainArgs(max_steps=max_steps, batch_size=8, grad_accum=2, lr=5e-2, warmup_ratio=0.25, eval_every=3,
                     device="cpu", log_every=2, checkpoint_every=5, seed=3)
    result = train(model, examples, collate, lambda m, b: torch.nn.functional.cross_entropy(m(b["x"]), b["y"]),
                   args, evaluate, on_step=on_step, checkpoint_dir=checkpoint_dir)
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

    # a checkpoint of another run (here: another step budget) is refused, not silently resumed
    ckpt.remove_checkpoint(tmp_path / "ck")
    with pytest.raises(SystemExit):
        _shared_loop_run(tmp_path / "ck", on_step=sigterm_at_step_6)
    from xlt.core.errors import XltError
    with pytest.raises(XltError, match="belongs to another run"):
        _shared_loop_run(tmp_path / "ck", max_steps=14)
