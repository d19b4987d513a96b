"""xlt.cost names no family: what it needs to know of a family's jobs it asks the family's cost hooks
(xlt.core.family_plan), each with a default."""

from __future__ import annotations

import inspect
import types

import pytest

from xlt.core import family_plan, registry, settings
from xlt.core.family_plan import COST_HOOKS
from xlt.core.job_spec import JobSpec
from xlt.cost import estimate, tokens, work
from xlt.cost.work import costs

UNIT = {"name": "unit", "train_flops": 1.0, "eval_flops": 1.0, "overhead_s": 0.0, "gpu": False, "source": "test"}


def test_every_hook_a_family_defines_takes_the_defaults_arguments():
    for name in registry.names():
        plan = registry.plan(name)
        for hook in COST_HOOKS:
            if hasattr(plan, hook):
                own = list(inspect.signature(getattr(plan, hook)).parameters)
                assert own == list(inspect.signature(getattr(family_plan, hook)).parameters), f"{name}.{hook}"


def test_the_shared_jobs_and_a_family_without_a_hook_get_the_defaults():
    """The cost reads each family's contract (Family.cost): its plan's hooks over the defaults."""
    shared = costs("demo_data")  # no family: the data and demo-model jobs
    assert vars(shared) == {hook: getattr(family_plan, hook) for hook in COST_HOOKS}
    assert shared.token_forms("any_rule") == ("pair",)
    assert shared.training_runs("any_rule", JobSpec("finetune")) == 1
    assert shared.output_bytes("r", JobSpec("finetune"), 10, 1, 100.0, 64) == 0.0
    for name in registry.names():
        plan, own = registry.plan(name), costs(name)
        assert set(vars(own)) == set(COST_HOOKS)
        for hook in COST_HOOKS:
            assert getattr(own, hook) is getattr(plan, hook, getattr(family_plan, hook)), f"{name}.{hook}"


def _siamese():
    return JobSpec(
        "train-sbert",
        [
            ("model", "bert-base-multilingual-cased"),
            ("train", "results/data/allnli/en/train.jsonl"),
            ("max_steps", 10),
            ("batch_size", 16),
            ("max_length", 128),
        ],
    )


def _toy_family_hooks(monkeypatch, **hooks):
    """A family `toy` whose contract's cost (Family.cost) is the defaults with `hooks` over them."""
    toy = types.SimpleNamespace(**{**vars(family_plan.default_costs()), **hooks})
    monkeypatch.setattr(work, "costs", lambda family: toy if family == "toy" else family_plan.default_costs())


def test_a_new_familys_siamese_rule_is_priced_as_siamese_through_its_hook(monkeypatch):
    """A rule xlt.cost has never heard of pays each sentence of a pair padded on its own once its
    family's token_forms says so, and is priced as a cross-encoder's pair without it."""
    config = settings.load("config/paper.yaml")
    _toy_family_hooks(monkeypatch, token_forms=lambda rule: ("text", "text_pair"))
    job = estimate.job_cost(config, "toy", "train_toy_pairs", "t", _siamese(), UNIT)
    plain = estimate.job_cost(config, "other", "train_toy_pairs", "t", _siamese(), UNIT)
    lengths = tokens.KNOWN_LENGTHS["sentence-transformers/all-nli"]
    both = tokens.padded_length(lengths["text"], 128, 16) + tokens.padded_length(lengths["text_pair"], 128, 16)
    assert job.train_tokens == int(10 * 16 * both)
    assert plain.train_tokens == int(10 * 16 * tokens.padded_length(lengths["pair"], 128, 16))


def test_a_hooked_training_run_count_and_output_bytes_reach_the_plan(monkeypatch):
    config = settings.load("config/paper.yaml")
    _toy_family_hooks(
        monkeypatch,
        training_runs=lambda rule, spec: 3,
        output_bytes=lambda rule, spec, train_rows, dev_rows, row_bytes, hidden: 2**30,
    )
    once = estimate.job_cost(config, "other", "r", "t", _siamese(), UNIT)
    thrice = estimate.job_cost(config, "toy", "r", "t", _siamese(), UNIT)
    assert thrice.train_flops == pytest.approx(3 * once.train_flops)  # three trainings, each as long
    assert thrice.disk_gib == pytest.approx(once.disk_gib + 1.0)
