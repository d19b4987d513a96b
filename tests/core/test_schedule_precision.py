"""training.schedule (linear / constant / cosine after warm-up) as the loop applies it, and
precision: auto picking bf16 only where CUDA supports it, else fp16 with a gradient scaler."""

from __future__ import annotations

import logging
import math

import pytest
import torch

from xlt.core import training
from xlt.core.errors import XltError
from xlt.core.schedules import lr_factor
from xlt.core.train_args import TrainArgs
from xlt.core.train_inputs import Objective
from xlt.core.training import autocast_dtype, train

STEPS, WARMUP, PEAK = 10, 2, 0.1  # warmup_ratio 0.2 of 10 steps


def toy():
    g = torch.Generator().manual_seed(0)
    x = torch.randn(40, 4, generator=g)
    return [{"x": x[i], "y": int(x[i, 0] > 0)} for i in range(40)]


def collate(examples):
    return {"x": torch.stack([e["x"] for e in examples]), "y": torch.tensor([e["y"] for e in examples])}


def loss_fn(model, batch):
    return torch.nn.functional.cross_entropy(model(batch["x"]), batch["y"])


def used_learning_rates(monkeypatch, **settings) -> list[float]:
    """The learning rate of every optimiser step the training loop takes."""
    seen = []
    original = torch.optim.AdamW.step

    def recording_step(self, *args, **kwargs):
        seen.append(self.param_groups[0]["lr"])
        return original(self, *args, **kwargs)

    monkeypatch.setattr(torch.optim.AdamW, "step", recording_step)
    torch.manual_seed(0)
    args = TrainArgs(
        max_steps=STEPS, batch_size=8, lr=PEAK, warmup_ratio=WARMUP / STEPS, device="cpu", precision="fp32", **settings
    )
    train(torch.nn.Linear(4, 2), Objective(toy(), collate, loss_fn), args)
    return seen


def transformers_rates(kind: str, warmup: int = WARMUP, total: int = STEPS) -> list[float]:
    """The learning rate of each of `total` optimiser steps under transformers' own scheduler."""
    transformers = pytest.importorskip("transformers")
    make = {
        "linear": transformers.get_linear_schedule_with_warmup,
        "constant": lambda opt, w, t: transformers.get_constant_schedule_with_warmup(opt, w),
        "cosine": transformers.get_cosine_schedule_with_warmup,
    }[kind]
    opt = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=PEAK)
    sched = make(opt, warmup, total)
    rates = []
    for _ in range(total):
        rates.append(opt.param_groups[0]["lr"])
        opt.step()
        sched.step()
    return rates


@pytest.mark.parametrize("kind", ["linear", "constant", "cosine"])
def test_every_step_uses_transformers_learning_rate(monkeypatch, kind):
    """Warm-up starts at 0 on the first step, as transformers' schedulers do (it ran one step
    ahead: 0.5, 1.0, ... of the peak)."""
    assert used_learning_rates(monkeypatch, schedule=kind) == pytest.approx(transformers_rates(kind), abs=1e-12)


@pytest.mark.parametrize("kind", ["linear", "constant", "cosine"])
@pytest.mark.parametrize("warmup, total", [(0, 7), (1, 5), (3, 4), (4, 13), (10, 10)])
def test_lr_factor_is_transformers_schedule(kind, warmup, total):
    ours = [PEAK * lr_factor(kind, s, warmup, total) for s in range(total)]
    assert ours == pytest.approx(transformers_rates(kind, warmup, total), abs=1e-12)


def test_linear_is_the_default_and_decays_to_zero(monkeypatch):
    assert TrainArgs().schedule == "linear"
    lrs = used_learning_rates(monkeypatch)
    assert lrs == pytest.approx([0.0, 0.05, 0.1, 0.0875, 0.075, 0.0625, 0.05, 0.0375, 0.025, 0.0125])


def test_constant_keeps_the_peak_after_warm_up(monkeypatch):
    assert used_learning_rates(monkeypatch, schedule="constant") == pytest.approx([0.0, 0.05] + [0.1] * 8)


def test_cosine_follows_a_half_cosine_to_zero(monkeypatch):
    lrs = used_learning_rates(monkeypatch, schedule="cosine")
    after = [PEAK * 0.5 * (1 + math.cos(math.pi * (s - WARMUP) / (STEPS - WARMUP))) for s in range(WARMUP, STEPS)]
    assert lrs == pytest.approx([0.0, 0.05] + after)
    assert lrs[WARMUP] == pytest.approx(PEAK) and lrs[-1] < lrs[WARMUP + 3] < lrs[WARMUP]


def test_warmup_steps_overrides_the_ratio(monkeypatch):
    """make_multilingual.py warms up for a number of steps (10,000), not a share of them."""
    lrs = used_learning_rates(monkeypatch, warmup_steps=4)
    assert lrs == pytest.approx(transformers_rates("linear", warmup=4))


def test_a_warm_up_as_long_as_an_epoch_counted_run_is_refused_before_the_first_step(monkeypatch):
    # 40 examples at batch 8, one epoch: 5 steps; a 5-step warm-up never reaches the peak
    monkeypatch.setattr(torch.optim.AdamW, "step", lambda *a, **k: pytest.fail("a step ran before the error"))
    args = TrainArgs(epochs=1, batch_size=8, warmup_steps=5, device="cpu", precision="fp32")
    with pytest.raises(XltError, match=r"^--warmup-steps 5 is not below the run's 5 optimiser steps .*within \[0, 4\]"):
        train(torch.nn.Linear(4, 2), Objective(toy(), collate, loss_fn), args)


def test_adam_epsilon_reaches_the_optimiser(monkeypatch):
    seen = []
    original = torch.optim.AdamW.step

    def recording_step(self, *args, **kwargs):
        seen.append(self.param_groups[0]["eps"])
        return original(self, *args, **kwargs)

    monkeypatch.setattr(torch.optim.AdamW, "step", recording_step)
    train(
        torch.nn.Linear(4, 2),
        Objective(toy(), collate, loss_fn),
        TrainArgs(max_steps=2, device="cpu", precision="fp32", adam_epsilon=1e-6),
    )
    assert seen == [1e-6, 1e-6]
    assert TrainArgs().adam_epsilon == 1e-8  # torch's default: other families' runs do not change


def test_an_unknown_schedule_is_a_clear_error():
    with pytest.raises(XltError, match="unknown learning-rate schedule 'step'; choose one of linear, constant, cosine"):
        train(
            torch.nn.Linear(4, 2),
            Objective(toy(), collate, loss_fn),
            TrainArgs(max_steps=1, device="cpu", schedule="step"),
        )


@pytest.mark.parametrize("bf16_supported, dtype", [(True, torch.bfloat16), (False, torch.float16)])
def test_auto_precision_asks_cuda_whether_it_supports_bf16(monkeypatch, bf16_supported, dtype):
    monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda *a, **k: bf16_supported)
    chosen, why = autocast_dtype("auto", torch.device("cuda", 0))
    assert chosen is dtype
    assert ("gradient scaler" in why) is (dtype is torch.float16)


def test_auto_precision_is_fp32_on_cpu_and_the_choice_is_logged(caplog):
    assert autocast_dtype("auto", torch.device("cpu")) == (None, "auto: fp32 on cpu")
    with caplog.at_level(logging.INFO, logger="xlt.core.training"):
        result = train(torch.nn.Linear(4, 2), Objective(toy(), collate, loss_fn), TrainArgs(max_steps=2, device="cpu"))
    assert "precision: auto: fp32 on cpu" in caplog.text
    assert training.result_meta(result, TrainArgs())["precision"] == "fp32"


def test_fp16_trains_through_a_gradient_scaler(monkeypatch):
    """fp16 (what auto picks on a CUDA device without bf16) scales the loss and unscales before
    clipping; on CPU the same code path runs with torch's CPU GradScaler."""
    calls = []
    for name in ("scale", "unscale_", "step"):
        original = getattr(torch.amp.GradScaler, name)

        def wrapped(self, *args, _name=name, _original=original, **kwargs):
            calls.append((_name, self.is_enabled()))
            return _original(self, *args, **kwargs)

        monkeypatch.setattr(torch.amp.GradScaler, name, wrapped)
    torch.manual_seed(0)
    model = torch.nn.Linear(4, 2)
    before = model.weight.detach().clone()
    result = train(
        model,
        Objective(toy(), collate, loss_fn),
        TrainArgs(max_steps=3, batch_size=8, lr=0.1, device="cpu", precision="fp16"),
    )
    assert result.precision == "float16"
    assert {name for name, enabled in calls if enabled} == {"scale", "unscale_", "step"}
    assert not torch.equal(model.weight, before)
