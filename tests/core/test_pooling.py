import pytest
import torch

from xlt.core.pooling import Pooling, pool

HIDDEN = torch.tensor(
    [
        [[1.0, -2.0], [3.0, 4.0], [100.0, 100.0]],  # last token is padding
        [[-1.0, -1.0], [-3.0, -5.0], [-2.0, 0.0]],  # no padding
    ]
)
MASK = torch.tensor([[1, 1, 0], [1, 1, 1]])


def test_cls_takes_first_token():
    assert torch.equal(pool(HIDDEN, MASK, "cls"), torch.tensor([[1.0, -2.0], [-1.0, -1.0]]))


def test_mean_ignores_padding():
    assert torch.allclose(pool(HIDDEN, MASK, "mean"), torch.tensor([[2.0, 1.0], [-2.0, -2.0]]))


def test_max_ignores_padding_even_when_padding_is_largest():
    assert torch.equal(pool(HIDDEN, MASK, "max"), torch.tensor([[3.0, 4.0], [-1.0, 0.0]]))


def test_max_with_all_negative_values_and_padding():
    hidden = torch.tensor([[[-5.0], [-7.0], [0.0]]])
    assert pool(hidden, torch.tensor([[1, 1, 0]]), "max").item() == -5.0


def test_pooling_module_picks_layer():
    states = (torch.zeros_like(HIDDEN), HIDDEN)
    assert torch.equal(Pooling("cls", layer=-1)(states, MASK), pool(HIDDEN, MASK, "cls"))
    assert torch.equal(Pooling("mean", layer=0)(states, MASK), torch.zeros(2, 2))


def test_unknown_pooling():
    with pytest.raises(ValueError, match="unknown pooling 'sum'"):
        pool(HIDDEN, MASK, "sum")
