import pytest
import torch
from conftest import tiny_classifier

from xlt.core.freezing import count_parameters, freeze, freeze_word_embeddings
from xlt.core.models import encoder_parts


def test_encoder_parts_finds_every_layer(arch):
    model = tiny_classifier(arch, layers=4)
    parts = encoder_parts(model)
    assert parts.num_layers == 4
    assert parts.embeddings is not None


@pytest.mark.parametrize("depth", [-1, 0, 2, 4])
def test_frozen_parameters_get_no_gradient_and_do_not_change(arch, depth):
    model = tiny_classifier(arch, layers=4)
    frozen_names = set(freeze(model, depth))
    parts = encoder_parts(model)
    expected = set()
    if depth >= 0:
        expected |= {id(p) for p in parts.embeddings.parameters()}
        for layer in parts.layers[:depth]:
            expected |= {id(p) for p in layer.parameters()}
    named = dict(model.named_parameters())
    assert {id(named[n]) for n in frozen_names} == expected
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-2)
    ids = torch.randint(5, 100, (4, 10))
    for _ in range(3):
        loss = model(input_ids=ids, attention_mask=torch.ones_like(ids), labels=torch.tensor([0, 1, 2, 0])).loss
        loss.backward()
        for n in frozen_names:
            assert named[n].grad is None
        optimizer.step()
        optimizer.zero_grad()
    for n, p in model.named_parameters():
        if n in frozen_names:
            assert torch.equal(p, before[n]), n
    top = next(iter(parts.layers[-1].parameters()))
    assert top.requires_grad == (depth < 4)
    changed = [n for n, p in model.named_parameters() if not torch.equal(p, before[n])]
    assert changed and not set(changed) & frozen_names


def test_depth_out_of_range_names_the_range():
    model = tiny_classifier("bert", layers=4)
    with pytest.raises(ValueError, match=r"freeze depth 5 .* 4 layers.*1\.\.4"):
        freeze(model, 5)
    with pytest.raises(ValueError):
        freeze(model, -2)


def test_freeze_word_embeddings_only():
    model = tiny_classifier("bert", layers=2)
    freeze_word_embeddings(model)
    frozen = [n for n, p in model.named_parameters() if not p.requires_grad]
    assert frozen == ["bert.embeddings.word_embeddings.weight"]
    counts = count_parameters(model)
    assert counts["params_total"] - counts["params_trainable"] == model.bert.embeddings.word_embeddings.weight.numel()
