"""What the alignment figures draw: the per-run pictures of `xlt align` and `alignment-by-layer`."""

import itertools

import numpy as np
import pandas as pd
import pytest
from matplotlib.colors import to_rgb

from xlt.core.errors import XltError
from xlt.core.metrics import record
from xlt.evaluate.alignment import Projection
from xlt.families.alignment.plots import (
    PLOTS,
    alignment_by_layer,
    plot_projection_grid,
    plot_retrieval_by_layer,
    retrieval_series,
)
from xlt.report.plots import plot_functions

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def _records(offset=0.0):
    recs = []
    for layer in (2, 0, 1):
        for lang in ("deu", "fra"):
            recs.append(
                record("bitext_retrieval_acc", 0.1 * layer + offset, lang=lang, layer=layer, direction="xx->en")
            )
            recs.append(
                record("bitext_retrieval_acc", 0.2 * layer + offset, lang=lang, layer=layer, direction="en->xx")
            )
    recs.append(record("bitext_retrieval_acc_centered", 0.9, lang="deu", layer=0, direction="xx->en"))
    recs.append(record("loss", 3.0, step=1))  # not a retrieval record: ignored
    return recs


def test_series_one_line_per_language_direction_and_variant():
    series = retrieval_series(_records())
    assert len(series) == 5  # 2 langs x 2 directions raw + 1 centred line
    layers, values = series["", "bitext_retrieval_acc", "deu", "en->xx"]
    assert layers == [0, 1, 2] and values == pytest.approx([0.0, 0.2, 0.4])
    per_model = retrieval_series({"mbert": _records(), "xlmr": _records(0.05)}, metrics=["bitext_retrieval_acc"])
    assert len(per_model) == 8
    assert per_model["xlmr", "bitext_retrieval_acc", "fra", "xx->en"][1] == pytest.approx([0.05, 0.15, 0.25])


def test_retrieval_by_layer_draws_one_line_per_model_language_direction(tmp_path):
    out = tmp_path / "plots" / "layers.png"
    fig = plot_retrieval_by_layer({"a": _records(), "b": _records(0.1)}, out)
    assert out.read_bytes()[:8] == PNG_MAGIC
    (ax,) = fig.axes
    lines = {line.get_label(): line for line in ax.lines}
    # two models and two metrics vary, so each label names the model and the variant
    assert len(lines) == 10
    line = lines["b raw fra en->xx"]
    assert list(line.get_xdata()) == [0, 1, 2]
    np.testing.assert_allclose(line.get_ydata(), [0.1, 0.3, 0.5])
    np.testing.assert_allclose(lines["a centered deu xx->en"].get_ydata(), [0.9])
    assert lines["a raw deu xx->en"].get_linestyle() != lines["a centered deu xx->en"].get_linestyle()
    assert [t.get_text() for t in ax.get_xticklabels()] == ["0", "1", "2"]
    assert ax.get_title() == "Cross-lingual retrieval accuracy by layer"
    with pytest.raises(ValueError, match="no per-layer"):
        plot_retrieval_by_layer([record("loss", 1.0)], tmp_path / "empty.png")


def test_projection_grid_draws_every_point_and_joins_translations(tmp_path):
    rng = np.random.default_rng(0)
    projections = [
        Projection(
            layer, "tsne", rng.normal(size=(8, 2)), ["deu"] * 4 + ["eng"] * 4, ["deu"] * 8, np.array([0, 3, 5, 7] * 2)
        )
        for layer in (0, 4, 8, 12)
    ]
    fig = plot_projection_grid(projections, tmp_path / "grid.png", ncols=3)
    assert (tmp_path / "grid.png").read_bytes()[:8] == PNG_MAGIC
    assert sorted(p.name for p in tmp_path.iterdir()) == ["grid.png"]  # no temporary files left
    assert len(fig.axes) == 4
    assert [ax.get_title() for ax in fig.axes] == [f"layer {layer} (tsne)" for layer in (0, 4, 8, 12)]
    ax, projection = fig.axes[1], projections[1]
    deu, eng = ax.collections  # one scatter per language, in sorted order
    np.testing.assert_allclose(deu.get_offsets(), projection.coords[:4])
    np.testing.assert_allclose(eng.get_offsets(), projection.coords[4:])
    # pair p of deu is joined to pair p of eng: four grey links
    assert len(ax.lines) == 4
    np.testing.assert_allclose(
        np.column_stack([ax.lines[0].get_xdata(), ax.lines[0].get_ydata()]), projection.coords[[0, 4]]
    )
    unlinked = plot_projection_grid(projections[:1], tmp_path / "one.png", connect_pairs=False)
    assert len(unlinked.axes[0].lines) == 0


def alignment_table():
    rows = []
    for run, metric, layer in itertools.product(
        ["pretrained-m", "dual-m"], ["bitext_retrieval_acc", "bitext_retrieval_acc_centered"], range(4)
    ):
        for lang, direction in itertools.product(("qaa", "qab"), ("xx->en", "en->xx")):
            shift = 0.1 if run == "dual-m" else 0.0
            value = (
                layer / 4 + shift + (0.02 if lang == "qab" else 0.0) + (0.2 if metric.endswith("_centered") else 0.0)
            )
            rows.append(
                {"run_id": run, "metric": metric, "layer": layer, "lang": lang, "direction": direction, "value": value}
            )
    rows.append(
        {"run_id": "dual-m", "metric": "loss", "layer": 0, "lang": "", "direction": "", "value": 9.0}
    )  # ignored
    return pd.DataFrame(rows)


def test_alignment_by_layer_draws_the_mean_over_languages_per_model_and_panel(tmp_path):
    assert PLOTS == {"alignment-by-layer": alignment_by_layer}
    assert plot_functions()["alignment-by-layer"] is alignment_by_layer
    out = tmp_path / "a.png"
    fig = alignment_by_layer(alignment_table(), out)
    assert out.read_bytes()[:8] == PNG_MAGIC
    raw, centred = fig.axes[:2]
    assert (raw.get_title(), centred.get_title()) == ("raw", "mean-centred per language")
    lines = {line.get_label(): line for line in raw.lines}
    assert sorted(lines) == ["dual-m", "pretrained-m"]
    assert list(lines["dual-m"].get_xdata()) == [0, 1, 2, 3]
    # mean over qaa (+0) and qab (+0.02) and both directions
    np.testing.assert_allclose(lines["dual-m"].get_ydata(), [0.11, 0.36, 0.61, 0.86])
    np.testing.assert_allclose(lines["pretrained-m"].get_ydata(), [0.01, 0.26, 0.51, 0.76])
    centred_lines = {line.get_label(): line for line in centred.lines}
    np.testing.assert_allclose(centred_lines["pretrained-m"].get_ydata(), [0.21, 0.46, 0.71, 0.96])
    assert [t.get_text() for t in raw.get_xticklabels()] == ["0", "1", "2", "3"]
    # the y range starts at 0 and follows the data: 1.15 x the highest mean (1.06), capped at 1.02
    assert raw.get_ylim() == pytest.approx((0, 1.02))
    assert fig._suptitle.get_text() == "Cross-lingual retrieval accuracy by layer, per model"


def test_alignment_by_layer_low_accuracies_stay_readable_and_raw_only_is_one_panel(tmp_path):
    table = alignment_table().query("metric == 'bitext_retrieval_acc'").copy()
    table["value"] = table["value"] / 10
    fig = alignment_by_layer(table, tmp_path / "low.png", title="low")
    (ax,) = fig.axes
    assert ax.get_ylim() == pytest.approx((0, max(0.1, 1.15 * 0.086)))
    assert fig._suptitle.get_text() == "low"


def test_alignment_by_layer_needs_retrieval_records(tmp_path):
    with pytest.raises(XltError, match="no bitext_retrieval_acc records"):
        alignment_by_layer(alignment_table().query("metric == 'loss'"), tmp_path / "x.png")


def test_alignment_by_layer_shades_the_bootstrap_interval_of_each_model(tmp_path):
    table = alignment_table()
    retrieval = table.metric.str.startswith("bitext_retrieval_acc")
    table = table.assign(
        ci_low=np.where(retrieval, table.value - 0.05, np.nan), ci_high=np.where(retrieval, table.value + 0.04, np.nan)
    )
    raw = alignment_by_layer(table, tmp_path / "a.png").axes[0]
    bands = {}
    for band in (c for c in raw.collections if c.get_label() == "_interval"):
        (line,) = [ln for ln in raw.lines if to_rgb(ln.get_color()) == tuple(band.get_facecolor()[0][:3])]
        bands[line.get_label()] = band.get_paths()[0].get_extents().get_points()[:, 1]
    # the means over languages and directions run from 0.11 to 0.86 (dual-m) and 0.01 to 0.76 (pretrained-m)
    np.testing.assert_allclose(bands["dual-m"], [0.11 - 0.05, 0.86 + 0.04])
    np.testing.assert_allclose(bands["pretrained-m"], [0.01 - 0.05, 0.76 + 0.04])


def test_alignment_by_layer_without_intervals_draws_only_lines(tmp_path):
    for table in (alignment_table(), alignment_table().assign(ci_low=np.nan, ci_high=np.nan)):
        fig = alignment_by_layer(table, tmp_path / "a.png")
        assert all(not ax.collections for ax in fig.axes)
