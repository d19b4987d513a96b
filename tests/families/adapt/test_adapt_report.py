"""Final-perplexity table and figures of the adapt family, on a hand-made tidy table."""

import math

import matplotlib.colors
import numpy as np
import pandas as pd
import pytest
from matplotlib.collections import PolyCollection

from xlt.families.adapt.plots import (
    PLOTS,
    cka_vs_step,
    distance_vs_step,
    final_perplexity,
    perplexity_vs_step,
    word_nll,
)
from xlt.families.adapt.scheme_names import scheme_label, scheme_order
from xlt.families.adapt.tables import final_perplexity_table, word_nll_table


def _table():
    rows = []
    for scheme, seed_values in (
        ("9-12", [(20.0, 60.0), (22.0, 64.0)]),
        ("0-12", [(10.0, 90.0), (14.0, 80.0)]),
        ("gradual-start4-step4-every1epochs", [(12.0, 70.0), (12.0, 72.0)]),
    ):
        for seed, (target, multi) in enumerate(seed_values, start=1):
            base = {
                "family": "adapt",
                "run_id": f"m-{scheme}-seed{seed}",
                "model": "m",
                "scheme": scheme,
                "seed": seed,
                "role": "adapted",
            }
            for step, factor in ((0, 2.0), (10, 1.5), (20, 1.0)):
                rows.append(
                    {
                        **base,
                        "metric": "perplexity",
                        "value": target * factor,
                        "lang": "nl",
                        "split": "dev",
                        "step": step,
                    }
                )
                rows.append(
                    {
                        **base,
                        "metric": "perplexity",
                        "value": multi / factor,
                        "lang": "multilingual",
                        "split": "dev",
                        "step": step,
                    }
                )
                for layer in (0, 1, 2):
                    for level in ("sentence", "word"):
                        rows.append(
                            {
                                **base,
                                "metric": "euclidean",
                                "value": layer + step / 10,
                                "layer": layer,
                                "level": level,
                                "step": step,
                            }
                        )
                        rows.append(
                            {
                                **base,
                                "metric": "cka",
                                "value": 0.5 + step / 100,
                                "layer": layer,
                                "level": level,
                                "step": step,
                            }
                        )
            rows.append({**base, "metric": "perplexity", "value": target, "lang": "nl", "split": "dev"})
            rows.append({**base, "metric": "perplexity", "value": target + 1, "lang": "nl", "split": "test"})
            rows.append({**base, "metric": "perplexity", "value": multi, "lang": "multilingual", "split": "dev"})
            rows.append({**base, "metric": "selected_step", "value": 10.0 * seed})
    for model, role, target, multi in (("bertje", "native", 8.0, 5000.0), ("m", "transfer", 40.0, 30.0)):
        base = {
            "family": "adapt",
            "run_id": f"reference-{model}",
            "model": model,
            "scheme": "pre-trained",
            "role": role,
        }
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
    assert (
        native["nl/test mean"] == 9.0 and math.isnan(native["nl/test sd"]) and math.isnan(native["selected step mean"])
    )
    assert list(summary.columns[4:10]) == [
        "nl/dev mean",
        "nl/dev sd",
        "nl/test mean",
        "nl/test sd",
        "multilingual/dev mean",
        "multilingual/dev sd",
    ]


def test_scheme_order_and_labels():
    names = ["gradual-start4-step4-every1epochs", "11-12", "0-12", "pre-trained", "6-12"]
    assert sorted(names, key=scheme_order) == [
        "0-12",
        "6-12",
        "11-12",
        "gradual-start4-step4-every1epochs",
        "pre-trained",
    ]
    assert scheme_label("9-12") == "layers 9-12"
    assert scheme_label("gradual-start4-step4-every1epochs") == "gradual (top 4, +4 every epoch)"
    assert scheme_label("gradual-start2-step1-every50steps") == "gradual (top 2, +1 every 50 steps)"


def test_every_kind_is_registered_for_xlt_plot():
    from xlt.report.plots import plot_functions

    assert {kind: plot_functions()[kind] for kind in PLOTS} == PLOTS
    assert set(PLOTS) == {
        "adapt-perplexity-vs-step",
        "adapt-final-perplexity",
        "adapt-word-nll",
        "adapt-distance-vs-step",
        "adapt-cka-vs-step",
    }


def _line(ax, label):
    (line,) = [line for line in ax.lines if line.get_label() == label]
    return list(line.get_xdata()), list(line.get_ydata())


def _line_color(ax, label):
    (line,) = [line for line in ax.lines if line.get_label() == label]
    return line.get_color()


@pytest.mark.slow
def test_perplexity_curves_are_seed_means_with_untouched_models_as_references(tmp_path):
    out = tmp_path / "figure.png"
    fig = perplexity_vs_step(_table(), out)
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    axes = fig.axes
    assert [ax.get_title() for ax in axes] == ["layers 0-12", "layers 9-12", "gradual (top 4, +4 every epoch)"]
    # 0-12: target 10 and 14 (mean 12) x 2, 1.5, 1; multilingual 90 and 80 (mean 85) / 2, 1.5, 1
    x, y = _line(axes[0], "nl dev")
    assert x == [0, 10, 20] and y == pytest.approx([24.0, 18.0, 12.0])
    x, y = _line(axes[0], "multilingual (dev)")
    assert x == [0, 10, 20] and y == pytest.approx([42.5, 85 / 1.5, 85.0])
    assert _line(axes[1], "nl dev")[1] == pytest.approx([42.0, 31.5, 21.0])
    # references: horizontal lines at the untouched models' values; one far off the curves' scale is named
    assert _line(axes[0], "bertje untouched (native), nl dev: 8.0")[1] == [8.0, 8.0]
    assert _line(axes[0], "m untouched (transfer), multilingual (dev): 30.0")[1] == [30.0, 30.0]
    off = _line(axes[0], "bertje untouched (native), multilingual (dev): 5000.0 (off scale)")[1]
    assert all(math.isnan(v) for v in off)
    assert axes[0].get_yscale() == "log"


def test_final_perplexity_bars_are_the_summary_means(tmp_path):
    fig = final_perplexity(_table(), tmp_path / "figure.png")
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_xticklabels()] == [
        "layers 0-12",
        "layers 9-12",
        "gradual (top 4, +4 every epoch)",
        "m\nuntouched (transfer)",
        "bertje\nuntouched (native)",
    ]
    assert [c.get_label() for c in ax.containers if hasattr(c, "patches")] == [
        "nl dev",
        "nl test",
        "multilingual (dev)",
    ]
    bars = [c for c in ax.containers if hasattr(c, "patches")]
    assert [p.get_height() for p in bars[0].patches] == pytest.approx([12.0, 21.0, 12.0, 40.0, 8.0])
    assert [p.get_height() for p in bars[1].patches] == pytest.approx([13.0, 22.0, 13.0, 41.0, 9.0])
    assert [p.get_height() for p in bars[2].patches] == pytest.approx([85.0, 62.0, 71.0, 30.0, 5000.0])
    assert [t.get_text() for t in ax.texts][:5] == ["12.0", "21.0", "12.0", "40.0", "8.0"]
    assert ax.get_yscale() == "log"  # 5000 next to 8: a linear axis would hide the small bars


@pytest.mark.parametrize(
    "plot, expected",
    [
        (distance_vs_step, lambda layer: [layer, layer + 1.0, layer + 2.0]),  # layer + step / 10
        (cka_vs_step, lambda layer: [0.5, 0.6, 0.7]),  # 0.5 + step / 100
    ],
)
def test_layer_panels_draw_every_run_and_level_on_an_equal_y_span(plot, expected, tmp_path):
    fig = plot(_table(), tmp_path / "figure.png")
    panels = [ax for ax in fig.axes if ax.get_title()]
    assert [ax.get_title() for ax in panels] == ["embeddings (0)", "layer 1", "layer 2"]
    for layer, ax in enumerate(panels):
        labels = [line.get_label() for line in ax.lines]
        assert labels == [
            f"{scheme}, {level}"
            for scheme in ("layers 0-12", "layers 9-12", "gradual (top 4, +4 every epoch)")
            for level in ("sentence", "word")
        ]
        for line in ax.lines:
            assert list(line.get_xdata()) == [0, 10, 20]
            assert list(line.get_ydata()) == pytest.approx(expected(layer))
        assert [line.get_linestyle() for line in ax.lines[:2]] == ["-", "--"]
    spans = {round(ax.get_ylim()[1] - ax.get_ylim()[0], 9) for ax in panels}
    assert len(spans) == 1


def _caption(config_file: str, kind: str | None) -> str:
    from pathlib import Path
    from types import SimpleNamespace

    import jinja2
    import yaml

    from xlt.core.settings import validate

    root = Path(__file__).resolve().parents[3]
    config = validate(yaml.safe_load((root / config_file).read_text()))
    wildcards = {"kind": kind} if kind else {}
    return jinja2.Template((root / "src" / "xlt" / "families" / "adapt" / "caption.rst").read_text()).render(
        snakemake=SimpleNamespace(config=config, wildcards=wildcards)
    )


@pytest.mark.parametrize(
    "kind, heading",
    [
        ("perplexity-vs-step", "Perplexity during target-language MLM training"),
        ("final-perplexity", "Final perplexity per scheme"),
        ("word-nll", "Final NLL per word and per character"),
        ("distance-vs-step", "Distance to the native model per layer"),
        ("cka-vs-step", "Linear CKA with the native model per layer"),
        (None, "Final perplexity table"),
    ],
)
def test_caption_renders_the_validated_settings(kind, heading):
    demo = _caption("config.yaml", kind)
    assert heading in demo and "not about mBERT or real languages" in demo
    # the demo sets eval_sentences and compare.sentences; the schema fills mask_seed and mlm_probability
    assert "at most 150 sentences per set" in demo and "mask seed 1234" in demo and "(probability\n0.15)" in demo
    assert "Checkpoints every 25 steps." in demo  # the family's training override, not the shared 40
    assert "max_steps=100 (family override)" in demo
    paper = _caption("config/paper.yaml", kind)
    assert "not about mBERT or real languages" not in paper
    assert (
        "Checkpoints: the curve runs (schemes 0-12) every 50 steps on the\ntarget and the multilingual set; the "
        "other schemes' runs every 100 steps on\nthe target set (early stopping), the multilingual set once, on "
        "the selected model,"
    ) in paper
    assert "at most 10000 sentences per set" in paper
    if kind == "perplexity-vs-step":
        assert "split dev) and on the size-matched multilingual set" in demo and "over seeds 1, 2, 3" in paper
    if kind == "distance-vs-step":
        assert "the same 48" in demo and "the same 256" in paper
    if kind == "final-perplexity":
        assert "dev perplexity (early stopping)" in paper
        assert "``bertje`` cuts the\nsame text into other pieces, and its bar does not compare" in paper
    if kind == "word-nll":
        assert "**these numbers compare\nacross tokenizers**" in paper and "on 200 sentences spread" in paper
        assert "perplexity per piece does not" in paper
    if kind == "distance-vs-step":
        assert "unrelated coordinate systems" in paper and "Linear CKA, invariant to rotation" in paper
    if kind is None:
        assert (
            "``nll_per_word`` and ``nll_per_char``" in paper
            and "compare only between models with one tokenizer" in paper
        )


def test_caption_says_what_the_curve_runs_train_with():
    """adapt.curve.training (the rehearsal's config sets it) in the checkpoint sentence and the
    training line, marked as the curve runs' own."""
    from pathlib import Path
    from types import SimpleNamespace

    import jinja2
    import yaml

    from xlt.core.settings import validate

    root = Path(__file__).resolve().parents[3]
    config = yaml.safe_load((root / "config" / "paper.yaml").read_text())
    config["adapt"]["curve"]["training"] = {"max_steps": 1500, "eval_every": 25}
    text = jinja2.Template((root / "src" / "xlt" / "families" / "adapt" / "caption.rst").read_text()).render(
        snakemake=SimpleNamespace(config=validate(config), wildcards={"kind": "perplexity-vs-step"})
    )
    assert "the curve runs (schemes 0-12) every 25 steps on the\ntarget" in text
    assert "eval_every=25 (curve runs only), max_steps=1500 (curve runs only)." in text
    assert "(curve runs only)" not in _caption("config/paper.yaml", "perplexity-vs-step")


def _with_intervals():
    """_table() with bootstrap bounds (value x 0.9 .. x 1.1) where adapt has them: the final
    evaluations and the untouched models, not the per-step curves."""
    table = _table()
    final = (table.metric == "perplexity") & table.step.isna()
    table["ci_low"] = np.where(final, table.value * 0.9, np.nan)
    table["ci_high"] = np.where(final, table.value * 1.1, np.nan)
    return table


def test_final_table_appends_the_mean_bounds_of_the_seeds():
    plain, summary = final_perplexity_table(_table()), final_perplexity_table(_with_intervals())
    assert list(summary.columns[: len(plain.columns)]) == list(plain.columns)  # existing columns stay put
    pd.testing.assert_frame_equal(summary[plain.columns], plain)
    row = summary.iloc[0]  # 0-12: nl test 11 and 15
    assert (row["nl/test ci_low"], row["nl/test ci_high"]) == pytest.approx((0.9 * 13.0, 1.1 * 13.0))
    assert summary.iloc[4]["multilingual/dev ci_high"] == pytest.approx(5500.0)


def _interval_spans(ax):
    return [p for p in ax.patches if p.get_label() == "_interval"]


@pytest.mark.slow
def test_perplexity_curves_draw_reference_bands_and_the_selected_model_interval(tmp_path):
    plain = perplexity_vs_step(_table(), tmp_path / "plain.png")
    assert not _interval_spans(plain.axes[0]) and not [c for c in plain.axes[0].containers]
    fig = perplexity_vs_step(_with_intervals(), tmp_path / "figure.png")
    ax = fig.axes[0]  # 0-12
    spans = _interval_spans(ax)
    # nl dev: bertje 8 and m 40; multilingual: m 30 (bertje's 5000 is off scale: no band)
    bounds = sorted(
        tuple(round(v, 6) for v in p.get_path().transformed(p.get_patch_transform()).get_extents().get_points()[:, 1])
        for p in spans
    )
    assert bounds == [(7.2, 8.8), (27.0, 33.0), (36.0, 44.0)]
    diamonds = [c for c in ax.containers if c.get_label() == "_interval"]
    assert len(diamonds) == 2  # one per evaluation set
    for container in diamonds:
        (x,), (y,) = container.lines[0].get_data()
        assert x == 15.0  # the mean selected step of seeds 1 and 2
        segment = container.lines[2][0].get_segments()[0]
        assert y in (12.0, 85.0) and segment[:, 1] == pytest.approx([0.9 * y, 1.1 * y])


def _curve_bands(ax):
    return [c for c in ax.collections if isinstance(c, PolyCollection) and c.get_label() == "_interval"]


@pytest.mark.slow
def test_perplexity_curves_draw_the_band_of_their_checkpoints_intervals(tmp_path):
    """Per-step bounds (adapt-mlm computes them at every checkpoint) give every curve a band from
    the mean of the seeds' bounds at each step; without them (or with final bounds only) none."""
    for table in (_table(), _with_intervals()):
        fig = perplexity_vs_step(table, tmp_path / "plain.png")
        assert not any(_curve_bands(ax) for ax in fig.axes)
    table = _with_intervals()
    curve = (table.metric == "perplexity") & table.step.notna()
    table.loc[curve, "ci_low"] = table.value * 0.8 - table.seed  # seeds' bounds differ: the band is their mean
    table.loc[curve, "ci_high"] = table.value * 1.3 + table.seed
    fig = perplexity_vs_step(table, tmp_path / "figure.png")
    sd_bands = [c for c in fig.axes[0].collections if isinstance(c, PolyCollection) and c.get_label() != "_interval"]
    assert [len(_curve_bands(ax)) for ax in fig.axes] == [2, 2, 2]  # one per evaluation set, beside the sd bands
    assert len(sd_bands) == 2
    # 0-12, nl dev: seeds 1 and 2 at 10 and 14 x (2, 1.5, 1); bounds averaged over the seeds
    nl_dev = _curve_bands(fig.axes[0])[0]
    assert nl_dev.get_facecolor()[0][:3] == pytest.approx(matplotlib.colors.to_rgb(_line_color(fig.axes[0], "nl dev")))
    vertices = nl_dev.get_paths()[0].vertices
    means = np.array([24.0, 18.0, 12.0])
    for x, low, high in zip([0, 10, 20], means * 0.8 - 1.5, means * 1.3 + 1.5):
        ys = vertices[vertices[:, 0] == x][:, 1]
        assert min(ys) == pytest.approx(low) and max(ys) == pytest.approx(high), x
    low, high = fig.axes[0].get_ylim()
    assert high >= table.loc[curve, "ci_high"].max()  # the bands fit the panel


@pytest.mark.slow
def test_final_perplexity_bars_carry_the_bootstrap_interval(tmp_path):
    plain = final_perplexity(_table(), tmp_path / "plain.png").axes[0]
    assert not [c for c in plain.containers if c.get_label() == "_interval"]
    ax = final_perplexity(_with_intervals(), tmp_path / "figure.png").axes[0]
    intervals = [c for c in ax.containers if c.get_label() == "_interval"]
    assert len(intervals) == 3  # one per evaluation set
    nl_dev = intervals[0].lines[2][0].get_segments()
    assert [tuple(s[:, 1]) for s in nl_dev] == [
        pytest.approx((0.9 * v, 1.1 * v)) for v in (12.0, 21.0, 12.0, 40.0, 8.0)
    ]


def _with_word_nll():
    """_table() with the final NLL per word / character rows: per word equal for the native model
    and the best scheme although their perplexities differ (other tokenizers)."""
    table = _table()
    final = (table.metric == "perplexity") & table.step.isna()
    rows = []
    for _, row in table[final].iterrows():
        per_word = 3.0 if row["role"] == "native" else 3.0 + math.log(row["value"]) / 10
        for metric, value in (("nll_per_word", per_word), ("nll_per_char", per_word / 5), ("pll_words", 400.0)):
            rows.append({**row.to_dict(), "metric": metric, "value": value})
    return pd.concat([table, pd.DataFrame(rows)], ignore_index=True)


def test_word_nll_rows_are_added_and_the_perplexity_table_is_unchanged():
    table = _with_word_nll()
    pd.testing.assert_frame_equal(final_perplexity_table(table), final_perplexity_table(_table()))
    words = word_nll_table(table)
    assert list(words.columns[:5]) == ["metric", "model", "role", "scheme", "seeds"]
    assert list(words.metric) == ["nll_per_word"] * 5 + ["nll_per_char"] * 5
    assert list(words.role[:5]) == ["adapted"] * 3 + ["transfer", "native"]
    per_word = words[words.metric == "nll_per_word"].set_index(["role", "scheme"])
    assert per_word.loc[("native", "pre-trained"), "nl/test mean"] == 3.0
    assert per_word.loc[("adapted", "0-12"), "nl/test mean"] == pytest.approx(
        np.mean([3.0 + math.log(11.0) / 10, 3.0 + math.log(15.0) / 10])
    )
    with pytest.raises(Exception, match="nll_per_word.*--pll-sentences"):
        word_nll_table(_table())


def test_the_unk_share_per_language_stands_beside_the_word_nll_with_the_flagged_languages():
    table = _with_word_nll()
    rows = []
    for run_id in sorted(set(table.run_id)):
        base = table[table.run_id == run_id].iloc[0][["family", "run_id", "model", "scheme", "seed", "role"]].to_dict()
        for lang, share in (("nl", 0.001), ("en", 0.002), ("th", 0.05 if base["role"] != "native" else 0.0)):
            split = "test" if lang == "nl" else "dev"
            rows += [
                {**base, "metric": "unk_share", "value": share, "lang": lang, "split": split},
                {**base, "metric": "unk_flagged", "value": float(share > 0.01), "lang": lang, "split": split},
            ]
    words = word_nll_table(pd.concat([table, pd.DataFrame(rows)], ignore_index=True))
    unk = words[words.metric == "unk_share"].set_index(["role", "scheme"])
    assert unk.loc[("transfer", "pre-trained"), "th/dev mean"] == 0.05
    assert unk.loc[("native", "pre-trained"), "nl/test mean"] == 0.001
    flagged = words.set_index(["metric", "role", "scheme"])["unk flagged"]
    assert (
        flagged[("nll_per_word", "adapted", "0-12")] == "th"
        and flagged[("nll_per_word", "native", "pre-trained")] == ""
    )


@pytest.mark.slow
def test_word_nll_figure_is_written_with_a_panel_per_measure(tmp_path):
    out = tmp_path / "word-nll.png"
    fig = word_nll(_with_word_nll(), out)
    assert out.is_file() and out.stat().st_size > 0
    top, bottom = fig.axes[:2]
    assert "per word" in top.get_ylabel() and "per character" in bottom.get_ylabel()
    assert top.get_yscale() == "linear"
    labels = [t.get_text() for t in top.get_xticklabels()]
    assert labels[-1] == "bertje\nuntouched (native)" and len(labels) == 5
    heights = sorted(round(b.get_height(), 2) for b in top.patches)
    assert 3.0 in heights


def _mixed_protocols():
    """_table() as a sweep with adapt.curve / adapt.scheme_eval writes it: 0-12 is the curve run
    (target and multilingual at every checkpoint, steps 0, 10, 20); 9-12 scores the multilingual
    set on the final model only (scheme_eval.multilingual: final) and gradual never (none), both
    at fewer checkpoints (steps 0 and 20: scheme_eval.eval_every). Every record has bounds."""
    table = _table()
    step, scheme = table["step"], table["scheme"]
    multi = table.lang == "multilingual"
    others = scheme.isin(["9-12", "gradual-start4-step4-every1epochs"])
    drop = (
        (others & (step == 10))
        | (others & multi & step.notna())
        | ((scheme == "gradual-start4-step4-every1epochs") & multi)
    )
    table = table[~drop].reset_index(drop=True)
    ppl = table.metric == "perplexity"
    table["ci_low"] = np.where(ppl, table.value * 0.9, np.nan)
    table["ci_high"] = np.where(ppl, table.value * 1.1, np.nan)
    return table


@pytest.mark.slow
def test_figures_and_tables_build_from_runs_with_and_without_multilingual_records(tmp_path):
    table = _mixed_protocols()
    for kind, plot in PLOTS.items():
        if kind != "adapt-word-nll":
            plot(table, tmp_path / f"{kind}.png")
    fig = perplexity_vs_step(table, tmp_path / "curves.png")
    assert [ax.get_title() for ax in fig.axes] == ["layers 0-12", "layers 9-12", "gradual (top 4, +4 every epoch)"]
    assert _line(fig.axes[0], "multilingual (dev)")[0] == [0, 10, 20]  # the curve run keeps its curves
    assert _line(fig.axes[1], "nl dev") == ([0, 20], pytest.approx([42.0, 21.0]))
    # no multilingual checkpoints: no (empty) curve; 9-12's final multilingual evaluation is still its
    # selected model's diamond beside nl dev's, gradual has nl dev's only
    assert [line.get_label() for line in fig.axes[1].lines if line.get_label() == "multilingual (dev)"] == []
    assert [line.get_label() for line in fig.axes[2].lines if line.get_label() == "multilingual (dev)"] == []
    assert [len([c for c in ax.containers if c.get_label() == "_interval"]) for ax in fig.axes] == [2, 2, 1]
    summary = final_perplexity_table(table).set_index("scheme")
    assert summary.loc["9-12", "multilingual/dev mean"] == pytest.approx(62.0)  # the final evaluation's
    assert math.isnan(summary.loc["gradual-start4-step4-every1epochs", "multilingual/dev mean"])
    assert summary.loc["gradual-start4-step4-every1epochs", "nl/test mean"] == pytest.approx(13.0)
    ax = final_perplexity(table, tmp_path / "final.png").axes[0]
    bars = [c for c in ax.containers if hasattr(c, "patches")]
    assert [p.get_height() for p in bars[2].patches][:2] == pytest.approx([85.0, 62.0])
    assert math.isnan(bars[2].patches[2].get_height())
    words = word_nll_table(
        _with_word_nll().pipe(
            lambda t: t[
                ~t.index.isin(t.index[(t.scheme == "gradual-start4-step4-every1epochs") & (t.lang == "multilingual")])
            ]
        )
    )
    assert math.isnan(
        words.set_index(["metric", "scheme"]).loc[
            ("nll_per_word", "gradual-start4-step4-every1epochs"), "multilingual/dev mean"
        ]
    )
