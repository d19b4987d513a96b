"""The built-in h100 profile's fast-host end (its `host_low` overheads: the H100 host's fit)
reproduces the H100 measurements (/work/shared/measurements, issue 27) through the code path a
finetune job is planned by (estimate.job_cost); its H200 fit: tests/benchmarks/test_h200_plan.py."""

import pytest

from xlt.core.job_spec import JobSpec
from xlt.cost import estimate, profile, shapes

# measured on an H100 80GB HBM3, bf16 autocast, eager, fused AdamW, mBERT shape, 128 tokens an example
MEASURED_TOKENS_PER_S = {32: 126783, 128: 364289}
LOOP_SAMPLES_PER_S = 1035  # benchmarks/bench.py --loop at batch 32 x 128: the project's training loop
# no model or dataset in the config: the shape comes from KNOWN_MODELS, not a (stand-in) hub cache
CONFIG = {"models": {}, "datasets": {}}


def fast_host() -> dict:
    """The h100 profile at the low end of its range: the H100 host's fixed-length steps."""
    h100 = profile.load("h100", None)
    return {**h100, **h100["host_low"]}


def planned_tokens_per_s(prof: dict, batch: int, steps: int = 1000) -> float:
    job_settings = [
        ("model", "bert-base-multilingual-cased"),
        ("train", "results/data/xnli/en/train.jsonl"),
        ("freeze_depth", "-1"),
        ("epochs", "2"),
        ("max_steps", str(steps)),
        ("batch_size", str(batch)),
        ("max_length", "128"),
    ]
    cost = estimate.job_cost(
        CONFIG, "freeze_depth", "finetune", "x", JobSpec("finetune", job_settings), {**prof, "overhead_s": 0.0}
    )  # steps only
    assert cost.train_tokens == steps * batch * 128 and cost.eval_tokens == 0
    return cost.train_tokens / cost.seconds


@pytest.mark.parametrize("batch", sorted(MEASURED_TOKENS_PER_S))
def test_h100_plans_the_measured_throughput(batch):
    planned = planned_tokens_per_s(fast_host(), batch)
    assert 1 / 1.2 < planned / MEASURED_TOKENS_PER_S[batch] < 1.2, planned


def test_h100_plans_the_training_loops_measured_samples_per_second():
    planned = planned_tokens_per_s(fast_host(), 32) / 128
    assert 1 / 1.2 < planned / LOOP_SAMPLES_PER_S < 1.2, planned


def test_the_fit_solves_both_rows_exactly():
    """Two equations, two unknowns: the fit reproduces both measured rows (not just within 1.2x)."""
    for batch, measured in MEASURED_TOKENS_PER_S.items():
        assert planned_tokens_per_s(fast_host(), batch) == pytest.approx(measured, rel=1e-3)


def test_the_assumed_profile_misses_the_measurement():
    """The profile before the measurement (20 % of peak and assumed overheads) planned 3.4x too slow."""
    assumed = {
        "name": "old",
        "train_flops": 0.2 * 989e12,
        "eval_flops": 0.3 * 989e12,
        "overhead_s": 30,
        "gpu": True,
        "source": "",
        **profile.GPU_LOOP,
    }
    assert planned_tokens_per_s(assumed, 32) / MEASURED_TOKENS_PER_S[32] < 1 / 1.2


def test_a100_is_the_h100_fit_scaled_by_the_datasheet_ratio():
    h100, a100 = profile.load("h100", None), profile.load("a100", None)
    assert a100["train_flops"] == pytest.approx(h100["train_flops"] * 312 / 989)
    assert all(a100[key] == h100[key] for key in profile.OVERHEADS)


def test_a_trainable_embedding_costs_memory_not_flops():
    """At --freeze-depth -1 the embedding matrix trains: its gradient and AdamW moments (12 bytes a
    weight) count in memory and the checkpoint; its lookup is no matrix product, so FLOPs do not change."""
    base = [
        ("model", "bert-base-multilingual-cased"),
        ("train", "results/data/xnli/en/train.jsonl"),
        ("max_steps", "10"),
        ("batch_size", "32"),
        ("max_length", "128"),
        ("checkpoint_every", "5"),
    ]
    flops_only = {"name": "f", "train_flops": 1e12, "eval_flops": 1e12, "overhead_s": 0.0, "gpu": True, "source": ""}
    nothing, embeddings = (
        estimate.job_cost(
            CONFIG, "freeze_depth", "finetune", "x", JobSpec("finetune", base + [("freeze_depth", d)]), flops_only
        )
        for d in ("-1", "0")
    )
    vocab, hidden, _ = shapes.KNOWN_MODELS["bert-base-multilingual-cased"]
    assert nothing.seconds == pytest.approx(embeddings.seconds)
    assert (nothing.peak_memory_gib - embeddings.peak_memory_gib) * 2**30 == pytest.approx(12 * vocab * hidden)
    assert (nothing.scratch_gib - embeddings.scratch_gib) * 2**30 == pytest.approx(12 * vocab * hidden)


def test_a_frozen_layers_share_is_the_measured_one_and_predicts_the_third_depth():
    """Frozen-prefix benchmark on the H100 (uncached steps a second at depths 0, 6, 12 and with no
    encoder layer run): the share fitted from depths 0 and 12 puts depth 6 where it was measured."""
    measured = profile.PREFIX_CACHE_STEPS_PER_S
    share = profile.frozen_layer_share(measured)
    assert share == pytest.approx(0.287, abs=0.001) and profile.FROZEN_LAYER_SHARE == share
    bare, trained = 1 / measured["no_layer"], (1 / measured[0] - 1 / measured["no_layer"]) / 12
    depth6 = bare + 6 * trained + 6 * share * trained
    assert depth6 == pytest.approx(1 / measured[6], rel=0.01)


def test_the_plan_charges_a_frozen_layer_its_share_of_a_step():
    """A finetune at --freeze-depth d runs d layers forward only: per step, their dispatch costs
    FROZEN_LAYER_SHARE of a trained layer's (FLOPs free here, so only the overheads count)."""
    loop = {**profile.load("h100"), "train_flops": 1e30, "eval_flops": 1e30, "overhead_s": 0.0}
    loop["step_example_layer_s"] = 0.0  # the per-layer dispatch alone
    base = [
        ("model", "bert-base-multilingual-cased"),
        ("train", "results/data/xnli/en/train.jsonl"),
        ("max_steps", "100"),
        ("batch_size", "32"),
        ("max_length", "128"),
    ]
    seconds = {
        d: estimate.job_cost(
            CONFIG, "freeze_depth", "finetune", "x", JobSpec("finetune", base + [("freeze_depth", str(d))]), loop
        ).seconds
        for d in (-1, 0, 6, 12)
    }
    assert seconds[-1] == pytest.approx(seconds[0])  # the embeddings are no encoder layer
    per_layer = 100 * loop["step_layer_s"]
    assert seconds[0] - seconds[6] == pytest.approx(6 * per_layer * (1 - profile.FROZEN_LAYER_SHARE))
    assert seconds[0] - seconds[12] == pytest.approx(12 * per_layer * (1 - profile.FROZEN_LAYER_SHARE))
