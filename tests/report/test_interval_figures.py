"""The shared interval helpers: bounds of averaged points, error-bar lengths, bands."""

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest

from xlt.report.figures import error_lengths, interval_band, mean_intervals, reference_span


def test_a_point_averaging_records_gets_the_mean_of_their_bounds():
    rows = pd.DataFrame(
        {
            "x": [1, 1, 2, 2],
            "value": [0.5, 0.7, 0.6, 0.6],
            "ci_low": [0.4, 0.6, 0.5, np.nan],
            "ci_high": [0.6, 0.8, 0.7, 0.7],
        }
    )
    bounds = mean_intervals(rows, "x")
    assert bounds.loc[1, "ci_low"] == pytest.approx(0.5) and bounds.loc[1, "ci_high"] == pytest.approx(0.7)
    assert bounds.loc[2].isna().all()  # one record without an interval: the point has none


def test_a_table_without_interval_columns_has_no_bounds():
    assert mean_intervals(pd.DataFrame({"x": [1], "value": [0.5]}), "x") is None


def test_error_lengths_are_distances_to_the_bounds_never_negative():
    yerr = error_lengths([0.5, 0.9, 0.3], [0.4, 0.92, np.nan], [0.7, 0.95, np.nan], scale=100)
    np.testing.assert_allclose(yerr[:, :2], [[10, 0], [20, 5]])
    assert np.isnan(yerr[:, 2]).all()
    assert error_lengths([0.5], [np.nan], [np.nan]) is None
    assert error_lengths([0.5], None, None) is None


def test_interval_band_spans_the_bounds_and_is_skipped_without_them():
    fig, ax = plt.subplots()
    band = interval_band(ax, [0, 1], [0.2, 0.3], [0.4, 0.6], color="C0", scale=100)
    (x0, y0), (x1, y1) = band.get_paths()[0].get_extents().get_points()
    assert (x0, x1) == (0, 1) and (y0, y1) == pytest.approx((20, 60))
    assert interval_band(ax, [0, 1], [np.nan, np.nan], [np.nan, np.nan], color="C0") is None
    assert len(ax.collections) == 1
    plt.close(fig)


def test_reference_span_covers_the_mean_bounds_and_needs_every_one():
    fig, ax = plt.subplots()
    rows = pd.DataFrame({"value": [0.5, 0.7], "ci_low": [0.4, 0.6], "ci_high": [0.6, 0.9]})
    span = reference_span(ax, rows, color="0.5", scale=100)
    extents = span.get_path().transformed(span.get_patch_transform()).get_extents()
    assert (extents.y0, extents.y1) == pytest.approx((50, 75))
    assert reference_span(ax, rows.assign(ci_low=[0.4, np.nan]), color="0.5") is None
    assert reference_span(ax, rows[["value"]], color="0.5") is None
    assert len(ax.patches) == 1
    plt.close(fig)


def test_heatmap_cells_carry_their_interval_where_the_table_has_one(tmp_path):
    from xlt.families.freeze_depth.plots import accuracy_heatmap

    rows = [
        {
            "freeze_depth": d,
            "seed": 1,
            "lang": lang,
            "metric": "accuracy",
            "value": v,
            "ci_low": v - 0.03,
            "ci_high": v + 0.05,
        }
        for d, lang, v in ((-1, "en", 0.8), (-1, "qaa", 0.5), (0, "en", 0.9), (0, "qaa", 0.6))
    ]
    table = pd.DataFrame(rows)
    table.loc[3, "ci_high"] = float("nan")  # one cell without an interval says its value only
    ax = accuracy_heatmap(table, tmp_path / "h.png").axes[0]
    assert [t.get_text() for t in ax.texts] == ["0.80\n±0.04", "0.90\n±0.04", "0.50\n±0.04", "0.60"]
    # a table without interval columns draws the plain values, as before intervals existed
    plain = accuracy_heatmap(table.drop(columns=["ci_low", "ci_high"]), tmp_path / "p.png").axes[0]
    assert [t.get_text() for t in plain.texts] == ["0.80", "0.90", "0.50", "0.60"]


def test_the_sts_heatmap_carries_intervals(tmp_path):
    from xlt.families.sbert.plots import sts

    sbert = pd.DataFrame(
        [
            {
                "run_id": "r",
                "pooling": "mean",
                "layer": -1,
                "freeze_depth": -1,
                "seed": 1,
                "trained": True,
                "lang": "en",
                "similarity": "cosine",
                "metric": "spearman",
                "value": 0.5,
                "ci_low": 0.4,
                "ci_high": 0.6,
            }
        ]
    )
    assert [t.get_text() for t in sts(sbert, tmp_path / "s.png").axes[0].texts] == ["50.0\n±10.0"]
