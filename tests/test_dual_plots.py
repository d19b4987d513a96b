"""Dual-encoder and alignment figures drawn from a tidy table like `xlt aggregate` writes."""
import itertools

import pandas as pd
import pytest

from xlt.core.errors import XltError
from xlt.families.dual.plots import run_labels
from xlt.report.plots import PLOTS


def dual_table():
    rows = []
    for margin, scale, seed in itertools.product([0, 0.3], [10, 20], [1, 2]):
        run = f"m{margin}-s{scale}-seed{seed}"
        axes = {"run_id": run, "margin": margin, "scale": scale, "pooling": "mean", "batch_size": 32,
                "freeze_depth": -1, "seed": seed}
        for lang, direction in itertools.product(["qaa", "qac"], ["xx->en", "en->xx"]):
            rows.append({**axes, "family": "sbert", "metric": "error", "lang": lang, "direction": direction,
                         "value": 0.5 - margin + 0.01 * seed})
        for metric, value in (("precision", 0.8), ("recall", 0.6), ("f1", 0.69)):
            rows.append({**axes, "family": "mine", "metric": metric, "lang": "qaa", "split": "test", "value": value})
            rows.append({**axes, "family": "mine", "metric": metric, "lang": "qaa", "split": "tune", "value": 1.0})
    return pd.DataFrame(rows)


@pytest.mark.parametrize("kind", ["dual-error-vs-margin", "dual-error-vs-scale", "dual-tatoeba-heatmap", "dual-mining"])
def test_dual_plots_write_pngs(tmp_path, kind):
    out = tmp_path / f"{kind}.png"
    PLOTS[kind](dual_table(), out)
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and out.stat().st_size > 10_000


def test_labels_name_only_the_axes_that_vary():
    table = dual_table()
    labels = run_labels(table)
    assert set(labels) == {"margin=0 scale=10", "margin=0 scale=20", "margin=0.3 scale=10", "margin=0.3 scale=20"}
    assert set(run_labels(table, skip=("margin",))) == {"scale=10", "scale=20"}


def test_missing_records_are_a_clear_error(tmp_path):
    with pytest.raises(XltError, match="no mining records"):
        PLOTS["dual-mining"](dual_table().query("family != 'mine'"), tmp_path / "x.png")
    with pytest.raises(XltError, match="no 'error' records"):
        PLOTS["dual-error-vs-margin"](dual_table().query("metric != 'error'"), tmp_path / "x.png")


def test_axes_json_is_checked():
    from xlt.core.metrics import parse_axes

    assert parse_axes('{"margin": 0.3, "source": "dual"}') == {"margin": 0.3, "source": "dual"}
    with pytest.raises(XltError, match="is not JSON"):
        parse_axes("margin=0.3")
    with pytest.raises(XltError, match="must be a JSON object"):
        parse_axes("[0.3]")
