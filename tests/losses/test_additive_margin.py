import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from xlt.losses.additive_margin import AdditiveMarginSoftmaxLoss, additive_margin_loss


def _numpy_directions(x: np.ndarray, y: np.ndarray, scale: float, margin: float) -> tuple[float, float]:
    """Independent loop implementation: mean over rows / columns of -log softmax at the diagonal."""
    n = len(x)
    s = np.empty((n, n))
    for i in range(n):
        for j in range(n):
            cos = float(np.dot(x[i], y[j]))
            s[i, j] = scale * (cos - margin) if i == j else scale * cos
    rows = [-(s[i, i] - math.log(sum(math.exp(s[i, j]) for j in range(n)))) for i in range(n)]
    cols = [-(s[j, j] - math.log(sum(math.exp(s[i, j]) for i in range(n)))) for j in range(n)]
    return sum(rows) / n, sum(cols) / n


def _unit(rows):
    a = np.asarray(rows, dtype=np.float64)
    return a / np.linalg.norm(a, axis=1, keepdims=True)


def test_orthonormal_3x3_closed_form():
    # cos = I; scale 2, margin 0.5 -> diagonal logit 1, off-diagonal 0 -> each row/column
    # loss is log(1 + 2/e); "sum" doubles it.
    eye = torch.eye(3, dtype=torch.float64)
    expected = math.log(1 + 2 / math.e)
    assert additive_margin_loss(eye, eye, scale=2.0, margin=0.5, symmetric="none").item() == pytest.approx(expected)
    assert additive_margin_loss(eye, eye, scale=2.0, margin=0.5, symmetric="sum").item() == pytest.approx(2 * expected)
    assert additive_margin_loss(eye, eye, scale=2.0, margin=0.5, symmetric="mean").item() == pytest.approx(expected)


def test_asymmetric_3x3_against_loop():
    x = _unit([[1.0, 0.2, 0.0], [0.3, 1.0, 0.5], [0.0, -0.4, 1.0]])
    y = _unit([[0.9, 0.0, 0.4], [0.8, 0.7, 0.0], [0.1, 0.2, 1.0]])
    fwd, bwd = _numpy_directions(x, y, scale=10.0, margin=0.3)
    assert abs(fwd - bwd) > 1e-3  # the case really distinguishes the two directions
    tx, ty = torch.from_numpy(x), torch.from_numpy(y)
    assert additive_margin_loss(tx, ty, 10.0, 0.3, "none").item() == pytest.approx(fwd, rel=1e-10)
    assert additive_margin_loss(ty, tx, 10.0, 0.3, "none").item() == pytest.approx(bwd, rel=1e-10)
    assert additive_margin_loss(tx, ty, 10.0, 0.3, "sum").item() == pytest.approx(fwd + bwd, rel=1e-10)
    assert additive_margin_loss(tx, ty, 10.0, 0.3, "mean").item() == pytest.approx((fwd + bwd) / 2, rel=1e-10)


def test_zero_margin_is_plain_in_batch_softmax_cross_entropy():
    g = torch.Generator().manual_seed(0)
    x = F.normalize(torch.randn(5, 8, generator=g, dtype=torch.float64), dim=1)
    y = F.normalize(torch.randn(5, 8, generator=g, dtype=torch.float64), dim=1)
    labels = torch.arange(5)
    plain = F.cross_entropy(7.0 * x @ y.T, labels)
    assert additive_margin_loss(x, y, scale=7.0, margin=0.0, symmetric="none").item() == pytest.approx(plain.item())
    # a positive margin makes positives harder, so the loss must grow
    assert additive_margin_loss(x, y, scale=7.0, margin=0.3, symmetric="none").item() > plain.item()


def test_module_normalises_and_gradients_flow():
    g = torch.Generator().manual_seed(1)
    raw_x = (3 * torch.randn(4, 6, generator=g)).requires_grad_()
    raw_y = (0.5 * torch.randn(4, 6, generator=g)).requires_grad_()
    loss_fn = AdditiveMarginSoftmaxLoss(scale=10.0, margin=0.3, symmetric="sum")
    loss = loss_fn(raw_x, raw_y)
    expected = additive_margin_loss(F.normalize(raw_x, dim=1), F.normalize(raw_y, dim=1), 10.0, 0.3, "sum")
    assert loss.item() == pytest.approx(expected.item(), rel=1e-6)
    loss.backward()
    for grad in (raw_x.grad, raw_y.grad):
        assert grad is not None and torch.isfinite(grad).all() and grad.abs().sum() > 0


def test_rejects_bad_input():
    with pytest.raises(ValueError, match="same shape"):
        additive_margin_loss(torch.zeros(3, 4), torch.zeros(2, 4))
    with pytest.raises(ValueError, match="symmetric"):
        AdditiveMarginSoftmaxLoss(symmetric="both")
