"""The freeze-depth figures draw the table's numbers: means over seeds per depth and language."""
import numpy as np
import pandas as pd
import pytest

from xlt.families.freeze_depth.plots import PLOTS, accuracy_heatmap, accuracy_vs_depth


@pytest.fixture
def table():
    rows = []
    for depth in (-1, 0, 6):
        for seed, shift in ((1, 0.0), (2, 0.1)):
            for lang, base in (("en", 0.8), ("qaa", 0.4), ("avg", 0.6)):
                rows.append({"family": "freeze_depth", "freeze_depth": depth, "seed": seed, "lang": lang,
                             "metric": "accuracy", "value": base + shift + depth / 100})
    rows.append({"family": "freeze_depth", "freeze_depth": 0, "seed": 1, "lang": "dev", "metric": "dev_accuracy",
                 "value": 0.99})  # another metric: must not be drawn
    return pd.DataFrame(rows)


def test_accuracy_vs_depth_draws_seed_means_per_language(table, tmp_path):
    fig = accuracy_vs_depth(table, tmp_path / "a.png")
    assert (tmp_path / "a.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    ax = fig.axes[0]
    lines = {line.get_label(): line for line in ax.lines}
    assert set(lines) == {"en", "qaa", "average"}
    np.testing.assert_allclose(lines["en"].get_xdata(), [-1, 0, 6])
    np.testing.assert_allclose(lines["en"].get_ydata(), [0.84, 0.85, 0.91])
    np.testing.assert_allclose(lines["average"].get_ydata(), [0.64, 0.65, 0.71])
    assert lines["average"].get_linewidth() > lines["en"].get_linewidth()  # the average stands out
    assert [t.get_text() for t in ax.get_xticklabels()] == ["none", "0", "6"]


def test_heatmap_cells_hold_the_means_with_the_average_last(table, tmp_path):
    fig = accuracy_heatmap(table, tmp_path / "h.png")
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_yticklabels()] == ["en", "qaa", "avg"]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["none", "0", "6"]
    cells = [t.get_text() for t in ax.texts]
    assert cells == ["0.84", "0.85", "0.91", "0.44", "0.45", "0.51", "0.64", "0.65", "0.71"]


def test_every_kind_is_registered():
    assert PLOTS == {"accuracy-vs-depth": accuracy_vs_depth, "accuracy-heatmap": accuracy_heatmap}


def test_a_swept_warmup_ratio_gets_its_own_panel_and_heatmap_rows(table, tmp_path):
    swept = pd.concat([table.assign(warmup_ratio=0.0), table.assign(warmup_ratio=0.2, value=table.value - 0.5)])
    fig = accuracy_vs_depth(swept, tmp_path / "a.png")
    assert len(fig.axes) == 2
    low = {line.get_label(): line for line in fig.axes[1].lines}
    np.testing.assert_allclose(low["en"].get_ydata(), [0.34, 0.35, 0.41])
    assert "warm-up ratio 0.2" in fig.axes[1].get_title()
    heat = accuracy_heatmap(swept, tmp_path / "h.png").axes[0]
    assert [t.get_text() for t in heat.get_yticklabels()][:3] == [
        "en (warm-up ratio 0)", "qaa (warm-up ratio 0)", "avg (warm-up ratio 0)"]
