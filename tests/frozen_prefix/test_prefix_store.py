"""The shared prefix-state store (xlt.frozen_prefix.prefix_store): one eval-mode pass stores the frozen
prefix of every depth of a sweep; each depth's training reads its boundary back.

References are independent of the store: the model's own output_hidden_states, and uncached
training through xlt.core.training.train with the frozen modules held in eval mode (the
store's documented semantics: no dropout below the boundary). The models have dropout 0.1, so
"eval mode below the boundary" is a real difference from plain uncached training, and the
tests check that it is.
"""

from __future__ import annotations

import copy
import re
from pathlib import Path

import numpy as np
import pytest
import torch
from helpers.numerics import adamw_drift, forward_bound
from test_prefix_cache import LAYERS, VOCAB, tiny_classifier, token_collate

from xlt.core.classification import classification_loss
from xlt.core.errors import XltError
from xlt.core.freezing import freeze
from xlt.core.models import encoder_parts
from xlt.core.train_args import TrainArgs
from xlt.core.train_inputs import Objective
from xlt.core.training import train
from xlt.frozen_prefix.cached_top import CachedTopModel
from xlt.frozen_prefix.prefix_cache import STORAGE_RELATIVE_ERROR, cache_examples, collate_prefix_states
from xlt.frozen_prefix.prefix_store import (
    check_store_size,
    hidden_file,
    load_cached_training,
    read_prefix_store,
    read_store_meta,
    store_nbytes,
    token_lengths,
    write_prefix_store,
)

pytestmark = pytest.mark.usefixtures("one_thread")

REPO = Path(__file__).resolve().parents[2]
DEPTHS = [0, 2, 4]
BATCH = 4
SETTINGS = "fam.prefix_states"  # the config section a family keeps its store's settings in
STORE_ARGS = {"storage_dtype": "float16", "settings": SETTINGS, "depths_setting": "fam.depths"}


def raw_examples(n: int = 20, seed: int = 5) -> list[dict]:
    generator = torch.Generator().manual_seed(seed)
    return [
        {"ids": torch.randint(5, VOCAB, (int(length),), generator=generator).tolist(), "label": int(length) % 3}
        for length in torch.randint(3, 14, (n,), generator=generator)
    ]


def write_store(model, examples, out, storage_dtype="float32", depths=DEPTHS):
    collate = token_collate(model.config.pad_token_id)
    lengths = token_lengths(examples, collate, BATCH)
    return write_prefix_store(
        model,
        depths,
        examples,
        collate,
        BATCH,
        lengths,
        out,
        storage_dtype=storage_dtype,
        meta={"max_length": 16},
        settings=SETTINGS,
    )


def hold_frozen_in_eval(model, depth: int):
    """Uncached training with the frozen modules kept in eval mode whenever the loop calls
    model.train(): the reference semantics of every cached mode."""
    parts = encoder_parts(model)
    frozen = [parts.embeddings, *parts.layers[:depth]]
    plain_train = model.train

    def train_mode(mode: bool = True):
        plain_train(mode)
        for module in frozen:
            module.eval()
        return model

    model.train = train_mode
    return model


ARGS = TrainArgs(epochs=2, batch_size=BATCH, lr=1e-3, warmup_ratio=0.0, device="cpu", precision="fp32", seed=3)


def train_from_store(initial, depth, store, examples):
    model = copy.deepcopy(initial)
    freeze(model, depth)
    cached = load_cached_training(model, depth, store, examples, expected={"max_length": 16})
    train(cached.top, Objective(cached.dataset, collate_prefix_states, classification_loss), ARGS)
    return model


def train_uncached(initial, depth, examples, eval_frozen: bool):
    model = copy.deepcopy(initial)
    freeze(model, depth)
    if eval_frozen:
        hold_frozen_in_eval(model, depth)
    train(model, Objective(examples, token_collate(initial.config.pad_token_id), classification_loss), ARGS)
    return model


@pytest.mark.numerics
@pytest.mark.parametrize("arch", ["bert", "distilbert"])
def test_store_holds_the_models_hidden_states_at_every_boundary(arch, tmp_path):
    model = tiny_classifier(arch, dropout=0.1)
    examples = raw_examples()
    meta = write_store(model, examples, tmp_path / "store")
    assert model.training, "the pass must restore the model's training mode"
    assert meta["depths"] == DEPTHS and meta["examples"] == len(examples) and meta["storage_dtype"] == "float32"
    assert meta["tokens"] == sum(len(e["ids"]) for e in examples)
    assert sorted(p.name for p in (tmp_path / "store").iterdir()) == sorted(
        ["meta.json", "offsets.npy", "mask.npy", "labels.npy", *map(hidden_file, DEPTHS)]
    )
    model.eval()
    for depth in DEPTHS:
        states = read_prefix_store(tmp_path / "store", depth)
        assert torch.equal(states.labels, torch.tensor([e["label"] for e in examples]))
        for index, example in enumerate(examples):
            ids = torch.tensor([example["ids"]])
            with torch.no_grad():
                reference = model(
                    input_ids=ids, attention_mask=torch.ones_like(ids), output_hidden_states=True
                ).hidden_states[depth][0]
            hidden, mask = states.example(index)
            assert mask.tolist() == [1] * len(example["ids"])
            # the pass batched and padded it with others: the layers below the boundary sum in another
            # order (measured at most 4.8e-7 default, 7.2e-7 AVX2, at |h| <= 3.5; the bound is 1.1e-4 at depth 4)
            bound = forward_bound(model.config, stages=depth, tokens=16) * reference.abs().max().item()
            torch.testing.assert_close(hidden, reference, atol=bound, rtol=0)


@pytest.mark.numerics
@pytest.mark.parametrize("arch", ["bert", "distilbert"])
def test_fp32_store_trains_the_eval_mode_prefix_run_and_the_per_job_cache_exactly(arch, tmp_path):
    initial = tiny_classifier(arch, dropout=0.1)
    examples = raw_examples()
    write_store(initial, examples, tmp_path / "store")
    depth = 2
    shared = train_from_store(initial, depth, tmp_path / "store", examples)

    # bitwise the per-job cache (same batches of the caching pass, same arithmetic)
    per_job = copy.deepcopy(initial)
    freeze(per_job, depth)
    dataset = cache_examples(per_job, depth, examples, token_collate(initial.config.pad_token_id), batch_size=BATCH)
    train(CachedTopModel(per_job, depth), Objective(dataset, collate_prefix_states, classification_loss), ARGS)
    for (name, a), b in zip(shared.named_parameters(), per_job.parameters()):
        assert torch.equal(a, b), name

    # the uncached run with the frozen layers in eval mode, up to float summation order: within the bound
    # prefix_store documents, derived and measured in the next test (here at most 4.4e-8 default, 1.2e-7 AVX2)
    bound = documented_uncached_bound()
    reference = dict(train_uncached(initial, depth, examples, eval_frozen=True).named_parameters())
    for name, param in shared.named_parameters():
        torch.testing.assert_close(param, reference[name], atol=bound, rtol=0, msg=name)
    assert (shared.classifier.weight - initial.classifier.weight).abs().max() > bound, (
        "nothing trained: the comparison is vacuous"
    )
    # ... which is not plain uncached training: there the frozen layers' dropout is on
    plain = dict(train_uncached(initial, depth, examples, eval_frozen=False).named_parameters())
    assert max((param - plain[name]).abs().max().item() for name, param in shared.named_parameters()) > bound


UNCACHED_BOUND = re.compile(
    r"differ from the uncached run's by at most (\S+) \(tests/frozen_prefix/test_prefix_store\.py"
)


def documented_uncached_bound() -> float:
    """The bound on the store's weights against the uncached run's that xlt.frozen_prefix.prefix_store states."""
    import xlt.frozen_prefix.prefix_store as prefix_store

    (bound,) = UNCACHED_BOUND.findall(" ".join(prefix_store.__doc__.split()))
    return float(bound)


@pytest.mark.numerics
def test_the_documented_difference_from_the_uncached_run_is_what_training_gives(tmp_path):
    """The store's run is not bitwise the eval-mode uncached run (the pass batches and pads
    otherwise, so sums run in another order); the docstring and docs/performance.md say by how
    much, and the same bound, which the measured difference must respect."""
    import xlt.frozen_prefix.prefix_store as prefix_store

    texts = {
        "prefix_store": " ".join(prefix_store.__doc__.split()),
        "performance.md": " ".join((REPO / "docs" / "performance.md").read_text().split()),
    }
    bounds = {where: UNCACHED_BOUND.findall(text) for where, text in texts.items()}
    assert all(len(found) == 1 for found in bounds.values()), bounds
    bound = float(bounds["prefix_store"][0])
    assert float(bounds["performance.md"][0]) == bound
    initial = tiny_classifier("bert", dropout=0.1)
    examples = raw_examples()
    write_store(initial, examples, tmp_path / "store")
    shared = dict(train_from_store(initial, 2, tmp_path / "store", examples).named_parameters())
    reference = dict(train_uncached(initial, 2, examples, eval_frozen=True).named_parameters())
    largest = max((shared[name] - param).abs().max().item() for name, param in reference.items())
    # The weights are O(1) (LayerNorm's start at 1), where fp32's spacing is 2**-23 = 1.2e-7; the runs'
    # gradients differ by summation order only (a few units of 2**-24 relative), which AdamW turns into
    # updates a few spacings apart at most over these 10 steps: the bound is four spacings, 2**-21
    # (measured one spacing with AVX2, a third of one with ATEN_CPU_CAPABILITY=default).
    assert bound == pytest.approx(2.0**-21, rel=0.05)
    assert 0 < largest <= bound, f"measured {largest:.2g}; say what is true in both texts"
    # the bound can fail: dropout in the frozen layers (plain uncached training) is another run
    plain = dict(train_uncached(initial, 2, examples, eval_frozen=False).named_parameters())
    assert max((plain[name] - param).abs().max().item() for name, param in reference.items()) > bound


@pytest.mark.numerics
def test_fp16_store_is_within_rounding_of_fp32_and_trains_close_to_the_reference(tmp_path):
    initial = tiny_classifier("bert", dropout=0.1)
    examples = raw_examples()
    write_store(initial, examples, tmp_path / "full", "float32")
    meta = write_store(initial, examples, tmp_path / "half", "float16")
    assert meta["nbytes"] < read_store_meta(tmp_path / "full")["nbytes"]
    for depth in DEPTHS:
        full, half = read_prefix_store(tmp_path / "full", depth), read_prefix_store(tmp_path / "half", depth)
        assert half.hidden.dtype == torch.float16 and full.hidden.dtype == torch.float32
        assert torch.equal(half.offsets, full.offsets) and torch.equal(half.mask, full.mask)
        error = (half.hidden.float() - full.hidden).abs()
        # half the fp16 spacing: relative 2**-11 in the normal range, 2**-25 among subnormals
        assert torch.all(error <= STORAGE_RELATIVE_ERROR["float16"] * full.hidden.abs() + 2.0**-25)
        assert error.max() > 0, "no value was rounded: the bound was not exercised"

    depth = 2
    runs = {
        "half": train_from_store(initial, depth, tmp_path / "half", examples),
        "full": train_from_store(initial, depth, tmp_path / "full", examples),
        "reference": train_uncached(initial, depth, examples, eval_frozen=True),
        "plain": train_uncached(initial, depth, examples, eval_frozen=False),
    }
    assert any(not torch.equal(a, b) for a, b in zip(runs["half"].parameters(), runs["full"].parameters())), (
        "fp16 rounding did not reach training"
    )
    # Compared as functions: AdamW's update is about lr in size whatever the gradient, so a parameter whose
    # gradient is near zero can move by ~lr either way under any perturbation; the trained model's logits
    # on the training examples are what the rounding must leave (nearly) alone.
    batch = {k: v for k, v in token_collate(initial.config.pad_token_id)(examples).items() if k != "labels"}
    with torch.no_grad():
        logits = {name: model.eval()(**batch).logits for name, model in runs.items()}
    # Both run the same eval forward, so only their weights differ: to first order the logits move by the
    # weights' bound times how much a unit move of every trainable weight moves a logit.
    gain = logit_sensitivity(runs["reference"], batch)
    full_weights = documented_uncached_bound()
    # the half run's inputs are rounded (relative 2**-11), an error each of the top model's stages, forward
    # and back, passes on about once: its gradients' error, which AdamW turns into the weights' drift
    gradient_error = 2 * (LAYERS - depth + 1) * STORAGE_RELATIVE_ERROR["float16"]
    atol, rtol = adamw_drift(ARGS.epochs * -(-len(examples) // BATCH), ARGS.lr, gradient_error)
    largest = max(p.abs().max().item() for p in runs["reference"].parameters() if p.requires_grad)
    half_weights = full_weights + atol + rtol * largest
    # measured 7.5e-9 / 1.1e-8 (full) and 2.7e-6 / 2.9e-6 (half), ATEN_CPU_CAPABILITY=default / AVX2
    torch.testing.assert_close(logits["full"], logits["reference"], atol=full_weights * gain, rtol=0)
    torch.testing.assert_close(logits["half"], logits["reference"], atol=half_weights * gain, rtol=0)
    # the tolerance is far below what the semantics change (dropout in the frozen layers) moves
    assert (logits["plain"] - logits["reference"]).abs().max() > half_weights * gain


def logit_sensitivity(model, batch) -> float:
    """max over the logits of the sum over trainable weights of |d logit / d weight|: how far a logit moves,
    to first order, when every trainable weight moves by one unit (the frozen ones are the same in each run)."""
    weights = [p for p in model.parameters() if p.requires_grad]
    logits = model.eval()(**batch).logits.flatten()
    return max(
        sum(g.abs().sum() for g in torch.autograd.grad(logit, weights, retain_graph=True)).item() for logit in logits
    )


def test_size_bound_names_the_setting_and_the_fix():
    depths, tokens, hidden = list(range(13)), 40_000_000, 768
    nbytes = store_nbytes(tokens, 1_000_000, hidden, depths, "float16")
    assert nbytes == 13 * tokens * hidden * 2 + tokens + 8 * 1_000_001 + 8 * 1_000_000
    with pytest.raises(XltError) as err:
        check_store_size(nbytes, 100, depths=depths, tokens=tokens, hidden_size=hidden, **STORE_ARGS)
    message = str(err.value)
    assert (
        f"{SETTINGS}.max_gib" in message
        and "fam.depths" in message
        and f"{nbytes / 2**30:.2f} GiB" in message
        and "= 100" in message
    )
    assert "raise" in message and "prefix_states.shared: false" in message
    check_store_size(nbytes, nbytes / 2**30, depths=depths, tokens=tokens, hidden_size=hidden, **STORE_ARGS)


def test_reading_checks_depth_data_and_settings(tmp_path):
    initial = tiny_classifier("bert")
    examples = raw_examples()
    write_store(initial, examples, tmp_path / "store")
    model = copy.deepcopy(initial)
    with pytest.raises(XltError, match=r"holds freeze depths \[0, 2, 4\], not 3"):
        load_cached_training(model, 3, tmp_path / "store", examples)
    with pytest.raises(XltError, match="depth -1 trains the embeddings"):
        load_cached_training(model, -1, tmp_path / "store", examples)
    with pytest.raises(XltError, match="max_length = 16, this run has 32"):
        load_cached_training(model, 2, tmp_path / "store", examples, expected={"max_length": 32})
    with pytest.raises(XltError, match="holds 20 examples, the training set has 19"):
        load_cached_training(model, 2, tmp_path / "store", examples[:19])
    relabelled = [{**e, "label": (e["label"] + 1) % 3} for e in examples]
    with pytest.raises(XltError, match="stored labels differ"):
        load_cached_training(model, 2, tmp_path / "store", relabelled)
    with pytest.raises(XltError, match="not a prefix-state store"):
        load_cached_training(model, 2, tmp_path, examples)


def test_lengths_must_match_the_tokenisation(tmp_path):
    model = tiny_classifier("bert")
    examples = raw_examples()
    collate = token_collate(model.config.pad_token_id)
    lengths = token_lengths(examples, collate, BATCH)
    assert lengths == [len(e["ids"]) for e in examples]
    wrong = [lengths[0] + 1, *lengths[1:]]
    with pytest.raises(XltError, match="other lengths"):
        write_prefix_store(model, DEPTHS, examples, collate, BATCH, wrong, tmp_path / "store", settings=SETTINGS)
    assert not (tmp_path / "store").exists(), "a failed pass must leave no store behind"


def test_fp16_overflow_is_refused(tmp_path):
    model = tiny_classifier("bert")
    with torch.no_grad():
        model.bert.embeddings.LayerNorm.bias.fill_(1e5)  # beyond fp16's 65504
    with pytest.raises(XltError, match="not finite in float16.*storage_dtype: float32"):
        write_store(model, raw_examples(), tmp_path / "store", "float16", depths=[0])
    np.testing.assert_equal((tmp_path / "store").exists(), False)


def test_store_pass_runs_under_the_training_autocast_and_records_it(tmp_path):
    """A bf16 run's store holds the bf16-autocast forward's states and says so; a run of another
    precision (and a finetune job checks its own) is refused."""
    model = tiny_classifier("bert", dropout=0.1).eval()
    examples = raw_examples()
    collate = token_collate(model.config.pad_token_id)
    lengths = token_lengths(examples, collate, BATCH)
    meta = write_prefix_store(
        model,
        DEPTHS,
        examples,
        collate,
        BATCH,
        lengths,
        tmp_path / "bf16",
        storage_dtype="float32",
        settings=SETTINGS,
        amp_dtype=torch.bfloat16,
    )
    assert meta["precision"] == "bfloat16" and read_store_meta(tmp_path / "bf16")["precision"] == "bfloat16"
    assert write_store(model, examples, tmp_path / "fp32")["precision"] == "fp32"
    depth = DEPTHS[1]
    states, fp32 = (read_prefix_store(tmp_path / name, depth) for name in ("bf16", "fp32"))
    assert (states.precision, fp32.precision) == ("bfloat16", "fp32")
    batch = collate(examples[:BATCH])
    with torch.no_grad(), torch.autocast("cpu", dtype=torch.bfloat16):
        reference = model(
            input_ids=batch["input_ids"], attention_mask=batch["attention_mask"], output_hidden_states=True
        ).hidden_states[depth]
    for row in range(BATCH):
        length = len(examples[row]["ids"])
        torch.testing.assert_close(states.example(row)[0], reference[row, :length].float(), atol=0, rtol=0)
    assert (states.hidden - fp32.hidden).abs().max() > 1e-5  # the fp32 pass is not the bf16 forward
    with pytest.raises(XltError, match="precision = 'bfloat16', this run has 'fp32'"):
        load_cached_training(copy.deepcopy(model), depth, tmp_path / "bf16", examples, expected={"precision": "fp32"})
    cached = load_cached_training(
        copy.deepcopy(model), depth, tmp_path / "bf16", examples, expected={"precision": "bfloat16"}
    )
    assert cached.dataset.states.precision == "bfloat16"


def test_a_store_without_a_recorded_precision_was_computed_in_fp32(tmp_path):
    """Stores written before the pass ran under autocast have no `precision`: they are fp32."""
    import json

    write_store(tiny_classifier("bert"), raw_examples(), tmp_path / "store")
    meta_file = tmp_path / "store" / "meta.json"
    meta = json.loads(meta_file.read_text())
    del meta["precision"]
    meta_file.write_text(json.dumps(meta))
    assert read_store_meta(tmp_path / "store")["precision"] == "fp32"
    assert read_prefix_store(tmp_path / "store", 0).precision == "fp32"
