"""The alignment figure drawn from a tidy table like `xlt aggregate` writes (the dual-encoder
figures' tests are in tests/families/dual/test_dual_figures.py)."""
import itertools

import pandas as pd
import pytest

from xlt.report.plots import PLOTS


def alignment_table():
    rows = []
    for run, metric, layer in itertools.product(["pretrained-m", "dual-m"], ["bitext_retrieval_acc", "bitext_retrieval_acc_centered"], range(4)):
        for lang in ("qaa", "qab"):
            rows.append({"run_id": run, "metric": metric, "layer": layer, "lang": lang, "direction": "xx->en", "value": layer / 4})
    return pd.DataFrame(rows)


def test_alignment_by_layer_writes_png(tmp_path):
    out = tmp_path / "a.png"
    PLOTS["alignment-by-layer"](alignment_table(), out)
    assert out.stat().st_size > 10_000
