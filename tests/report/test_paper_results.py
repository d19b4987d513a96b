"""The published numbers shipped with xlt, matched against a run table."""

import pandas as pd
import pytest

from xlt.core.errors import XltError
from xlt.report import paper, paper_overlay

FAMILIES = ["sbert", "freeze_depth", "monox", "adapt", "dual"]


@pytest.mark.parametrize("family", FAMILIES)
def test_every_seed_study_has_sourced_rows(family):
    table = paper.load(family)  # raises on a missing source, unknown metric or bad language
    assert len(table) > 0
    assert table["source"].str.len().min() >= 20


def test_a_row_without_source_or_with_an_unknown_metric_is_refused(tmp_path):
    good = {"setting": "pooling=mean", "language": "en", "metric": "spearman", "value": 0.7, "source": "x" * 30}
    for bad in ({"source": ""}, {"metric": "bleu"}, {"language": "English"}, {"setting": "pooling"}):
        pd.DataFrame([{**good, **bad}]).to_csv(tmp_path / "sbert.csv", index=False)
        with pytest.raises(XltError):
            paper.load("sbert", tmp_path)


def test_a_matching_run_gets_a_delta_and_an_overlay(tmp_path):
    pd.DataFrame(
        [
            {
                "setting": "pooling=mean;freeze_depth=-1",
                "language": "de",
                "metric": "accuracy",
                "value": 0.70,
                "source": "Someone et al., Table 9 row mean",
            }
        ]
    ).to_csv(tmp_path / "freeze_depth.csv", index=False)
    runs = pd.DataFrame(
        [
            {
                "family": "freeze_depth",
                "run_id": "a",
                "pooling": "mean",
                "freeze_depth": -1.0,
                "lang": "de",
                "metric": "accuracy",
                "value": 0.75,
                "ci_low": 0.73,
                "ci_high": 0.77,
            },
            {
                "family": "freeze_depth",
                "run_id": "b",
                "pooling": "mean",
                "freeze_depth": 6.0,
                "lang": "de",
                "metric": "accuracy",
                "value": 0.80,
                "ci_low": 0.78,
                "ci_high": 0.82,
            },
            {
                "family": "freeze_depth",
                "run_id": "a",
                "pooling": "mean",
                "freeze_depth": -1.0,
                "lang": "fr",
                "metric": "accuracy",
                "value": 0.60,
                "ci_low": 0.58,
                "ci_high": 0.62,
            },
        ]
    )
    delta = paper.deltas(runs, "freeze_depth", tmp_path)
    assert delta["run_id"].tolist() == ["a"] and delta["matched"].tolist() == ["yes"]
    assert delta["delta"].iloc[0] == pytest.approx(0.05)
    assert (delta["ci_low"].iloc[0], delta["ci_high"].iloc[0]) == (0.73, 0.77)
    fig = paper_overlay.overlay_plot(delta, tmp_path / "overlay.png")
    ax = fig.axes[0]
    published = [line for line in ax.lines if line.get_label() == "published"]
    assert published and published[0].get_xdata()[0] == pytest.approx(0.70)
    assert (tmp_path / "overlay.png").stat().st_size > 0


def test_a_run_without_the_setting_column_never_matches(tmp_path):
    pd.DataFrame(
        [
            {
                "setting": "pooling=mean",
                "language": "de",
                "metric": "accuracy",
                "value": 0.7,
                "source": "Someone et al., Table 9",
            }
        ]
    ).to_csv(tmp_path / "freeze_depth.csv", index=False)
    runs = pd.DataFrame([{"family": "freeze_depth", "run_id": "a", "lang": "de", "metric": "accuracy", "value": 0.7}])
    delta = paper.deltas(runs, "freeze_depth", tmp_path)  # the published number stays, unmatched
    assert delta["matched"].tolist() == ["no"] and "has no pooling column" in delta["reason"].iloc[0]


def test_a_demo_overlay_says_why_it_is_empty(tmp_path):
    fig = paper_overlay.overlay_plot(pd.DataFrame(columns=paper.DELTA_COLUMNS), tmp_path / "o.png", demo=True)
    assert "demo run" in fig.axes[0].texts[0].get_text()


def test_the_verb_writes_a_delta_table_and_a_figure(tmp_path):
    from xlt.cli import main

    runs = pd.DataFrame(
        [
            {
                "family": "freeze_depth",
                "run_id": "a",
                "model": "mbert-uncased",
                "freeze_depth": -1,
                "lang": "de",
                "metric": "accuracy",
                "value": 0.68,
            }
        ]
    )
    runs.to_csv(tmp_path / "freeze_depth.csv", index=False)
    out, fig = tmp_path / "paper_delta.csv", tmp_path / "overlay.png"
    args = [
        f"freeze_depth={tmp_path / 'freeze_depth.csv'}",
        "--model",
        "mbert-uncased=bert-base-multilingual-uncased",
        "--split",
        "freeze_depth=test",
        "--out-table",
        str(out),
        "--out-plot",
        str(fig),
    ]
    assert main(["paper-delta", *args]) == 0
    delta = pd.read_csv(out)
    matched = delta[delta["matched"] == "yes"]  # the shipped mBERT zero-shot German row: 70.5 %
    assert matched["delta"].tolist() == pytest.approx([0.68 - 0.705])
    assert len(delta) == sum(len(paper.load(family)) for family in FAMILIES)  # every published number
    assert fig.stat().st_size > 0
    assert main(["paper-delta", *args, "--demo"]) == 0
    assert set(pd.read_csv(out)["matched"]) == {"no"}
