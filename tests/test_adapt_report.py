"""Final-perplexity table and figures of the adapt family, on a hand-made tidy table."""
import math

import numpy as np
import pandas as pd
import pytest

from xlt.families.adapt.tables import final_perplexity_table, scheme_label, scheme_order
from xlt.report.plots import PLOTS


def _table():
    rows = []
    for scheme, seed_values in (("9-12", [(20.0, 60.0), (22.0, 64.0)]), ("0-12", [(10.0, 90.0), (14.0, 80.0)]),
                                ("gradual-start4-step4-every1epochs", [(12.0, 70.0), (12.0, 72.0)])):
        for seed, (target, multi) in enumerate(seed_values, start=1):
            base = {"family": "adapt", "run_id": f"m-{scheme}-seed{seed}", "model": "m", "scheme": scheme,
                    "seed": seed, "role": "adapted"}
            for step, factor in ((0, 2.0), (10, 1.5), (20, 1.0)):
                rows.append({**base, "metric": "perplexity", "value": target * factor, "lang": "nl", "split": "dev", "step": step})
                rows.append({**base, "metric": "perplexity", "value": multi / factor, "lang": "multilingual", "split": "dev", "step": step})
                for layer in (0, 1, 2):
                    for level in ("sentence", "word"):
                        rows.append({**base, "metric": "euclidean", "value": layer + step / 10, "layer": layer,
                                     "level": level, "step": step})
                        rows.append({**base, "metric": "cka", "value": 0.5 + step / 100, "layer": layer,
                                     "level": level, "step": step})
            rows.append({**base, "metric": "perplexity", "value": target, "lang": "nl", "split": "dev"})
            rows.append({**base, "metric": "perplexity", "value": target + 1, "lang": "nl", "split": "test"})
            rows.append({**base, "metric": "perplexity", "value": multi, "lang": "multilingual", "split": "dev"})
            rows.append({**base, "metric": "selected_step", "value": 10.0 * seed})
    for model, role, target, multi in (("bertje", "native", 8.0, 5000.0), ("m", "transfer", 40.0, 30.0)):
        base = {"family": "adapt", "run_id": f"reference-{model}", "model": model, "scheme": "pre-trained", "role": role}
        rows.append({**base, "metric": "perplexity", "value": target, "lang": "nl", "split": "dev"})
        rows.append({**base, "metric": "perplexity", "value": target + 1, "lang": "nl", "split": "test"})
        rows.append({**base, "metric": "perplexity", "value": multi, "lang": "multilingual", "split": "dev"})
    return pd.DataFrame(rows)


def test_final_table_means_and_sds_over_seeds():
    summary = final_perplexity_table(_table())
    assert list(summary.scheme) == ["0-12", "9-12", "gradual-start4-step4-every1epochs", "pre-trained", "pre-trained"]
    assert list(summary.role) == ["adapted"] * 3 + ["transfer", "native"]
    row = summary.iloc[0]
    assert row["seeds"] == 2
    assert row["nl/test mean"] == pytest.approx(np.mean([11.0, 15.0]))
    assert row["nl/test sd"] == pytest.approx(np.std([11.0, 15.0], ddof=1))
    assert row["multilingual/dev mean"] == pytest.approx(85.0)
    assert row["selected step mean"] == pytest.approx(15.0)
    native = summary.iloc[4]
    assert native["nl/test mean"] == 9.0 and math.isnan(native["nl/test sd"]) and math.isnan(native["selected step mean"])
    assert list(summary.columns[4:10]) == ["nl/dev mean", "nl/dev sd", "nl/test mean", "nl/test sd",
                                           "multilingual/dev mean", "multilingual/dev sd"]


def test_scheme_order_and_labels():
    names = ["gradual-start4-step4-every1epochs", "11-12", "0-12", "pre-trained", "6-12"]
    assert sorted(names, key=scheme_order) == ["0-12", "6-12", "11-12", "gradual-start4-step4-every1epochs", "pre-trained"]
    assert scheme_label("9-12") == "layers 9-12"
    assert scheme_label("gradual-start4-step4-every1epochs") == "gradual (top 4, +4 every epoch)"
    assert scheme_label("gradual-start2-step1-every50steps") == "gradual (top 2, +1 every 50 steps)"


@pytest.mark.parametrize("kind", ["adapt-perplexity-vs-step", "adapt-final-perplexity", "adapt-distance-vs-step",
                                  "adapt-cka-vs-step"])
def test_plots_write_png(kind, tmp_path):
    out = tmp_path / "figure.png"
    PLOTS[kind](_table(), out)
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
