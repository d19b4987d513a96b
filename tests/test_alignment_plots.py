import numpy as np
import pytest

from xlt.evaluate.alignment import Projection
from xlt.core.metrics import record
from xlt.families.alignment.plots import plot_projection_grid, plot_retrieval_by_layer, retrieval_series

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def _records(offset=0.0):
    recs = []
    for layer in (2, 0, 1):
        for lang in ("deu", "fra"):
            recs.append(record("bitext_retrieval_acc", 0.1 * layer + offset, lang=lang, layer=layer, direction="xx->en"))
            recs.append(record("bitext_retrieval_acc", 0.2 * layer + offset, lang=lang, layer=layer, direction="en->xx"))
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


def test_plots_are_written_as_png(tmp_path):
    line = plot_retrieval_by_layer({"a": _records(), "b": _records(0.1)}, tmp_path / "plots" / "layers.png")
    assert line.read_bytes()[:8] == PNG_MAGIC
    rng = np.random.default_rng(0)
    projections = [
        Projection(layer, "tsne", rng.normal(size=(8, 2)), ["deu"] * 4 + ["eng"] * 4, ["deu"] * 8, np.array([0, 3, 5, 7] * 2))
        for layer in (0, 4, 8, 12)
    ]
    grid = plot_projection_grid(projections, tmp_path / "grid.png", ncols=3)
    assert grid.read_bytes()[:8] == PNG_MAGIC
    assert sorted(p.name for p in tmp_path.iterdir()) == ["grid.png", "plots"]  # no temporary files left
    with pytest.raises(ValueError, match="no per-layer"):
        plot_retrieval_by_layer([record("loss", 1.0)], tmp_path / "empty.png")
