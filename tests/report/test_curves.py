"""`xlt plot-curves`: one figure with every run's loss, learning rate and dev score."""

from __future__ import annotations

import pytest

from xlt.cli import main
from xlt.core.errors import XltError
from xlt.core.metrics import MetricsFile
from xlt.report.curves import plot_curves, read_curves


def _run(tmp_path, name, losses):
    metrics = MetricsFile("freeze_depth", name)
    metrics.curve = [
        {"step": 2 * (i + 1), "loss": loss, "lr": 1e-3 / (i + 1), "dev_score": 0.5 if i == len(losses) - 1 else None}
        for i, loss in enumerate(losses)
    ]
    (tmp_path / name).mkdir()
    metrics.write(tmp_path / name / "train.json")
    return tmp_path / name / "train.curve.csv"


def test_every_run_gets_a_line_in_every_panel(tmp_path):
    paths = [_run(tmp_path, "a", [1.0, 0.8, 0.6]), _run(tmp_path, "b", [1.1, 0.9])]
    curves = read_curves(paths)
    assert sorted(curves["run"].unique()) == ["a", "b"] and len(curves) == 5
    fig = plot_curves(curves, tmp_path / "c.png")
    loss_axis, lr_axis, dev_axis = fig.axes
    assert [list(line.get_ydata()) for line in loss_axis.lines] == [[1.0, 0.8, 0.6], [1.1, 0.9]]
    assert [list(line.get_xdata()) for line in dev_axis.lines] == [[6], [4]]  # only evaluated steps
    assert main(["plot-curves", *map(str, paths), "--out", str(tmp_path / "d.png")]) == 0
    assert (tmp_path / "d.png").stat().st_size > 0


def test_a_missing_curve_names_the_file(tmp_path):
    with pytest.raises(XltError, match="training curve .*nope.curve.csv not found"):
        read_curves([tmp_path / "nope.curve.csv"])


@pytest.mark.parametrize(
    "text, fragment",
    [
        ("", "is not a training curve CSV"),
        ("step,loss,lr\n1,0.5,0.1\n", r"lacks the column\(s\) \['dev_score'\]"),
        ("step,loss,lr,dev_score\n", "has no rows"),
        ("step,loss,lr,dev_score\n1,nan?,0.1,\n", "column loss holds a value that is not a number"),
    ],
)
def test_a_bad_curve_names_the_file_and_the_fix(tmp_path, text, fragment):
    (tmp_path / "run").mkdir()
    path = tmp_path / "run" / "train.curve.csv"
    path.write_text(text)
    with pytest.raises(XltError, match=fragment) as err:
        read_curves([path])
    assert str(path) in str(err.value) and "rerun the training job" in str(err.value)


def test_the_verb_fails_on_a_bad_curve_without_writing_the_figure(tmp_path, capsys):
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "train.curve.csv").write_text("step,loss\n1,0.5\n")
    assert main(["plot-curves", str(tmp_path / "run" / "train.curve.csv"), "--out", str(tmp_path / "c.png")]) == 2
    assert "lacks the column(s)" in capsys.readouterr().err and not (tmp_path / "c.png").exists()


def test_self_training_rounds_follow_one_another_on_the_step_axis():
    from xlt.core.training import TrainResult
    from xlt.families.monox.training import rounds_curve

    first = TrainResult(
        steps=4,
        best_step=4,
        best_score=0.5,
        curve=[
            {"step": 2, "loss": 1.0, "lr": 0.1, "dev_score": None},
            {"step": 4, "loss": 0.8, "lr": 0.0, "dev_score": 0.5},
        ],
    )
    second = TrainResult(
        steps=3, best_step=3, best_score=0.6, curve=[{"step": 3, "loss": 0.7, "lr": 0.0, "dev_score": 0.6}]
    )
    assert [(row["step"], row["loss"]) for row in rounds_curve([first, second])] == [(2, 1.0), (4, 0.8), (7, 0.7)]
    assert [row["step"] for row in second.curve] == [3]  # the rounds' own curves are left alone
