import math

import pytest
import torch
import torch.nn.functional as F

from xlt.core.errors import XltError
from xlt.losses.distillation import DistillationLoss, distillation_loss, soft_cross_entropy, soft_targets

TEACHER = [[1.0, 2.0, 3.0], [0.0, 0.0, 1.0]]
STUDENT = [[0.5, 0.0, -0.5], [1.0, 1.0, 1.0]]


def _softmax(row):
    m = max(row)
    e = [math.exp(x - m) for x in row]
    return [x / sum(e) for x in e]


def test_matches_hand_computation_two_examples_three_classes():
    temperature = 0.5
    per_example = []
    for t_row, s_row in zip(TEACHER, STUDENT):
        q = _softmax([x / temperature for x in t_row])
        p = _softmax(s_row)
        per_example.append(-sum(qk * math.log(pk) for qk, pk in zip(q, p)))
    # Second example: student is uniform, so its loss is log(3) whatever the teacher says.
    assert per_example[1] == pytest.approx(math.log(3))

    s, t = torch.tensor(STUDENT), torch.tensor(TEACHER)
    assert distillation_loss(s, t, temperature).item() == pytest.approx(sum(per_example) / 2, rel=1e-6)
    assert distillation_loss(s, t, temperature, "sum").item() == pytest.approx(sum(per_example), rel=1e-6)
    assert distillation_loss(s, t, temperature, "none").tolist() == pytest.approx(per_example, rel=1e-6)


def test_first_example_number_by_hand():
    # T = 0.5: teacher logits /T = [2, 4, 6]; q = e^{[2,4,6]} / sum.
    q = [math.exp(2), math.exp(4), math.exp(6)]
    q = [x / sum(q) for x in q]
    z = math.log(math.exp(0.5) + 1 + math.exp(-0.5))
    log_p = [0.5 - z, 0.0 - z, -0.5 - z]
    expected = -sum(a * b for a, b in zip(q, log_p))
    got = distillation_loss(torch.tensor(STUDENT[:1]), torch.tensor(TEACHER[:1]), 0.5)
    assert got.item() == pytest.approx(expected, rel=1e-6)
    # q ~ [0.0159, 0.1173, 0.8668], -log p ~ [0.680, 1.180, 1.680]
    assert expected == pytest.approx(1.6057, abs=1e-3)


def test_small_temperature_is_hard_label_cross_entropy_on_teacher_argmax():
    torch.manual_seed(0)
    teacher = torch.randn(16, 3)
    student = torch.randn(16, 3)
    hard = F.cross_entropy(student, teacher.argmax(dim=-1))
    assert distillation_loss(student, teacher, 1e-4).item() == pytest.approx(hard.item(), rel=1e-5)
    # ... and a large temperature gives (nearly) uniform targets: loss -> mean of -mean_k log p_k.
    uniform = (-F.log_softmax(student, dim=-1).mean(dim=-1)).mean()
    assert distillation_loss(student, teacher, 1e4).item() == pytest.approx(uniform.item(), rel=1e-4)


def test_temperature_one_with_one_hot_like_teacher_is_cross_entropy():
    student = torch.tensor([[0.3, -1.0, 2.0], [1.5, 0.2, 0.1], [0.0, 0.0, 0.0]])
    labels = torch.tensor([2, 0, 1])
    teacher = F.one_hot(labels, 3).float() * 50.0  # softmax puts 1 - 2e-22 on the label
    assert distillation_loss(student, teacher, 1.0).item() == pytest.approx(
        F.cross_entropy(student, labels).item(), rel=1e-6
    )


def test_temperature_sharpens_teacher():
    teacher = torch.tensor([[1.0, 2.0, 3.0]])
    top = [soft_targets(teacher, t)[0, 2].item() for t in (10.0, 1.0, 0.1)]
    assert top[0] < top[1] < top[2]
    assert top[2] == pytest.approx(1 / (1 + math.exp(-10) + math.exp(-20)), rel=1e-6)


def test_gradient_is_p_minus_q_over_n_and_teacher_gets_none():
    student = torch.tensor(STUDENT, requires_grad=True)
    teacher = torch.tensor(TEACHER, requires_grad=True)
    loss = DistillationLoss(temperature=0.1)(student, teacher)
    loss.backward()
    q = torch.softmax(torch.tensor(TEACHER) / 0.1, dim=-1)
    p = torch.softmax(torch.tensor(STUDENT), dim=-1)
    assert torch.allclose(student.grad, (p - q) / 2, atol=1e-6)
    assert teacher.grad is None
    # Gradient check against finite differences in float64.
    s64 = torch.tensor(STUDENT, dtype=torch.float64, requires_grad=True)
    t64 = torch.tensor(TEACHER, dtype=torch.float64)
    assert torch.autograd.gradcheck(lambda s: soft_cross_entropy(s, torch.softmax(t64 / 0.3, -1)), (s64,))


def test_minimum_is_at_student_equal_to_tempered_teacher():
    teacher = torch.tensor(TEACHER)
    q = soft_targets(teacher, 2.0)
    at_q = distillation_loss(torch.log(q), teacher, 2.0)
    entropy = -(q * torch.log(q)).sum(-1).mean()
    assert at_q.item() == pytest.approx(entropy.item(), rel=1e-5)
    assert distillation_loss(torch.tensor(STUDENT), teacher, 2.0).item() > at_q.item()


@pytest.mark.parametrize("bad", [0, -0.1, float("nan"), float("inf"), True])
def test_bad_temperature(bad):
    with pytest.raises(XltError, match="temperature"):
        distillation_loss(torch.zeros(1, 2), torch.zeros(1, 2), bad)
    with pytest.raises(XltError, match="temperature"):
        DistillationLoss(bad)


def test_shape_mismatch_names_shapes():
    with pytest.raises(XltError, match=r"\(2, 3\).*\(2, 2\)"):
        distillation_loss(torch.zeros(2, 2), torch.zeros(2, 3))
    with pytest.raises(XltError, match="reduction"):
        distillation_loss(torch.zeros(2, 2), torch.zeros(2, 2), reduction="avg")
