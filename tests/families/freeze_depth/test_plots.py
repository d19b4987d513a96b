"""The freeze-depth figures draw the table's numbers: means over seeds per depth and language."""

import numpy as np
import pandas as pd
import pytest
from matplotlib.colors import to_rgb

from xlt.families.freeze_depth.plots import PLOTS, accuracy_heatmap, accuracy_vs_depth


@pytest.fixture
def table():
    rows = []
    for depth in (-1, 0, 6):
        for seed, shift in ((1, 0.0), (2, 0.1)):
            for lang, base in (("en", 0.8), ("qaa", 0.4), ("avg", 0.6)):
                rows.append(
                    {
                        "family": "freeze_depth",
                        "freeze_depth": depth,
                        "seed": seed,
                        "lang": lang,
                        "metric": "accuracy",
                        "value": base + shift + depth / 100,
                    }
                )
    rows.append(
        {"family": "freeze_depth", "freeze_depth": 0, "seed": 1, "lang": "dev", "metric": "dev_accuracy", "value": 0.99}
    )  # another metric: must not be drawn
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
        "en (warm-up ratio 0)",
        "qaa (warm-up ratio 0)",
        "avg (warm-up ratio 0)",
    ]


def test_accuracy_vs_depth_shades_the_bootstrap_interval_of_each_line(table, tmp_path):
    with_ci = table.assign(ci_low=table.value - 0.05, ci_high=table.value + 0.03)
    without_std = with_ci[with_ci.seed == 1]  # one seed: the +- sd band has no height, only the interval shows
    ax = accuracy_vs_depth(without_std, tmp_path / "a.png").axes[0]
    bands = [c for c in ax.collections if c.get_label() == "_interval"]
    assert len(bands) == 3  # en, qaa, average
    extents = sorted(band.get_paths()[0].get_extents().get_points()[:, 1].tolist() for band in bands)
    # en at seed 1: 0.79, 0.80, 0.86; qaa: 0.39, ...; average 0.59, ...
    assert extents[0] == pytest.approx([0.39 - 0.05, 0.46 + 0.03])
    assert extents[2] == pytest.approx([0.79 - 0.05, 0.86 + 0.03])
    line_colours = sorted(to_rgb(line.get_color()) for line in ax.lines)
    assert sorted(tuple(band.get_facecolor()[0][:3]) for band in bands) == line_colours  # each in its line's colour


def test_accuracy_vs_depth_without_intervals_draws_only_the_seed_bands(table, tmp_path):
    ax = accuracy_vs_depth(table, tmp_path / "a.png").axes[0]
    assert not [c for c in ax.collections if c.get_label() == "_interval"]
    assert len(ax.collections) == 3  # +- sd over seeds, one per line, as before
    nan_ci = accuracy_vs_depth(table.assign(ci_low=np.nan, ci_high=np.nan), tmp_path / "b.png").axes[0]
    assert len(nan_ci.collections) == 3 and not [c for c in nan_ci.collections if c.get_label() == "_interval"]


def test_accuracy_vs_depth_of_one_depth_says_so(table, tmp_path):
    """A sweep of one depth (issue 49) draws its points and says there is no other depth."""
    fig = accuracy_vs_depth(table[table.freeze_depth == -1], tmp_path / "a.png")
    texts = [text.get_text() for text in fig.axes[0].texts]
    assert texts == ["a single freeze depth (none): nothing to compare it with"]
    assert not accuracy_vs_depth(table, tmp_path / "b.png").axes[0].texts
