"""Frozen-prefix caching must train exactly what uncached training with a frozen prefix trains.

References are independent of xlt.frozen_prefix.prefix_cache: the full transformers model's own forward
(logits, output_hidden_states) and an ordinary uncached AdamW loop over token batches.
"""

from __future__ import annotations

import copy

import pytest
import torch
from helpers.numerics import adamw_drift, forward_bound, head_gain, summation_order_bound
from torch.utils.data import DataLoader
from transformers import (
    BertConfig,
    BertForSequenceClassification,
    DistilBertConfig,
    DistilBertForSequenceClassification,
    RobertaConfig,
    RobertaForSequenceClassification,
    XLMRobertaConfig,
    XLMRobertaForSequenceClassification,
)

from xlt.core.errors import XltError
from xlt.core.freezing import freeze, trainable_parameters
from xlt.core.models import encoder_parts
from xlt.frozen_prefix.cached_top import CachedTopModel
from xlt.frozen_prefix.prefix_cache import (
    STORAGE_RELATIVE_ERROR,
    PrefixStateDataset,
    cache_examples,
    collate_prefix_states,
    compute_prefix_states,
)

LAYERS = 4
VOCAB = 120
ARCHS = ["bert", "xlm-roberta", "roberta", "distilbert"]

pytestmark = pytest.mark.numerics  # cached against uncached arithmetic throughout


@pytest.fixture(autouse=True, scope="module")
def one_thread():
    # Tiny models gain nothing from intra-op threads, and on a shared CPU spinning threads
    # multiply the run time several-fold.
    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(previous)


def tiny_classifier(arch: str, dropout: float = 0.0, attn: str = "sdpa", num_labels: int = 3, seed: int = 0):
    torch.manual_seed(seed)
    common = dict(vocab_size=VOCAB, num_labels=num_labels, max_position_embeddings=48)
    if arch == "distilbert":
        config = DistilBertConfig(
            dim=32,
            n_layers=LAYERS,
            n_heads=4,
            hidden_dim=64,
            dropout=dropout,
            attention_dropout=dropout,
            seq_classif_dropout=dropout,
            pad_token_id=0,
            **common,
        )
        cls = DistilBertForSequenceClassification
    else:
        config_cls, cls = {
            "bert": (BertConfig, BertForSequenceClassification),
            "roberta": (RobertaConfig, RobertaForSequenceClassification),
            "xlm-roberta": (XLMRobertaConfig, XLMRobertaForSequenceClassification),
        }[arch]
        config = config_cls(
            hidden_size=32,
            num_hidden_layers=LAYERS,
            num_attention_heads=4,
            intermediate_size=64,
            hidden_dropout_prob=dropout,
            attention_probs_dropout_prob=dropout,
            pad_token_id=0 if arch == "bert" else 1,
            type_vocab_size=2,
            **common,
        )
    config._attn_implementation = attn
    return cls(config)


def token_batch(model, lengths: list[int], padded_to: int, generator: torch.Generator, left_pad_rows=()) -> dict:
    """Random token ids with per-row lengths; left_pad_rows are padded at the start instead."""
    pad = model.config.pad_token_id
    ids = torch.full((len(lengths), padded_to), pad, dtype=torch.long)
    mask = torch.zeros(len(lengths), padded_to, dtype=torch.long)
    for row, length in enumerate(lengths):
        span = slice(padded_to - length, padded_to) if row in left_pad_rows else slice(0, length)
        ids[row, span] = torch.randint(5, VOCAB, (length,), generator=generator)
        mask[row, span] = 1
    batch = {
        "input_ids": ids,
        "attention_mask": mask,
        "labels": torch.randint(0, model.config.num_labels, (len(lengths),), generator=generator),
    }
    if not isinstance(model, DistilBertForSequenceClassification):
        batch["token_type_ids"] = (torch.arange(padded_to) >= padded_to // 2).long().expand(len(lengths), -1).clone()
    return batch


def example_batches(model, n_batches: int = 4, batch_size: int = 4, seed: int = 1) -> list[dict]:
    generator = torch.Generator().manual_seed(seed)
    batches = []
    for _ in range(n_batches):
        lengths = torch.randint(3, 16, (batch_size,), generator=generator).tolist()
        # Pad beyond the longest row (as max_length padding does) so re-padding changes shapes.
        batches.append(token_batch(model, lengths, max(lengths) + 2, generator))
    return batches


def cached_batches(states, batch_size: int) -> list[dict]:
    loader = DataLoader(
        PrefixStateDataset(states), batch_size=batch_size, shuffle=False, collate_fn=collate_prefix_states
    )
    return list(loader)


def mid_depth() -> int:
    return LAYERS // 2


def hidden_scale(model, batch) -> float:
    """The largest |activation| of the model's forward (LayerNorm outputs and embeddings): the scale the
    summation-order bounds are relative to; the logits' scale is it times head_gain(model)."""
    inputs = {k: v for k, v in batch.items() if k in ("input_ids", "attention_mask", "token_type_ids")}
    with torch.no_grad():
        return max(h.abs().max().item() for h in model(**inputs, output_hidden_states=True).hidden_states)


def training_drift(steps: int, lr: float, bf16: bool = False) -> tuple[float, float]:
    """(atol, rtol) of the parameters cached and uncached training reach on these tiny models: the gradient
    comes through the forward (every layer and the head: the prefix pass batches otherwise) and back."""
    return adamw_drift(steps, lr, summation_order_bound(2 * (LAYERS + 1), 64, bf16=bf16))


@pytest.mark.parametrize("attn", ["sdpa", "eager"])
@pytest.mark.parametrize("arch", ARCHS)
def test_cached_logits_equal_full_model_logits(arch, attn):
    model = tiny_classifier(arch, dropout=0.1, attn=attn).eval()
    generator = torch.Generator().manual_seed(3)
    batch = token_batch(model, [9, 4, 12, 6], 14, generator, left_pad_rows=(3,))
    with torch.no_grad():
        expected = model(**{k: v for k, v in batch.items() if k != "labels"}).logits
    # the prefix pass and the top model pad to other widths than the batch: every stage's sums may run in
    # another order (measured: bitwise under AVX2 and ATEN_CPU_CAPABILITY=default)
    bound = forward_bound(model.config, tokens=14) * hidden_scale(model, batch) * head_gain(model)
    for depth in (0, mid_depth(), LAYERS):
        states = compute_prefix_states(model, depth, [batch])
        top = CachedTopModel(model, depth).eval()
        (cached,) = cached_batches(states, batch_size=4)
        with torch.no_grad():
            logits = top(**cached).logits
        torch.testing.assert_close(logits, expected, atol=bound, rtol=0)


@pytest.mark.parametrize("arch", ARCHS)
def test_prefix_states_are_the_models_hidden_states(arch):
    model = tiny_classifier(arch).eval()
    batches = example_batches(model, n_batches=2)
    for depth in (0, mid_depth(), LAYERS):
        states = compute_prefix_states(model, depth, batches)
        index = 0
        for batch in batches:
            with torch.no_grad():
                out = model(
                    input_ids=batch["input_ids"],
                    attention_mask=batch["attention_mask"],
                    **({"token_type_ids": batch["token_type_ids"]} if "token_type_ids" in batch else {}),
                    output_hidden_states=True,
                )
            reference = out.hidden_states[depth]
            for row in range(reference.shape[0]):
                length = int(batch["attention_mask"][row].sum())
                hidden, mask = states.example(index)
                assert hidden.shape == (length, 32)
                assert mask.tolist() == [1] * length
                # the layers below the boundary sum in another order (another batch); the embeddings are
                # per token, so depth 0 is exact (measured: bitwise at every depth, AVX2 and default)
                bound = forward_bound(model.config, stages=depth, tokens=16) * reference.abs().max().item()
                torch.testing.assert_close(hidden, reference[row, :length], atol=bound, rtol=0)
                index += 1
        assert index == len(states)
        assert torch.equal(states.labels, torch.cat([b["labels"] for b in batches]))


def train_uncached(model, depth, batches, steps):
    freeze(model, depth)
    model.train()
    optimizer = torch.optim.AdamW(trainable_parameters(model), lr=1e-3, weight_decay=0.01)
    for batch in batches[:steps]:
        optimizer.zero_grad()
        model(**batch).loss.backward()
        optimizer.step()


def train_cached(model, depth, batches, steps):
    freeze(model, depth)
    states = compute_prefix_states(model, depth, batches)
    top = CachedTopModel(model, depth)
    top.train()
    optimizer = torch.optim.AdamW(top.parameters(), lr=1e-3, weight_decay=0.01)
    for batch in cached_batches(states, batch_size=batches[0]["input_ids"].shape[0])[:steps]:
        optimizer.zero_grad()
        top(**batch).loss.backward()
        optimizer.step()


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("depth", [0, mid_depth(), LAYERS])
def test_cached_training_reaches_uncached_parameters(arch, depth):
    steps = 4
    initial = tiny_classifier(arch, dropout=0.0)
    uncached, cached = copy.deepcopy(initial), copy.deepcopy(initial)
    batches = example_batches(initial, n_batches=steps)
    train_uncached(uncached, depth, batches, steps)
    train_cached(cached, depth, batches, steps)

    before = dict(initial.named_parameters())
    after_uncached = dict(uncached.named_parameters())
    frozen = {name for name, p in cached.named_parameters() if not p.requires_grad}
    # measured at most 9.0e-8 (ATEN_CPU_CAPABILITY=default) and 6.0e-8 (AVX2), weights |w| <= 1
    atol, rtol = training_drift(steps, lr=1e-3)
    moved = 0
    for name, param in cached.named_parameters():
        torch.testing.assert_close(param, after_uncached[name], atol=atol, rtol=rtol, msg=name)
        if name in frozen:
            assert torch.equal(param, before[name]), f"frozen {name} changed"
        elif not torch.allclose(param, before[name], atol=atol, rtol=rtol):
            moved += 1
    assert moved > 0, "training moved no parameter; the comparison would be vacuous"
    assert frozen == set(freeze(copy.deepcopy(initial), depth))


def test_top_model_shares_parameters_and_saves_trained_weights(tmp_path):
    model = tiny_classifier("bert")
    batches = example_batches(model, n_batches=1)
    states = compute_prefix_states(model, 1, batches)
    top = CachedTopModel(model, 1)
    top_ids = {id(p) for p in top.parameters()}
    assert top_ids == {id(p) for p in trainable_parameters(model)}
    prefix = encoder_parts(model)
    assert not top_ids & {id(p) for p in prefix.embeddings.parameters()}
    assert not top_ids & {id(p) for p in prefix.layers[0].parameters()}

    optimizer = torch.optim.AdamW(top.parameters(), lr=1e-2)
    top(**cached_batches(states, 4)[0]).loss.backward()
    optimizer.step()
    top.save_pretrained(tmp_path)
    reloaded = BertForSequenceClassification.from_pretrained(tmp_path)
    for name, param in model.named_parameters():  # the same numbers written and read back: exact
        assert torch.equal(reloaded.state_dict()[name], param.detach()), name


def test_prefix_runs_without_dropout_and_restores_training_mode():
    model = tiny_classifier("bert", dropout=0.5)
    batches = example_batches(model, n_batches=1)
    batch = batches[0]
    model.train()
    first = compute_prefix_states(model, 2, batches)
    second = compute_prefix_states(model, 2, batches)
    assert model.training
    assert torch.equal(first.hidden, second.hidden)
    model.eval()
    with torch.no_grad():
        reference = model(
            input_ids=batch["input_ids"],
            attention_mask=batch["attention_mask"],
            token_type_ids=batch["token_type_ids"],
            output_hidden_states=True,
        ).hidden_states[2]
    length = int(batch["attention_mask"][0].sum())
    # two layers of the same batch's sums (measured bitwise, AVX2 and default)
    bound = forward_bound(model.config, stages=2, tokens=16) * reference.abs().max().item()
    torch.testing.assert_close(first.example(0)[0], reference[0, :length], atol=bound, rtol=0)

    # train() on the top model reaches layers 3..L and the head only: the prefix stays in eval mode.
    top = CachedTopModel(model, 2)
    top.train()
    parts = encoder_parts(model)
    assert not parts.embeddings.training and not parts.layers[0].training and not parts.layers[1].training
    assert all(layer.training for layer in parts.layers[2:]) and model.classifier.training


@pytest.mark.parametrize("storage_dtype", ["float16", "bfloat16"])
def test_half_precision_storage_within_rounding_bound(storage_dtype):
    model = tiny_classifier("bert").eval()
    batches = example_batches(model, n_batches=2)
    full = compute_prefix_states(model, 2, batches)
    half = compute_prefix_states(model, 2, batches, storage_dtype=storage_dtype)
    assert half.hidden.element_size() == 2
    assert half.nbytes < full.nbytes
    error = (half.hidden.float() - full.hidden).abs()
    # Relative bound in the normal range; fp16 subnormals (|x| < 2**-14) are spaced 2**-24 apart.
    absolute = 2.0**-25 if storage_dtype == "float16" else 0.0
    assert torch.all(error <= STORAGE_RELATIVE_ERROR[storage_dtype] * full.hidden.abs() + absolute)
    # The rounded states enter the top model's 2 layers and head: each stage passes a relative input error on
    # about once (LayerNorm renormalises, the residual adds it once), relative to the activations' scale
    # (measured 6.5e-5 with either dtype, AVX2 and default; through the head's gain the bound is 1.6e-3 for fp16,
    # 1.3e-2 for bf16).
    bound = (
        (LAYERS - 2 + 1) * STORAGE_RELATIVE_ERROR[storage_dtype] * hidden_scale(model, batches[0]) * head_gain(model)
    )
    top = CachedTopModel(model, 2).eval()
    with torch.no_grad():
        for a, b in zip(cached_batches(full, 4), cached_batches(half, 4)):
            torch.testing.assert_close(top(**b).logits, top(**a).logits, atol=bound, rtol=0)


def test_collate_pads_right_and_keeps_order_and_labels():
    model = tiny_classifier("distilbert").eval()
    batches = example_batches(model, n_batches=2)
    states = compute_prefix_states(model, 1, batches)
    items = [PrefixStateDataset(states)[i] for i in (5, 0, 2)]
    batch = collate_prefix_states(items)
    lengths = [item["hidden_states"].shape[0] for item in items]
    assert batch["hidden_states"].shape == (3, max(lengths), 32)
    assert batch["attention_mask"].sum(dim=1).tolist() == lengths
    assert torch.equal(batch["labels"], states.labels[[5, 0, 2]])
    for row, length in enumerate(lengths):
        assert torch.all(batch["hidden_states"][row, length:] == 0)


def test_depth_minus_one_and_out_of_range_are_rejected():
    model = tiny_classifier("bert")
    batches = example_batches(model, n_batches=1)
    with pytest.raises(XltError, match="cannot use the frozen-prefix cache"):
        compute_prefix_states(model, -1, batches)
    with pytest.raises(XltError, match="cannot use the frozen-prefix cache"):
        CachedTopModel(model, -1)
    with pytest.raises(ValueError, match="out of range"):
        CachedTopModel(model, LAYERS + 1)


def test_regression_head_loss_matches_full_model():
    model = tiny_classifier("xlm-roberta", num_labels=1).eval()
    batch = example_batches(model, n_batches=1)[0]
    batch["labels"] = torch.linspace(0.0, 5.0, batch["input_ids"].shape[0])
    with torch.no_grad():
        full = model(**batch)
        expected = full.loss
        states = compute_prefix_states(model, 3, [batch])
        loss = CachedTopModel(model, 3)(**cached_batches(states, 4)[0]).loss
    # the mean squared error moves by at most 2 max|logit - label| times the logits' bound (measured: bitwise)
    logits = forward_bound(model.config, tokens=16) * hidden_scale(model, batch) * head_gain(model)
    bound = 2 * (full.logits.squeeze(-1) - batch["labels"]).abs().max().item() * logits
    torch.testing.assert_close(loss, expected, atol=bound, rtol=0)


def token_collate(pad_token_id: int):
    """A tokenising collate of the kind the training loop uses: pads raw examples per batch."""

    def collate(examples: list[dict]) -> dict:
        width = max(len(e["ids"]) for e in examples)
        ids = torch.full((len(examples), width), pad_token_id, dtype=torch.long)
        mask = torch.zeros(len(examples), width, dtype=torch.long)
        for row, e in enumerate(examples):
            ids[row, : len(e["ids"])] = torch.tensor(e["ids"])
            mask[row, : len(e["ids"])] = 1
        return {"input_ids": ids, "attention_mask": mask, "labels": torch.tensor([e["label"] for e in examples])}

    return collate


def training_case(arch: str, precision: str):
    """(depth, examples, TrainArgs, untrained model, collate) of a small cached-vs-uncached training comparison."""
    from xlt.core.train_args import TrainArgs

    generator = torch.Generator().manual_seed(5)
    examples = [
        {"ids": torch.randint(5, VOCAB, (int(n),), generator=generator).tolist(), "label": int(n) % 3}
        for n in torch.randint(3, 14, (20,), generator=generator)
    ]
    args = TrainArgs(epochs=2, batch_size=4, lr=1e-3, warmup_ratio=0.0, device="cpu", precision=precision, seed=3)
    initial = tiny_classifier(arch)
    return mid_depth(), examples, args, initial, token_collate(initial.config.pad_token_id)


def assert_trained_alike(cached, uncached, initial, args) -> None:
    """Cached training ended where uncached training ended, and it did train (beyond the tolerance).

    Measured at most 3.6e-8 (default) and 4.2e-8 (AVX2) in fp32, bitwise in bf16, weights |w| <= 1."""
    steps = args.epochs * -(-20 // args.batch_size)  # training_case's 20 examples
    atol, rtol = training_drift(steps, args.lr, bf16=args.precision == "bf16")
    after_uncached = dict(uncached.named_parameters())
    for name, param in cached.named_parameters():
        torch.testing.assert_close(param, after_uncached[name], atol=atol, rtol=rtol, msg=name)
    assert not torch.allclose(cached.classifier.weight, initial.classifier.weight, atol=atol, rtol=rtol)


@pytest.mark.parametrize("arch", ["bert", "distilbert"])
def test_cached_examples_through_the_training_loop_match_uncached(arch):
    from xlt.core.classification import classification_loss
    from xlt.core.train_inputs import Objective
    from xlt.core.training import train

    depth, examples, args, initial, collate = training_case(arch, "fp32")

    uncached = copy.deepcopy(initial)
    freeze(uncached, depth)
    train(uncached, Objective(examples, collate, classification_loss), args)

    cached = copy.deepcopy(initial)
    dataset = cache_examples(cached, depth, examples, collate, batch_size=8)
    assert len(dataset) == len(examples)
    train(CachedTopModel(cached, depth), Objective(dataset, collate_prefix_states, classification_loss), args)

    assert_trained_alike(cached, uncached, initial, args)


def test_moving_the_top_model_moves_the_whole_model():
    model = tiny_classifier("xlm-roberta")
    top = CachedTopModel(model, 1)
    assert top.double() is top
    assert {p.dtype for p in model.parameters()} == {torch.float64}


def autocast_hidden_states(model, batch, depth: int, amp_dtype) -> torch.Tensor:
    """The full model's own forward in eval mode under the autocast the training loop uses."""
    inputs = {k: v for k, v in batch.items() if k in ("input_ids", "attention_mask", "token_type_ids")}
    with torch.no_grad(), torch.autocast("cpu", dtype=amp_dtype):
        return model(**inputs, output_hidden_states=True).hidden_states[depth]


@pytest.mark.parametrize("arch", ["bert", "distilbert"])
def test_prefix_runs_under_the_training_autocast(arch):
    """A bf16 run's cached states are the uncached bf16-autocast forward's, not fp32 states."""
    model = tiny_classifier(arch).eval()
    batches = example_batches(model, n_batches=2)
    depth = mid_depth()
    states = compute_prefix_states(model, depth, batches, amp_dtype=torch.bfloat16)
    fp32 = compute_prefix_states(model, depth, batches)
    assert (states.precision, fp32.precision) == ("bfloat16", "fp32")
    index = 0
    for batch in batches:
        reference = autocast_hidden_states(model, batch, depth, torch.bfloat16)
        for row in range(reference.shape[0]):
            length = int(batch["attention_mask"][row].sum())
            torch.testing.assert_close(states.example(index)[0], reference[row, :length].float(), atol=0, rtol=0)
            index += 1
    # not vacuous: an fp32 prefix (what the cache computed before it ran under the training's
    # autocast) is off the bf16 forward by far more than fp32 rounding
    assert (states.hidden - fp32.hidden).abs().max() > 1e-5
    # the autocast stays inside the pass: the caller's code between batches runs in fp32
    assert not torch.is_autocast_enabled("cpu")


@pytest.mark.parametrize("arch", ["bert", "distilbert"])
def test_cached_training_under_bf16_autocast_matches_uncached(arch):
    """Through the training loop with precision bf16 on a CPU (dropout 0): prepare_cached_training
    runs the prefix under the loop's autocast, so cached training ends where uncached training ends."""
    from xlt.core.classification import classification_loss
    from xlt.core.train_inputs import Objective
    from xlt.core.training import train
    from xlt.frozen_prefix.cached_top import prepare_cached_training

    depth, examples, args, initial, collate = training_case(arch, "bf16")

    uncached = copy.deepcopy(initial)
    freeze(uncached, depth)
    result = train(uncached, Objective(examples, collate, classification_loss), args)
    assert result.precision == "bfloat16"

    cached = copy.deepcopy(initial)
    prepared = prepare_cached_training(cached, depth, examples, collate, 8, "cpu", precision=args.precision)
    assert prepared.dataset.states.precision == "bfloat16"
    train(prepared.top, Objective(prepared.dataset, collate_prefix_states, classification_loss), args)

    assert_trained_alike(cached, uncached, initial, args)
