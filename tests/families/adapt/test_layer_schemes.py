import pytest
import torch

from xlt.core.errors import XltError
from xlt.families.adapt.layer_schemes import apply_scheme, head_parameters, schedulable_parameters
from xlt.families.adapt.schemes import GradualScheme, RangeScheme, parse_scheme, trainable_layers


@pytest.mark.parametrize(
    "text, expected",
    [
        ("0-12", set(range(1, 13))),
        ("6-12", {7, 8, 9, 10, 11, 12}),  # "last 6 layers" in the seed
        ("9-12", {10, 11, 12}),
        ("11-12", {12}),
        (" 3 - 5 ", {4, 5}),
    ],
)
def test_ranges_train_layers_after_the_lower_boundary(text, expected):
    scheme = parse_scheme(text, 12)
    assert trainable_layers(scheme, step=0, epoch=0, num_layers=12) == expected
    assert trainable_layers(scheme, step=10_000, epoch=5, num_layers=12) == expected


def test_seed_gradual_schedule_by_epoch():
    scheme = parse_scheme({"gradual": {"every_epochs": 1, "step": 4, "start": 4}}, 12)
    assert trainable_layers(scheme, 0, 0, 12) == {9, 10, 11, 12}
    assert trainable_layers(scheme, 999, 0, 12) == {9, 10, 11, 12}
    assert trainable_layers(scheme, 1000, 1, 12) == set(range(5, 13))
    assert trainable_layers(scheme, 2000, 2, 12) == set(range(1, 13))
    assert trainable_layers(scheme, 3000, 7, 12) == set(range(1, 13))


def test_gradual_schedule_by_steps_with_own_start():
    scheme = parse_scheme({"gradual": {"every_steps": 100, "step": 2, "start": 1}}, 6)
    expected_top = {0: 1, 99: 1, 100: 3, 199: 3, 200: 5, 299: 5, 300: 6, 10_000: 6}
    for step, top in expected_top.items():
        assert trainable_layers(scheme, step, epoch=0, num_layers=6) == set(range(7 - top, 7)), step


def test_gradual_start_defaults_to_step_and_two_epoch_stages():
    scheme = parse_scheme({"gradual": {"every_epochs": 2, "step": 3}}, 12)
    assert scheme == GradualScheme(start=3, step=3, every_epochs=2)
    assert [len(trainable_layers(scheme, 0, e, 12)) for e in range(8)] == [3, 3, 6, 6, 9, 9, 12, 12]


@pytest.mark.parametrize(
    "bad, fragment",
    [
        ("6-14", "0 <= A < B <= 12"),
        ("12-12", "0 <= A < B <= 12"),
        ("7-3", "0 <= A < B <= 12"),
        ("last6", "not a range"),
        ({"gradual": {"step": 4}}, "exactly one of"),
        ({"gradual": {"every_steps": 10, "every_epochs": 1, "step": 4}}, "exactly one of"),
        ({"gradual": {"every_epochs": 1}}, "'step'"),
        ({"gradual": {"every_epochs": 1, "step": 0}}, "positive integer"),
        ({"gradual": {"every_epochs": 1, "step": 2, "start": 13}}, "between 1 and 12"),
        ({"gradual": {"every_epochs": 1, "step": 2, "speed": 1}}, "unknown key"),
        ({"gradually": {}}, "single key 'gradual'"),
        (12, "has type int"),
    ],
)
def test_bad_schemes_name_the_problem(bad, fragment):
    with pytest.raises(XltError) as err:
        parse_scheme(bad, 12)
    assert fragment in str(err.value)
    assert repr(bad) in str(err.value)


def _tiny_bert(tie=True):
    from transformers import BertConfig, BertForMaskedLM

    torch.manual_seed(0)
    return BertForMaskedLM(
        BertConfig(
            vocab_size=50,
            hidden_size=16,
            num_hidden_layers=4,
            num_attention_heads=2,
            intermediate_size=32,
            max_position_embeddings=32,
            tie_word_embeddings=tie,
        )
    )


def _trainable_names(model):
    return {n for n, p in model.named_parameters() if p.requires_grad}


def test_apply_scheme_freezes_embeddings_keeps_tied_decoder_frozen_and_trains_head():
    model = _tiny_bert()
    assert model.cls.predictions.decoder.weight is model.bert.embeddings.word_embeddings.weight
    active = apply_scheme(model, parse_scheme("2-4", 4), step=0, epoch=0)
    assert active == {3, 4}
    names = _trainable_names(model)
    assert not any(n.startswith("bert.embeddings.") for n in names)
    assert not model.cls.predictions.decoder.weight.requires_grad
    assert model.cls.predictions.bias.requires_grad and model.cls.predictions.decoder.bias.requires_grad
    assert model.cls.predictions.transform.dense.weight.requires_grad
    layer_names = {n.split(".")[3] for n in names if n.startswith("bert.encoder.layer.")}
    assert layer_names == {"2", "3"}  # 0-based module indices of layers 3 and 4

    apply_scheme(model, parse_scheme("2-4", 4), step=0, epoch=0, train_head=False)
    assert not any(n.startswith("cls.") for n in _trainable_names(model))
    assert not model.bert.embeddings.word_embeddings.weight.requires_grad


def test_gradual_unfreezing_on_a_model_over_steps():
    model = _tiny_bert()
    scheme = parse_scheme({"gradual": {"every_steps": 10, "step": 1, "start": 1}}, 4)
    seen = []
    for step in (0, 9, 10, 25, 40):
        apply_scheme(model, scheme, step=step, epoch=0)
        seen.append({int(n.split(".")[3]) for n in _trainable_names(model) if n.startswith("bert.encoder.layer.")})
    assert seen == [{3}, {3}, {2, 3}, {1, 2, 3}, {0, 1, 2, 3}]


def test_untied_decoder_weight_is_a_head_parameter():
    model = _tiny_bert(tie=False)
    assert model.cls.predictions.decoder.weight is not model.bert.embeddings.word_embeddings.weight
    apply_scheme(model, RangeScheme(3, 4), 0, 0)
    assert model.cls.predictions.decoder.weight.requires_grad
    assert not model.bert.embeddings.word_embeddings.weight.requires_grad


def test_schedulable_parameters_exclude_only_embeddings():
    model = _tiny_bert()
    embedding_ids = {id(p) for p in model.bert.embeddings.parameters()}
    schedulable = {id(p) for p in schedulable_parameters(model)}
    everything = {id(p) for p in model.parameters()}
    assert schedulable == everything - embedding_ids
    assert {id(p) for p in head_parameters(model)} == {id(p) for p in model.cls.parameters()} - embedding_ids


def test_distilbert_head_and_tied_projector():
    from transformers import DistilBertConfig, DistilBertForMaskedLM

    model = DistilBertForMaskedLM(
        DistilBertConfig(vocab_size=50, dim=16, n_layers=3, n_heads=2, hidden_dim=32, max_position_embeddings=32)
    )
    apply_scheme(model, parse_scheme("2-3", 3), 0, 0)
    assert not model.vocab_projector.weight.requires_grad
    assert model.vocab_projector.bias.requires_grad and model.vocab_transform.weight.requires_grad
    layers = {int(n.split(".")[3]) for n in _trainable_names(model) if n.startswith("distilbert.transformer.layer.")}
    assert layers == {2}
