"""The `graphs` setting (xlt.core.cuda_graphs) as far as it runs on a CPU: its validation, the batch
shapes that get a graph each, and StepGraphs' bookkeeping (static inputs reused, warm-up undone,
the short last batch eager) with a recorder that replays the step eagerly where CUDA would record it.
The CUDA recording itself runs in benchmarks/gpu_check.py (BENCHMARKS.md)."""

from __future__ import annotations

import random
import types

import pytest
import torch

from xlt.core import cuda_graphs
from xlt.core.bucketing import bucketed_order
from xlt.core.errors import XltError
from xlt.core.padding import CUDA_MULTIPLE, padded_width
from xlt.core.train_args import TrainArgs, train_setting
from xlt.core.train_inputs import DevSelection, Objective
from xlt.core.train_state import LoopState
from xlt.core.train_step import optimiser_step, read_losses
from xlt.core.training import _setup

CPU, CUDA = torch.device("cpu"), torch.device("cuda")


@pytest.mark.parametrize(
    "graphs, compile_, device, grad_accum, amp, needle",
    [
        ("capture", False, CPU, 1, None, "this run is on cpu; set graphs: none"),
        ("compile", False, CPU, 1, None, "this run is on cpu; set graphs: none"),
        ("capture", True, CUDA, 1, torch.bfloat16, "set compile: false"),
        ("capture", False, CUDA, 2, torch.bfloat16, "set grad_accum: 1 (now 2)"),
        ("compile", False, CUDA, 1, torch.float16, "set precision: bf16 or fp32"),
        ("static", False, CUDA, 1, None, "choose one of none, compile, capture"),
    ],
)
def test_a_setting_that_cannot_run_here_is_a_one_line_error(graphs, compile_, device, grad_accum, amp, needle):
    with pytest.raises(XltError, match=needle.replace("(", r"\(").replace(")", r"\)")) as err:
        cuda_graphs.check(graphs, compile_, device, grad_accum, amp)
    assert "\n" not in str(err.value)


def test_eager_and_the_cuda_modes_pass_where_they_can_run():
    cuda_graphs.check("none", True, CPU, 4, None)
    cuda_graphs.check("capture", False, CUDA, 1, torch.bfloat16)
    cuda_graphs.check("compile", True, CUDA, 4, None)


def test_the_setting_is_a_choice_of_the_training_verbs():
    assert train_setting("graphs", "capture") == "capture"
    with pytest.raises(XltError, match="choose one of none, compile, capture"):
        train_setting("graphs", "always")


def test_training_on_a_cpu_with_graphs_stops_before_the_first_step():
    model = torch.nn.Linear(4, 2)
    with pytest.raises(XltError, match="this run is on cpu"):
        _setup(model, Objective([0], lambda x: x, lambda m, b: None), TrainArgs(device="cpu", graphs="capture"), None)


def test_bucketed_batches_padded_to_8_need_at_most_max_length_over_8_graphs():
    """XNLI-like lengths (14-148 tokens cut at 128), bucketed and padded as a CUDA run pads: every
    full batch falls into one of 128 / 8 = 16 shapes, so 16 graphs cover an epoch."""
    rng = random.Random(0)
    lengths = [min(128, max(8, int(rng.gauss(65, 25)))) for _ in range(3200)]
    order = bucketed_order(list(range(len(lengths))), lengths, 32, seed=1, epoch=0)
    keys = set()
    for start in range(0, len(order) - 31, 32):
        width = padded_width(max(lengths[i] for i in order[start : start + 32]), CUDA_MULTIPLE)
        batch = {"input_ids": torch.zeros(32, width, dtype=torch.long), "labels": torch.zeros(32)}
        keys.add(cuda_graphs.batch_key(batch))
    assert 8 <= len(keys) <= 128 // CUDA_MULTIPLE


class EagerRecorder:
    """Stands in for CudaGraph on a CPU: runs the warm-up steps as CudaGraph does (they train, and
    StepGraphs must undo them), then replays the step on the same input buffers."""

    made = 0

    def __init__(self, step, inputs):
        for _ in range(cuda_graphs.WARMUP_STEPS):
            step(inputs)
        self.step, self.inputs = step, inputs
        EagerRecorder.made += 1

    def replay(self):
        return self.step(self.inputs)


def toy(n=40, seed=0):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 6, generator=g)
    return [{"x": x[i], "y": int(x[i, 0] > 0)} for i in range(n)]


def collate(examples):
    # two lengths of input, as padding gives: the first half of the data 4 features wide, the rest 6
    width = 4 if all(not e["x"][4:].any() for e in examples) else 6
    return {"x": torch.stack([e["x"][:width] for e in examples]), "y": torch.tensor([e["y"] for e in examples])}


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.layer = torch.nn.Linear(6, 2)
        self.drop = torch.nn.Dropout(0.2)  # draws from the generator: its state must be undone too

    def forward(self, x):
        return self.layer(self.drop(torch.nn.functional.pad(x, (0, 6 - x.shape[1]))))


def loss_fn(model, batch):
    return torch.nn.functional.cross_entropy(model(batch["x"]), batch["y"])


def run(steps: int, recorder=None):
    data = toy()
    for e in data[:20]:
        e["x"][4:] = 0  # the first 20 examples are 4 wide
    model = Model()
    args = TrainArgs(max_steps=steps, batch_size=8, lr=1e-2, warmup_steps=2, device="cpu", max_grad_norm=1.0)
    loop = _setup(model, Objective(data, collate, loss_fn), args, None)
    if recorder is not None:
        loop.graphs = cuda_graphs.StepGraphs(model, loop.params, loop.optimizer, loop.loss_fn, None, args, recorder)
    state = LoopState()
    # batches in data order, wrapping: 8, 8, 4+4 (two widths: 6), 8, 8 (the last: 6 wide), then again
    for step in range(steps):
        start = (step * 8) % 40
        optimiser_step(loop, state, [data[(start + i) % 40] for i in range(8)] if step != 3 else data[:5])
    read_losses(state, args.lr)
    return model, loop, state


def test_captured_steps_train_as_eager_steps_do():
    """The same 7 steps (warm-up undone, dropout's draws included): parameters within what the
    learning rate's float32 tensor allows. The replayed AdamW reads lr as a float32 tensor where
    the eager one reads a Python float: each update differs by at most 2**-24 of itself, and an
    update is at most lr x AdamW's bias-corrected ratio, under 10 x lr = 0.1 in these 7 steps; so
    within 7 x 0.1 x 2**-24 = 4.2e-8 before its small effect on later gradients: 1e-7 allows both."""
    eager, _, eager_state = run(7)
    EagerRecorder.made = 0
    graphed, loop, state = run(7, EagerRecorder)
    for a, b in zip(eager.parameters(), graphed.parameters()):
        torch.testing.assert_close(a, b, rtol=0, atol=1e-7)
    assert state.running == pytest.approx(eager_state.running, rel=1e-6)
    # shapes: 8 x 6 and 8 x 4 recorded once each; the 5-example batch (step 4) ran eagerly
    assert len(loop.graphs.graphs) == EagerRecorder.made == 2
    assert loop.graphs.eager_steps == 1


def test_a_shape_reuses_its_static_inputs():
    _, loop, _ = run(7, EagerRecorder)
    pointers = {key: inputs["x"].data_ptr() for key, (inputs, _) in loop.graphs.graphs.items()}
    graphs = loop.graphs
    batch = collate(toy()[:8])
    key = cuda_graphs.batch_key(batch)
    graphs.step(batch)
    assert graphs.graphs[key][0]["x"].data_ptr() == pointers[key]
    assert torch.equal(graphs.graphs[key][0]["x"], batch["x"])


def test_past_the_cap_shapes_run_eagerly(monkeypatch):
    monkeypatch.setattr(cuda_graphs, "MAX_GRAPHS", 1)
    _, loop, _ = run(7, EagerRecorder)
    assert len(loop.graphs.graphs) == 1
    assert loop.graphs.eager_steps > 1


class Classifier(torch.nn.Module):
    """model(**batch).logits, as a transformers classifier answers."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.layer = torch.nn.Linear(6, 3)

    def forward(self, x):
        return types.SimpleNamespace(logits=self.layer(x))


def test_evaluation_forwards_replay_one_graph_per_shape_with_the_eager_logits():
    """Same code path on the same inputs (the recorder replays the forward): exactly equal."""
    model = Classifier().eval()
    batches = [{"x": torch.randn(4, 6)}, {"x": torch.randn(4, 6)}, {"x": torch.randn(2, 6)}]
    with torch.no_grad():
        eager = [model(**b).logits for b in batches]
        assert cuda_graphs.logits(model, batches[0]).equal(eager[0])  # not registered: eager
        EagerRecorder.made = 0
        cuda_graphs.register_forward(model, EagerRecorder)
        replayed = [cuda_graphs.logits(model, b) for b in batches]
    assert all(a.equal(b) for a, b in zip(eager, replayed))
    graphs = cuda_graphs._FORWARDS[model]
    assert len(graphs.graphs) == EagerRecorder.made == 2  # 4 x 6 and 2 x 6
    (inputs, _), _ = graphs.graphs.values()
    assert inputs["x"].equal(batches[1]["x"])  # the second batch of that shape went through its buffer


def test_a_captured_run_of_the_training_loop_trains_as_the_eager_one(monkeypatch):
    """train() end to end with graphs: capture, the recorder standing in for CUDA (and the device
    check passed as on CUDA): the same parameters within the float32 learning rate's rounding (as
    above: 12 steps x 0.1 x 2**-24 = 7e-8 < 1e-7), a curve of floats (the scheduler reports the
    learning rate as the device tensor it fills), dev evaluations through the recorded forward."""
    from xlt.core.training import train

    data = toy()
    for e in data[:20]:
        e["x"][4:] = 0
    settings = dict(max_steps=12, batch_size=8, lr=1e-2, warmup_steps=2, device="cpu", log_every=4, eval_every=6)
    evaluated = []

    def evaluate(model):
        with torch.no_grad():
            out = cuda_graphs.logits(model, {"x": torch.stack([e["x"] for e in data])})
        evaluated.append(out)
        return {"score": float(out[:, 0].mean())}

    class Logits(Model):
        def forward(self, x):
            return types.SimpleNamespace(logits=super().forward(x))

    def loss(model, batch):
        return torch.nn.functional.cross_entropy(model(batch["x"]).logits, batch["y"])

    eager = Logits()
    eager_result = train(eager, Objective(data, collate, loss), TrainArgs(**settings), dev=DevSelection(evaluate))
    monkeypatch.setattr(cuda_graphs, "check", lambda *a: None)
    real = cuda_graphs.StepGraphs
    monkeypatch.setattr(cuda_graphs, "StepGraphs", lambda *a: real(*a, recorder=EagerRecorder))
    monkeypatch.setattr(cuda_graphs, "CudaGraph", EagerRecorder)
    monkeypatch.setattr(cuda_graphs.register_forward, "__defaults__", (EagerRecorder,))
    captured = Logits()
    result = train(
        captured, Objective(data, collate, loss), TrainArgs(**settings, graphs="capture"), dev=DevSelection(evaluate)
    )
    for a, b in zip(eager.parameters(), captured.parameters()):
        torch.testing.assert_close(a, b, rtol=0, atol=1e-7)
    assert all(type(row["lr"]) is float for row in result.curve)
    assert [row["lr"] for row in result.curve] == pytest.approx([row["lr"] for row in eager_result.curve], rel=1e-6)
    assert captured in cuda_graphs._FORWARDS and len(evaluated) == 4
