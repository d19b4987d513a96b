"""dual-objectives on the issue-49 sweep, read back from its CSV as the plot rule reads it: one
distilled objective beside its teacher and the untrained encoder, no training budget planned
(an empty sentences_seen column). The figure is drawn and says there is one objective."""

from __future__ import annotations

from xlt.core.tables import read_table
from xlt.families.dual.plots import PLOTS


def table_file(tmp_path, objectives=("mse_distill",)):
    """The aggregated table's columns for an untrained encoder, the teacher and one run per objective."""
    runs = [("u", "", "False"), ("t", "teacher", "True")] + [(o, o, "True") for o in objectives]
    rows = [
        f"dual,{run},m,,{objective},mean,{trained},qaa,,mean_error,{0.9 - 0.1 * i},{0.8 - 0.1 * i},{1.0 - 0.1 * i}"
        for i, (run, objective, trained) in enumerate(runs)
    ]
    header = "family,run_id,model,sentences_seen,objective,pooling,trained,lang,split,metric,value,ci_low,ci_high"
    path = tmp_path / "dual.csv"
    path.write_text("\n".join([header, *rows]) + "\n")
    return path


def test_one_objective_without_a_budget_is_drawn_and_said(tmp_path, string_mode):
    table = read_table(table_file(tmp_path))
    assert table["sentences_seen"].dtype == "float64" and table["sentences_seen"].isna().all()
    fig = PLOTS["dual-objectives"](table, tmp_path / "o.png")
    labels = [text.get_text() for text in fig.legends[0].get_texts()]
    assert labels == ["untrained", "teacher (zero-shot)", "objective=mse_distill"]  # no budget in any label
    assert "a single objective (mse_distill): no second objective" in fig._suptitle.get_text()


def test_two_objectives_get_no_note(tmp_path, string_mode):
    table = read_table(table_file(tmp_path, ("additive_margin", "mse_distill")))
    fig = PLOTS["dual-objectives"](table, tmp_path / "o.png")
    assert "single objective" not in fig._suptitle.get_text()
    assert len(fig.legends[0].get_texts()) == 4
