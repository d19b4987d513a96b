"""The epoch that train() hands to on_step must be the epoch of the batches that step consumes
(layer schedules such as gradual unfreezing switch on it)."""

import math

import pytest
import torch

from xlt.core.train_args import TrainArgs
from xlt.core.train_inputs import LayerSchedule, Objective
from xlt.core.training import train


@pytest.mark.parametrize("n, batch_size, grad_accum", [(10, 4, 1), (12, 4, 1), (10, 3, 2)])
def test_on_step_epoch_matches_the_batches_consumed(n, batch_size, grad_accum):
    torch.manual_seed(0)
    model = torch.nn.Linear(2, 1)
    examples = [torch.randn(2) for _ in range(n)]
    calls = []

    def loss_fn(m, batch):
        return m(batch["x"]).pow(2).mean()

    args = TrainArgs(max_steps=7, batch_size=batch_size, grad_accum=grad_accum, device="cpu", log_every=100)
    train(
        model,
        Objective(examples, lambda chunk: {"x": torch.stack(chunk)}, loss_fn),
        args,
        layers=LayerSchedule(on_step=lambda step, epoch: calls.append((step, epoch))),
    )
    batches_per_epoch = math.ceil(n / batch_size)  # the last batch of an epoch may be short
    # hand count: step s trains batch number s of the stream (grad_accum splits it, draws no more)
    expected = [(s, s // batches_per_epoch) for s in range(7)]
    assert calls == expected
