"""What the sbert figures draw, read back from the returned matplotlib figures."""

import numpy as np
import pandas as pd
import pytest

from xlt.families.sbert import plots
from xlt.report.plots import plot_functions

# mean retrieval error: (pooling, layer, lang) -> untrained, [trained seed 1, seed 2]
ERRORS = {
    ("max", -1, "qaa"): (0.8, [0.4, 0.6]),
    ("max", -1, "qab"): (0.5, [0.25, 0.25]),
    ("mean", -1, "qaa"): (0.6, [0.3, 0.3]),
    ("mean", -1, "qab"): (0.4, [0.4, 0.2]),
    ("max", -2, "qaa"): (0.9, [0.7, 0.7]),
    ("max", -2, "qab"): (0.7, [0.5, 0.3]),
    ("mean", -2, "qaa"): (0.7, [0.1, 0.3]),
    ("mean", -2, "qab"): (0.5, [0.2, 0.2]),
}
# spearman: (pooling, lang, similarity) -> untrained, trained (one seed)
SPEARMAN = {
    ("max", "en", "cosine"): (0.5, 0.75),
    ("max", "en", "dot"): (0.25, 0.5),
    ("max", "qaa", "cosine"): (0.125, 0.625),
    ("max", "qaa", "dot"): (0.0, 0.375),
}


def row(pooling, layer, trained, seed, **record):
    """A row as `xlt aggregate` writes it and pd.read_csv reads it back (untrained: NaN depth and seed)."""
    return {
        "family": "sbert",
        "run_id": f"{pooling}-L{layer}-{'trained' if trained else 'untrained'}",
        "trained": trained,
        "freeze_depth": -1.0 if trained else np.nan,
        "seed": float(seed) if trained else np.nan,
        "pooling": pooling,
        "layer": layer,
        "normalize": False,
        "dataset": None,
        "direction": None,
        "similarity": None,
        **record,
    }


@pytest.fixture
def table() -> pd.DataFrame:
    rows = []
    for (pooling, layer, lang), (untrained, trained) in ERRORS.items():
        rows.append(
            row(pooling, layer, False, None, metric="mean_error", dataset="demo-bitext", lang=lang, value=untrained)
        )
        for seed, value in enumerate(trained, 1):
            rows.append(
                row(pooling, layer, True, seed, metric="mean_error", dataset="demo-bitext", lang=lang, value=value)
            )
            # records of other metrics must be left out of the error figures
            rows.append(
                row(
                    pooling,
                    layer,
                    True,
                    seed,
                    metric="error",
                    dataset="demo-bitext",
                    lang=lang,
                    value=9.0,
                    direction="xx->en",
                )
            )
    for (pooling, lang, similarity), (untrained, trained) in SPEARMAN.items():
        for is_trained, value in ((False, untrained), (True, trained)):
            rows.append(
                row(
                    pooling,
                    -1,
                    is_trained,
                    1,
                    metric="spearman",
                    dataset="demo-sts",
                    lang=lang,
                    similarity=similarity,
                    value=value,
                )
            )
            rows.append(
                row(
                    pooling,
                    -1,
                    is_trained,
                    1,
                    metric="pearson",
                    dataset="demo-sts",
                    lang=lang,
                    similarity=similarity,
                    value=-1.0,
                )
            )
    return pd.DataFrame(rows)


def test_every_kind_is_registered():
    registered = plot_functions()
    for kind, function in plots.PLOTS.items():
        assert registered[kind] is function
    from xlt.families.sbert.plan import PLOT_KINDS

    assert set(plots.PLOTS) == set(PLOT_KINDS)


def test_relative_reduction_against_the_untrained_model(table):
    means = plots.relative_reduction(table).set_index(["pooling", "layer", "variant", "lang"])
    assert means.loc[("max", -1, "trained", "qaa"), "value"] == pytest.approx(0.5)  # mean over seeds
    assert means.loc[("max", -1, "trained", "qaa"), "reduction_pct"] == pytest.approx(37.5)
    assert means.loc[("mean", -2, "trained", "qaa"), "reduction_pct"] == pytest.approx(100 * (0.7 - 0.2) / 0.7)
    assert means.loc[("max", -1, "untrained", "qab"), "reduction_pct"] == 0.0


def test_retrieval_error_bars_and_reduction_labels(table, tmp_path):
    fig = plots.retrieval_error(table, tmp_path / "r.png")
    assert (tmp_path / "r.png").stat().st_size > 0
    max_ax, mean_ax = fig.axes[:2]  # one panel per pooling, sorted; layer -1 (the last) of the two
    assert max_ax.get_title() == "pooling: max (layer -1)" and mean_ax.get_title() == "pooling: mean (layer -1)"
    assert [t.get_text() for t in max_ax.get_xticklabels()] == ["qaa", "qab"]
    trained, untrained = max_ax.containers  # hue levels in sorted order
    assert [b.get_height() for b in untrained] == pytest.approx([0.8, 0.5])
    assert [b.get_height() for b in trained] == pytest.approx([0.5, 0.25])
    assert [t.get_text() for t in max_ax.texts] == ["+38%", "+50%"]  # trained bars only
    assert [b.get_height() for b in mean_ax.containers[0]] == pytest.approx([0.3, 0.3])
    assert [t.get_text() for t in mean_ax.texts] == ["+50%", "+25%"]
    assert fig._suptitle.get_text().startswith("Bitext retrieval error, trained vs untrained")


def test_sts_heatmap_cells(table, tmp_path):
    fig = plots.sts(table, tmp_path / "s.png", title="STS here")
    ax = fig.axes[0]
    assert ax.get_title() == "STS here"
    assert [t.get_text() for t in ax.get_yticklabels()] == ["max, L-1, trained", "max, L-1, untrained"]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["en cosine", "en dot", "qaa cosine", "qaa dot"]
    # Spearman x 100, row by row; pearson records are not drawn
    assert [t.get_text() for t in ax.texts] == ["75.0", "50.0", "62.5", "37.5", "50.0", "25.0", "12.5", "0.0"]


def test_sts_heatmap_leaves_out_the_dev_rows(table, tmp_path):
    """eval_sbert scores sbert.dev's STS set for the paper overlay (split dev): the heatmap is the test set's."""
    sts = table[table.metric == "spearman"]
    dev = sts[sts.lang == "en"].assign(split="dev", value=0.99)
    fig = plots.sts(pd.concat([table.assign(split="test"), dev], ignore_index=True), tmp_path / "s.png")
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["en cosine", "en dot", "qaa cosine", "qaa dot"]
    assert [t.get_text() for t in ax.texts] == ["75.0", "50.0", "62.5", "37.5", "50.0", "25.0", "12.5", "0.0"]


def test_layers_lines(table, tmp_path):
    fig = plots.layers(table, tmp_path / "l.png")
    ax = fig.axes[0]
    lines = {line.get_label(): line for line in ax.lines}
    assert set(lines) == {"max, trained", "max, untrained", "mean, trained", "mean, untrained"}
    # mean over languages and seeds, by pooled layer
    assert list(lines["max, untrained"].get_xdata()) == [-2, -1]
    assert list(lines["max, untrained"].get_ydata()) == pytest.approx([0.8, 0.65])
    assert list(lines["mean, trained"].get_ydata()) == pytest.approx([0.2, 0.3])
    assert lines["mean, untrained"].get_linestyle() == "--" and lines["mean, trained"].get_linestyle() == "-"


def with_intervals(table):
    """Bounds 0.1 below and 0.05 above every retrieval error; the correlations have none."""
    error = table.metric == "mean_error"
    return table.assign(
        ci_low=np.where(error, table.value - 0.1, np.nan), ci_high=np.where(error, table.value + 0.05, np.nan)
    )


def test_retrieval_error_bars_carry_the_interval(table, tmp_path):
    fig = plots.retrieval_error(with_intervals(table), tmp_path / "r.png")
    max_ax = fig.axes[0]
    trained, untrained, *intervals = max_ax.containers
    assert [b.get_height() for b in trained] == pytest.approx([0.5, 0.25])  # the bars are unchanged
    assert len(intervals) == 2  # one set of error bars per variant
    for bars, interval in zip((trained, untrained), intervals):
        (segments,) = interval.lines[2]
        spans = [(s[0][0], s[0][1], s[1][1]) for s in segments.get_segments()]
        expected = [(b.get_x() + b.get_width() / 2, b.get_height() - 0.1, b.get_height() + 0.05) for b in bars]
        np.testing.assert_allclose(spans, expected)


def test_layers_shade_the_interval_of_each_line(table, tmp_path):
    ax = plots.layers(with_intervals(table), tmp_path / "l.png").axes[0]
    bands = [c for c in ax.collections if c.get_label() == "_interval"]
    assert len(bands) == 4
    extents = sorted(tuple(b.get_paths()[0].get_extents().get_points()[:, 1]) for b in bands)
    # mean, trained: 0.2 (layer -2) and 0.3 (layer -1) -> band from 0.1 to 0.35
    assert extents[0] == pytest.approx((0.2 - 0.1, 0.3 + 0.05))


def test_without_intervals_the_error_figures_draw_as_before(table, tmp_path):
    for frame in (table, table.assign(ci_low=np.nan, ci_high=np.nan)):
        assert len(plots.retrieval_error(frame, tmp_path / "r.png").axes[0].containers) == 2
        # two trained seeds: the seed spread is drawn, and nothing else besides the lines
        labels = [c.get_label() for c in plots.layers(frame, tmp_path / "l.png").axes[0].collections]
        assert labels and set(labels) <= {"_seeds", "_seed_sd"}
        one_seed = frame[frame.seed.isna() | (frame.seed == 1)]
        assert len(plots.retrieval_error(one_seed, tmp_path / "r.png").axes[0].containers) == 2
        assert not plots.layers(one_seed, tmp_path / "l.png").axes[0].collections


def seed_artists(ax):
    dots = [c for c in ax.collections if c.get_label() == "_seeds"]
    sd = [c for c in ax.collections if c.get_label() == "_seed_sd"]
    return dots, sd


def test_layers_draw_a_dot_per_seed_and_a_one_sd_band(table, tmp_path):
    ax = plots.layers(table, tmp_path / "l.png").axes[0]
    dots, bands = seed_artists(ax)
    assert len(dots) == 2 and len(bands) == 2  # the trained lines (max, mean); untrained has no seed
    points = sorted(tuple(map(tuple, d.get_offsets())) for d in dots)
    # mean, trained: each seed's mean over languages, per layer (-2, then -1)
    mean_trained = ((-2, 0.15), (-2, 0.25), (-1, 0.35), (-1, 0.25))
    assert any(np.allclose(sorted(p), sorted(mean_trained)) for p in points)
    assert sum(len(p) for p in points) == 8
    sd = np.std([0.15, 0.25], ddof=1)  # both layers of mean, trained: 0.2 and 0.3 +- the same sd
    extents = sorted(tuple(b.get_paths()[0].get_extents().get_points()[:, 1]) for b in bands)
    assert any(np.allclose(e, (0.2 - sd, 0.3 + sd)) for e in extents)


def test_retrieval_bars_carry_seed_dots_and_sd_beside_the_interval(table, tmp_path):
    max_ax = plots.retrieval_error(with_intervals(table), tmp_path / "r.png").axes[0]
    trained, untrained, *intervals = max_ax.containers
    assert len(intervals) == 2  # the bootstrap error bars are still drawn, on the bar centres
    (dots,), (sd,) = seed_artists(max_ax)
    beside = [b.get_x() + 3 * b.get_width() / 4 for b in trained]
    # ERRORS: max, layer -1, trained seeds: qaa (0.4, 0.6), qab (0.25, 0.25)
    np.testing.assert_allclose(
        sorted(map(tuple, dots.get_offsets())),
        sorted([(beside[0], 0.4), (beside[0], 0.6), (beside[1], 0.25), (beside[1], 0.25)]),
    )
    spans = [(seg[0][0], seg[0][1], seg[1][1]) for seg in sd.get_segments()]
    half = np.std([0.4, 0.6], ddof=1)
    np.testing.assert_allclose(spans, [(beside[0], 0.5 - half, 0.5 + half), (beside[1], 0.25, 0.25)])
    (error_segments,) = intervals[0].lines[2]
    assert {round(s[0][0], 9) for s in error_segments.get_segments()}.isdisjoint({round(x, 9) for x in beside})
