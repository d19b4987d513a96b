"""The distillation loss against a by-hand computation."""

import pytest
import torch

from xlt.losses.mse_distillation import MSEDistillationLoss, mse_distillation_loss


def test_loss_is_both_sides_mean_squared_error_against_the_teachers_source_vector():
    source = torch.tensor([[1.0, 2.0], [0.0, -1.0]])
    target = torch.tensor([[0.0, 2.0], [1.0, 1.0]])
    teacher = torch.tensor([[1.0, 1.0], [2.0, 0.0]])
    # by hand: source - teacher = [[0, 1], [-2, -1]] -> squares 0 + 1 + 4 + 1 = 6, mean over 4 = 1.5
    #          target - teacher = [[-1, 1], [-1, 1]] -> squares 1 + 1 + 1 + 1 = 4, mean over 4 = 1.0
    assert mse_distillation_loss(source, target, teacher).item() == pytest.approx(2.5)


def test_teacher_vectors_stored_in_half_precision_are_compared_in_the_students():
    source = torch.tensor([[0.5, 0.25]])
    teacher = torch.tensor([[0.0, 0.0]], dtype=torch.float16)
    loss = mse_distillation_loss(source, source, teacher)
    assert loss.dtype == torch.float32 and loss.item() == pytest.approx(2 * (0.25 + 0.0625) / 2)


def test_projection_maps_the_student_to_the_teachers_width_before_the_loss():
    projection = torch.nn.Linear(3, 2, bias=False)
    with torch.no_grad():
        projection.weight.copy_(torch.tensor([[1.0, 0.0, 0.0], [0.0, 1.0, 1.0]]))
    source = torch.tensor([[1.0, 1.0, 1.0]])  # projects to [1, 2]
    target = torch.tensor([[0.0, 0.0, 3.0]])  # projects to [0, 3]
    teacher = torch.tensor([[1.0, 2.0]])
    # source exact (0); target: (0-1)^2 + (3-2)^2 = 2, mean over 2 = 1
    assert MSEDistillationLoss(projection)(source, target, teacher).item() == pytest.approx(1.0)


def test_shapes_must_agree():
    with pytest.raises(ValueError, match="one shape"):
        mse_distillation_loss(torch.zeros(2, 3), torch.zeros(2, 3), torch.zeros(2, 4))
