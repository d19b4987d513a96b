"""Length bucketing: a permutation per epoch, length-homogeneous batches, less padding."""

from __future__ import annotations

import random

import pytest
import torch

from xlt.core.bucketing import bucketed_order, example_length, example_lengths, padding_fraction
from xlt.core.errors import XltError
from xlt.core.train_args import TrainArgs
from xlt.core.train_inputs import LayerSchedule, Objective, Resumable
from xlt.core.training import epoch_order, train


def mixed_lengths(n: int = 1000, seed: int = 0) -> list[int]:
    rng = random.Random(seed)
    # short and long sentences mixed, as in a real corpus
    return [rng.choice([rng.randint(3, 12), rng.randint(30, 120)]) for _ in range(n)]


def batches_of(order, batch_size):
    return [order[i : i + batch_size] for i in range(0, len(order), batch_size)]


def hand_padding(batches, lengths):
    # independent count: positions padded = sum over batches of (max - len) per row
    pad = sum(max(lengths[i] for i in b) - lengths[i] for b in batches for i in b)
    total = sum(max(lengths[i] for i in b) * len(b) for b in batches)
    return pad / total


def test_every_example_once_per_epoch_and_deterministic():
    lengths = mixed_lengths(1003)
    for epoch in range(3):
        order = bucketed_order(epoch_order(1003, 5, epoch), lengths, 16, seed=5, epoch=epoch, chunk_batches=10)
        assert sorted(order) == list(range(1003))
        assert order == bucketed_order(epoch_order(1003, 5, epoch), lengths, 16, seed=5, epoch=epoch, chunk_batches=10)
    one = bucketed_order(epoch_order(1003, 5, 0), lengths, 16, seed=5, epoch=0)
    two = bucketed_order(epoch_order(1003, 5, 1), lengths, 16, seed=5, epoch=1)
    assert one != two


def test_padding_shrinks_on_mixed_lengths_and_batches_stay_shuffled():
    lengths = mixed_lengths()
    plain = batches_of(epoch_order(len(lengths), 1, 0), 32)
    bucketed = batches_of(
        bucketed_order(epoch_order(len(lengths), 1, 0), lengths, 32, seed=1, epoch=0, chunk_batches=10), 32
    )
    assert padding_fraction(plain, lengths) == pytest.approx(hand_padding(plain, lengths))
    assert padding_fraction(bucketed, lengths) == pytest.approx(hand_padding(bucketed, lengths))
    assert hand_padding(bucketed, lengths) < 0.5 * hand_padding(plain, lengths)
    # not a curriculum: batch maxima are not sorted, and only the last batch may be short
    maxima = [max(lengths[i] for i in b) for b in bucketed]
    assert maxima != sorted(maxima) and maxima != sorted(maxima, reverse=True)
    assert all(len(b) == 32 for b in bucketed[:-1]) and len(bucketed[-1]) == len(lengths) % 32


def test_example_lengths_from_tokens_text_and_datasets():
    assert example_length({"input_ids": [1, 2, 3]}) == 3
    assert example_length({"text": "a b c", "text_pair": "d e"}) == 5
    assert example_length({"hidden_states": torch.zeros(7, 4)}) == 7

    class WithLengths(list):
        def lengths(self):
            return [4, 2]

    assert example_lengths(WithLengths([None, None])) == [4, 2]
    with pytest.raises(XltError, match="length_bucketing"):
        example_lengths([torch.zeros(3)])


def test_training_loop_sees_every_example_once_per_epoch_with_bucketing():
    lengths = mixed_lengths(100, seed=3)
    examples = [{"input_ids": list(range(n)), "index": i} for i, n in enumerate(lengths)]
    seen, widths = [], []

    def collate(chunk):
        seen.extend(e["index"] for e in chunk)
        widths.append(max(len(e["input_ids"]) for e in chunk))
        return {"x": torch.tensor([[float(len(e["input_ids"]))] for e in chunk])}

    model = torch.nn.Linear(1, 1)

    def loss(m, b):
        return m(b["x"]).mean()

    args = TrainArgs(epochs=2, batch_size=8, lr=1e-3, device="cpu", length_bucketing=True, log_every=1000)
    train(model, Objective(examples, collate, loss), args)
    steps_per_epoch = -(-100 // 8)
    assert len(widths) == 2 * steps_per_epoch
    assert sorted(seen[:100]) == list(range(100)) and sorted(seen[100:]) == list(range(100))
    assert seen[:100] != seen[100:]
    plain_widths = []
    order = epoch_order(100, args.seed, 0)
    for b in batches_of(order, 8):
        plain_widths.append(max(lengths[i] for i in b))
    assert sum(widths[:steps_per_epoch]) < 0.75 * sum(plain_widths)


def test_bucketed_run_stopped_by_a_signal_resumes_to_the_same_batches(tmp_path):
    import os
    import signal

    from xlt.core import checkpoint

    lengths = mixed_lengths(45, seed=4)
    examples = [{"input_ids": list(range(n)), "index": i} for i, n in enumerate(lengths)]

    def run(checkpoint_dir, stop_at=None):
        torch.manual_seed(0)
        model = torch.nn.Linear(1, 2)
        seen = []

        def collate(chunk):
            seen.append([e["index"] for e in chunk])
            return {
                "x": torch.tensor([[len(e["input_ids"]) / 100.0] for e in chunk]),
                "y": torch.tensor([e["index"] % 2 for e in chunk]),
            }

        def on_step(step, epoch):
            if step == stop_at:
                os.kill(os.getpid(), signal.SIGTERM)

        args = TrainArgs(
            max_steps=14, batch_size=8, lr=0.1, device="cpu", length_bucketing=True, seed=2, log_every=1000
        )
        train(
            model,
            Objective(examples, collate, lambda m, b: torch.nn.functional.cross_entropy(m(b["x"]), b["y"])),
            args,
            checkpoint=Resumable(checkpoint_dir),
            layers=LayerSchedule(on_step=on_step),
        )
        return model, seen

    reference, reference_batches = run(None)
    with pytest.raises(SystemExit):
        run(tmp_path / "ck", stop_at=8)  # mid second epoch (6 batches per epoch)
    resumed, resumed_batches = run(tmp_path / "ck")
    assert resumed_batches == reference_batches[9:]  # step 8 completed before stopping
    assert torch.equal(resumed.weight, reference.weight) and torch.equal(resumed.bias, reference.bias)
    assert checkpoint.load_checkpoint(tmp_path / "ck")["step"] == 9
