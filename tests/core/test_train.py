import math

import pytest
import torch
from helpers.numerics import adamw_drift, summation_order_bound

from xlt.core.errors import XltError
from xlt.core.schedules import linear_schedule
from xlt.core.train_args import TrainArgs
from xlt.core.train_inputs import DevSelection, Objective
from xlt.core.training import epoch_order, total_optimizer_steps, train


def toy_problem(n=64, seed=0):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 4, generator=g)
    y = (x[:, 0] + x[:, 1] > 0).long()
    return [{"x": x[i], "y": y[i]} for i in range(n)]


def collate(examples):
    return {"x": torch.stack([e["x"] for e in examples]), "y": torch.stack([e["y"] for e in examples])}


def loss_fn(model, batch):
    return torch.nn.functional.cross_entropy(model(batch["x"]), batch["y"])


def make_model(seed=0):
    torch.manual_seed(seed)
    return torch.nn.Linear(4, 2)


def args(**kw):
    base = dict(max_steps=30, batch_size=8, lr=0.1, warmup_ratio=0.0, weight_decay=0.0, device="cpu", log_every=10)
    return TrainArgs(**{**base, **kw})


def test_train_takes_its_inputs_in_a_few_frozen_groups():
    """Issue 48: train() took 12 parameters; what belongs together now comes in small frozen
    groups (xlt.core.train_inputs), each documenting its fields."""
    import dataclasses
    import inspect

    from xlt.core import train_inputs

    assert list(inspect.signature(train).parameters) == ["model", "objective", "args", "dev", "checkpoint", "layers"]
    groups = [train_inputs.Objective, train_inputs.DevSelection, train_inputs.Resumable, train_inputs.LayerSchedule]
    for group in groups:
        assert group.__dataclass_params__.frozen and group.__doc__, group
        for field in dataclasses.fields(group):
            assert f"`{field.name}" in group.__doc__, (group, field.name)


def test_loss_goes_down_and_runs_are_reproducible():
    data = toy_problem()
    first = make_model()
    before = sum(loss_fn(first, collate(data)).item() for _ in range(1))
    train(first, Objective(data, collate, loss_fn), args())
    after = loss_fn(first, collate(data)).item()
    assert after < before * 0.7
    second = make_model()
    train(second, Objective(data, collate, loss_fn), args())
    assert torch.equal(first.weight, second.weight)


@pytest.mark.numerics
@pytest.mark.parametrize("batch_size, grad_accum", [(16, 2), (10, 3), (10, 6), (7, 7)])
def test_gradient_accumulation_splits_the_batch_and_changes_nothing_else(batch_size, grad_accum):
    """--grad-accum k cuts each batch of --batch-size into k micro-batches weighted by their share
    of its examples: the same steps as k = 1 (no dropout here), also for a batch size k does not
    divide and for the epoch's short last batch (64 = 6 x 10 + 4: four micro-batches of one for
    k = 6). It drew batch_size examples per micro-batch, k times the batch."""
    data = toy_problem()
    a, b = make_model(), make_model()
    steps = 2 * math.ceil(len(data) / batch_size) + 1  # two epochs, each with a short last batch, and a step more
    train(a, Objective(data, collate, loss_fn), args(max_steps=steps, batch_size=batch_size, max_grad_norm=1.0))
    result = train(
        b,
        Objective(data, collate, loss_fn),
        args(max_steps=steps, batch_size=batch_size, grad_accum=grad_accum, max_grad_norm=1.0),
    )
    # the micro-batches' weighted gradients add up in another order than one batch's mean (its sum
    # over up to batch_size examples, after the 4-input linear layer): AdamW's drift over the steps.
    # A micro-batch weighted wrongly (equal weights for 4, 3 and 3 examples) moves the gradient by
    # percents, far above it. Measured: at most 6e-8 (AVX2 and default) against atol 7e-6.
    atol, rtol = adamw_drift(steps, 0.1, summation_order_bound(2, batch_size))
    torch.testing.assert_close(b.weight, a.weight, atol=atol, rtol=rtol)
    torch.testing.assert_close(b.bias, a.bias, atol=atol, rtol=rtol)
    assert result.samples_per_s * result.wall_s == pytest.approx(2 * len(data) + batch_size)


def test_micro_batches_are_as_even_as_possible_and_never_empty():
    from xlt.core.train_step import micro_batches

    assert micro_batches(list(range(10)), 3) == [[0, 1, 2, 3], [4, 5, 6], [7, 8, 9]]
    assert micro_batches(list(range(2)), 4) == [[0], [1]]
    assert micro_batches(list(range(6)), 1) == [list(range(6))]


def test_grad_accum_above_the_batch_size_is_a_clear_error():
    with pytest.raises(XltError, match="grad_accum 9: grad_accum splits each batch"):
        train(make_model(), Objective(toy_problem(), collate, loss_fn), args(batch_size=8, grad_accum=9))


def test_best_checkpoint_is_restored():
    data = toy_problem()
    model = make_model()
    calls = []

    def evaluate(m):
        calls.append(m.weight.detach().clone())
        return {"score": [0.1, 0.9, 0.2][len(calls) - 1]}  # the second evaluation is the best

    result = train(
        model, Objective(data, collate, loss_fn), args(max_steps=9, eval_every=3), dev=DevSelection(evaluate)
    )
    assert result.best_step == 6 and result.best_score == 0.9
    assert torch.equal(model.weight, calls[1])
    assert [h["step"] for h in result.history] == [3, 6, 9]


def test_an_initial_score_lets_the_untouched_parameters_win_as_step_0():
    model = make_model()
    before = model.weight.detach().clone()
    result = train(
        model,
        Objective(toy_problem(), collate, loss_fn),
        args(max_steps=6, eval_every=3),
        dev=DevSelection(lambda m: {"score": 0.5}, initial_score=0.6),
    )
    assert (result.best_step, result.best_score) == (0, 0.6) and torch.equal(model.weight, before)


def test_non_finite_loss_stops_with_a_clear_error():
    data = toy_problem()

    def exploding(model, batch):
        return loss_fn(model, batch) * float("inf")

    with pytest.raises(XltError, match=r"loss is (inf|nan) at step 0 .*lower the learning rate"):
        train(make_model(), Objective(data, collate, exploding), args())


def test_a_later_non_finite_loss_names_its_step_within_the_unread_window():
    """Losses stay on the device between reads (xlt.core.train_step.UNREAD_STEPS): a loss that turns
    infinite at step 40 of 200, with no progress line due, stops the run within that window."""
    from xlt.core.train_step import UNREAD_STEPS

    calls = []

    def explodes_at_40(model, batch):
        calls.append(None)
        return loss_fn(model, batch) * (float("inf") if len(calls) > 40 else 1.0)

    with pytest.raises(XltError, match=r"loss is (inf|nan) at step 40 \(epoch 5\)"):
        train(make_model(), Objective(toy_problem(), collate, explodes_at_40), args(max_steps=200, log_every=1000))
    assert 41 <= len(calls) <= 40 + UNREAD_STEPS


def test_nothing_to_train_and_no_examples():
    model = make_model()
    for p in model.parameters():
        p.requires_grad_(False)
    with pytest.raises(XltError, match="every parameter is frozen"):
        train(model, Objective(toy_problem(), collate, loss_fn), args())
    with pytest.raises(XltError, match="no training examples"):
        train(make_model(), Objective([], collate, loss_fn), args())


def test_schedule_and_step_count():
    assert total_optimizer_steps(100, TrainArgs(batch_size=10, epochs=2)) == 20
    assert (
        total_optimizer_steps(100, TrainArgs(batch_size=10, grad_accum=2, epochs=1.5)) == 15
    )  # a step: one batch of 10
    assert total_optimizer_steps(100, TrainArgs(max_steps=7)) == 7
    opt = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=1.0)
    sched = linear_schedule(opt, warmup_steps=2, total_steps=6)
    lrs = []
    for _ in range(6):
        lrs.append(opt.param_groups[0]["lr"])
        opt.step()
        sched.step()
    assert lrs == pytest.approx([0.0, 0.5, 1.0, 0.75, 0.5, 0.25])  # transformers' warm-up: 0 on the first step


def test_epoch_order_depends_only_on_seed_and_epoch():
    assert epoch_order(10, 1, 0) == epoch_order(10, 1, 0)
    assert epoch_order(10, 1, 0) != epoch_order(10, 1, 1)
    assert sorted(epoch_order(10, 2, 3)) == list(range(10))
    assert math.isfinite(sum(epoch_order(5, 0, 0)))


def test_boolean_training_flags_round_trip_through_the_command_line():
    import argparse

    from xlt.core.job_spec import JobSpec
    from xlt.core.plan import config_settings
    from xlt.core.train_args import add_train_arguments, train_args_from

    parser = argparse.ArgumentParser()
    add_train_arguments(parser)
    # the flags as a plan renders a config's training settings
    flags = JobSpec("finetune", config_settings({"length_bucketing": True, "compile": False})).args
    parsed = train_args_from(parser.parse_args(flags))
    assert parsed.length_bucketing is True and parsed.compile is False
    assert train_args_from(parser.parse_args(["--compile", "yes"])).compile is True
    with pytest.raises(SystemExit):
        parser.parse_args(["--compile", "maybe"])


def patch_compile(monkeypatch, backend) -> list:
    """torch.compile with `backend` (fast on a CPU) in place of inductor; returns the (model, kwargs)
    of every call the training loop makes. Skips where dynamo is not supported."""
    if not hasattr(torch, "compile") or not torch._dynamo.is_dynamo_supported():
        pytest.skip("torch.compile (dynamo) is not supported by this torch/Python build")
    real_compile, calls = torch.compile, []

    def compile_with_backend(model, **kwargs):
        calls.append((model, kwargs))
        return real_compile(model, backend=backend, **kwargs)

    monkeypatch.setattr(torch, "compile", compile_with_backend)
    torch._dynamo.reset()
    return calls


@pytest.mark.numerics
def test_compile_trains_through_torch_compile(monkeypatch):
    # Inductor's C++ compile of even this model takes ~90 s on the shared 2-core CPU, so the
    # test compiles with the aot_eager backend: dynamo traces the model and AOTAutograd builds
    # the joint forward/backward graph, only the final code generation is skipped.
    calls = patch_compile(monkeypatch, "aot_eager")
    data = toy_problem()
    plain, compiled = make_model(), make_model()
    train(plain, Objective(data, collate, loss_fn), args(max_steps=5))
    train(compiled, Objective(data, collate, loss_fn), args(max_steps=5, compile=True))
    assert [model for model, _ in calls] == [compiled]
    # AOTAutograd decomposes the forward and builds its own backward graph, whose sums (over 4 inputs, over
    # the batch of 8) may run in another order: AdamW's drift over the 5 steps (measured bitwise, AVX2 and default)
    atol, rtol = adamw_drift(5, 0.1, summation_order_bound(2, 8))
    torch.testing.assert_close(compiled.weight, plain.weight, atol=atol, rtol=rtol)
    assert not torch.equal(compiled.weight, make_model().weight)


def test_compile_builds_one_graph_for_every_padded_length(monkeypatch):
    # dynamically padded batches change their sequence length (and the short last batch its size)
    # from batch to batch: compiled with dynamic=True, one graph serves them all (static shapes
    # would compile once per length)
    graphs = []

    def counting_backend(gm, example_inputs):
        graphs.append(gm)
        return gm.forward

    calls = patch_compile(monkeypatch, counting_backend)
    g = torch.Generator().manual_seed(0)
    data = [
        {"x": torch.randn(int(n), 4, generator=g), "y": torch.tensor(int(n) % 2)}
        for n in torch.randint(2, 12, (37,), generator=g)
    ]

    def padded(examples):  # pad to the longest in the batch, as the text collates do
        longest = max(e["x"].shape[0] for e in examples)
        x = torch.stack([torch.nn.functional.pad(e["x"], (0, 0, 0, longest - e["x"].shape[0])) for e in examples])
        return {"x": x, "y": torch.stack([e["y"] for e in examples])}

    def mean_pooled_loss(model, batch):
        return torch.nn.functional.cross_entropy(model(batch["x"]).mean(1), batch["y"])

    train(make_model(), Objective(data, padded, mean_pooled_loss), args(max_steps=12, compile=True))
    assert [kwargs for _, kwargs in calls] == [{"dynamic": True}]
    assert len(graphs) == 1


@pytest.mark.numerics
def test_compile_runs_a_module_dict_through_its_compiled_modules(monkeypatch):
    # sbert trains ModuleDict({"encoder", "head"}) and its loss indexes it: torch.compile of the
    # dict itself is not subscriptable, so each module is compiled
    calls = patch_compile(monkeypatch, "eager")
    data = toy_problem()

    def make_dict():
        torch.manual_seed(0)
        return torch.nn.ModuleDict({"encoder": torch.nn.Linear(4, 3), "head": torch.nn.Linear(3, 2)})

    def dict_loss(m, batch):
        return torch.nn.functional.cross_entropy(m["head"](m["encoder"](batch["x"])), batch["y"])

    plain, compiled = make_dict(), make_dict()
    train(plain, Objective(data, collate, dict_loss), args(max_steps=5))
    train(compiled, Objective(data, collate, dict_loss), args(max_steps=5, compile=True))
    assert [model for model, _ in calls] == [compiled["encoder"], compiled["head"]]
    # the eager backend runs dynamo's graph through the same eager kernels, the same arithmetic: exact
    assert torch.equal(compiled["head"].weight, plain["head"].weight)


def test_the_curve_holds_every_logged_and_evaluated_step_as_the_history_does():
    data = toy_problem()
    scores = iter([0.3, 0.5, 0.4])
    result = train(
        make_model(),
        Objective(data, collate, loss_fn),
        args(max_steps=9, eval_every=3, log_every=4),
        dev=DevSelection(lambda m: {"score": next(scores)}),
    )
    assert [row["step"] for row in result.curve] == [3, 4, 6, 8, 9]  # evaluations, log lines, the last step
    assert [row["dev_score"] for row in result.curve] == [0.3, None, 0.5, None, 0.4]
    evaluated = [row for row in result.curve if row["dev_score"] is not None]
    assert [row["loss"] for row in evaluated] == [h["loss"] for h in result.history]
    # linear decay from lr 0.1 to 0 over 9 steps, no warm-up: the rate the next step will use
    assert [row["lr"] for row in result.curve] == pytest.approx([0.1 * (9 - s) / 9 for s in (3, 4, 6, 8, 9)])
    assert all(row["loss"] > 0 for row in result.curve)
