"""Dual-encoder figures drawn from a tidy table like `xlt aggregate` writes: what each one draws."""

import itertools

import numpy as np
import pandas as pd
import pytest
from matplotlib.colors import to_rgb

from xlt.core.errors import XltError
from xlt.families.dual import plan
from xlt.families.dual.plots import PLOTS
from xlt.families.dual.run_labels import run_labels
from xlt.report.plots import plot_functions

PNG = b"\x89PNG\r\n\x1a\n"


def error(margin, scale, seed, lang, direction):
    """Retrieval error of a made-up run: every axis leaves its own trace in the value."""
    return (
        0.5
        - margin
        + 0.01 * seed
        + (0.1 if scale == 20 else 0.0)
        + (0.02 if lang == "qac" else 0.0)
        + (0.04 if direction == "en->xx" else 0.0)
    )


def dual_table():
    rows = []
    for margin, scale, seed in itertools.product([0, 0.3], [10, 20], [1, 2]):
        run = f"m{margin}-s{scale}-seed{seed}"
        axes = {
            "run_id": run,
            "margin": margin,
            "scale": scale,
            "pooling": "mean",
            "batch_size": 32,
            "freeze_depth": -1,
            "seed": seed,
        }
        for lang, direction in itertools.product(["qaa", "qac"], ["xx->en", "en->xx"]):
            rows.append(
                {
                    **axes,
                    "family": "sbert",
                    "metric": "error",
                    "lang": lang,
                    "direction": direction,
                    "value": error(margin, scale, seed, lang, direction),
                }
            )
        for metric, value in (("precision", 0.8), ("recall", 0.6), ("f1", 0.69)):
            rows.append(
                {
                    **axes,
                    "family": "mine",
                    "metric": metric,
                    "lang": "qaa",
                    "split": "test",
                    "value": value - margin / 10 - (0.1 if scale == 20 else 0.0) + 0.01 * seed,
                }
            )
            rows.append({**axes, "family": "mine", "metric": metric, "lang": "qaa", "split": "tune", "value": 1.0})
    return pd.DataFrame(rows)


def test_every_plan_kind_is_a_registered_plot():
    assert set(plan.PLOT_KINDS) <= set(PLOTS)
    registered = plot_functions()
    assert all(registered[kind] is PLOTS[kind] for kind in plan.PLOT_KINDS)


@pytest.mark.parametrize(
    "kind, x, other", [("dual-error-vs-margin", "margin", "scale"), ("dual-error-vs-scale", "scale", "margin")]
)
def test_error_vs_axis_draws_mean_and_seed_spread_per_direction(tmp_path, kind, x, other):
    out = tmp_path / f"{kind}.png"
    fig = PLOTS[kind](dual_table(), out)
    assert out.read_bytes()[:8] == PNG
    assert [ax.get_title() for ax in fig.axes] == ["xx->en", "en->xx"]
    values = {"margin": [0, 0.3], "scale": [10, 20]}
    for ax, direction in zip(fig.axes, ["xx->en", "en->xx"]):
        assert ax.get_xlabel() == x
        assert list(ax.get_xticks()) == values[x]
        # one line per value of the other axis; points: mean over languages, then over seeds
        assert sorted(c.get_label() for c in ax.containers) == [f"{other}={v}" for v in values[other]]
        for container in ax.containers:
            fixed = float(container.get_label().split("=")[1])
            line = container.lines[0]
            assert list(line.get_xdata()) == values[x]
            per_seed = [
                [
                    np.mean(
                        [
                            error(**{x: v, other: fixed}, seed=seed, lang=lang, direction=direction)
                            for lang in ("qaa", "qac")
                        ]
                    )
                    for seed in (1, 2)
                ]
                for v in values[x]
            ]
            assert np.allclose(line.get_ydata(), [100 * np.mean(s) for s in per_seed])
            # error bars: +- one standard deviation over seeds (0.01 apart: 0.707 points)
            (bars,) = container.lines[2]
            spans = [segment[1][1] - segment[0][1] for segment in bars.get_segments()]
            assert np.allclose(spans, [2 * 100 * np.std(s, ddof=1) for s in per_seed])


def test_tatoeba_heatmap_cells_are_error_percent_per_run_language_and_direction(tmp_path):
    fig = PLOTS["dual-tatoeba-heatmap"](dual_table(), tmp_path / "h.png")
    ax = fig.axes[0]
    columns = ["qaa en->xx", "qaa xx->en", "qac en->xx", "qac xx->en", "mean"]
    assert [t.get_text() for t in ax.get_xticklabels()] == columns
    rows = [t.get_text() for t in ax.get_yticklabels()]
    assert rows == ["margin=0 scale=10", "margin=0 scale=20", "margin=0.3 scale=10", "margin=0.3 scale=20"]
    cells = np.array([float(t.get_text()) for t in ax.texts]).reshape(len(rows), len(columns))
    for i, label in enumerate(rows):
        margin, scale = (float(part.split("=")[1]) for part in label.split())
        expected = [100 * np.mean([error(margin, scale, seed, *c.split()) for seed in (1, 2)]) for c in columns[:-1]]
        assert np.allclose(cells[i], [*expected, np.mean(expected)], atol=0.05)  # cells print one decimal
    assert ax.get_title() == "Tatoeba retrieval error % per language and direction"


def test_mining_table_shows_test_split_precision_recall_f1(tmp_path):
    fig = PLOTS["dual-mining"](dual_table(), tmp_path / "m.png", title="mined")
    ax = fig.axes[0]
    assert ax.get_title() == "mined"
    assert [t.get_text() for t in ax.get_xticklabels()] == ["qaa P", "qaa R", "qaa F1"]
    rows = [t.get_text() for t in ax.get_yticklabels()]
    cells = np.array([float(t.get_text()) for t in ax.texts]).reshape(len(rows), 3)
    for i, label in enumerate(rows):
        margin, scale = (float(part.split("=")[1]) for part in label.split())
        base = np.array([0.8, 0.6, 0.69]) - margin / 10 - (0.1 if scale == 20 else 0.0) + 0.015  # mean of seeds 1, 2
        assert np.allclose(cells[i], 100 * base, atol=0.05)  # the tuning split's 1.0 never shows


def test_mining_table_says_half_of_each_interval_where_one_exists(tmp_path):
    table = dual_table()
    test_rows = (table.metric.isin(["precision", "recall", "f1"]) & (table.split == "test")).to_numpy()
    # every test P/R/F1 gets +-0.02, except F1 of the margin=0.3 runs
    with_interval = test_rows & ~((table.metric == "f1") & (table.margin == 0.3)).to_numpy()
    table["ci_low"] = np.where(with_interval, table["value"] - 0.02, np.nan)
    table["ci_high"] = np.where(with_interval, table["value"] + 0.02, np.nan)
    ax = PLOTS["dual-mining"](table, tmp_path / "m.png").axes[0]
    rows = [t.get_text() for t in ax.get_yticklabels()]
    texts = np.array([t.get_text() for t in ax.texts]).reshape(len(rows), 3)
    for label, cells in zip(rows, texts):
        margin = float(label.split()[0].split("=")[1])
        assert [cell.endswith("\n±2.0") for cell in cells] == [True, True, margin != 0.3], label


def with_baselines(table, poolings=("mean",)):
    """The trained runs (trained true) plus the untrained encoder's error: 0.9 (qaa) and 0.95 (qac),
    +0.01 for en->xx and +0.02 for pooling cls."""
    rows = []
    for pooling, lang, direction in itertools.product(poolings, ["qaa", "qac"], ["xx->en", "en->xx"]):
        value = (
            (0.9 if lang == "qaa" else 0.95)
            + (0.01 if direction == "en->xx" else 0)
            + (0.02 if pooling == "cls" else 0)
        )
        rows.append(
            {
                "run_id": f"demo-{pooling}-untrained",
                "margin": np.nan,
                "scale": np.nan,
                "pooling": pooling,
                "batch_size": np.nan,
                "freeze_depth": np.nan,
                "seed": np.nan,
                "trained": False,
                "family": "dual",
                "metric": "error",
                "lang": lang,
                "direction": direction,
                "value": value,
            }
        )
    return pd.concat([table.assign(trained=True), pd.DataFrame(rows)], ignore_index=True)


@pytest.mark.parametrize("kind", ["dual-error-vs-margin", "dual-error-vs-scale"])
def test_error_curves_show_the_untrained_encoder_as_a_dashed_line(tmp_path, kind):
    fig = PLOTS[kind](with_baselines(dual_table()), tmp_path / "e.png")
    for ax, direction in zip(fig.axes, ["xx->en", "en->xx"]):
        (line,) = [line for line in ax.get_lines() if line.get_linestyle() == "--"]
        assert line.get_label() == "untrained"
        extra = 1.0 if direction == "en->xx" else 0.0
        assert np.allclose(line.get_ydata(), 92.5 + extra)  # mean over qaa and qac
        assert len(ax.containers) == 2  # the trained lines are unchanged: no NaN-margin point
        assert all(np.isfinite(np.asarray(c.lines[0].get_xdata(), dtype=float)).all() for c in ax.containers)
    # two poolings: one line each
    fig = PLOTS[kind](with_baselines(dual_table(), poolings=("mean", "cls")), tmp_path / "e2.png")
    dashed = sorted(line.get_label() for line in fig.axes[0].get_lines() if line.get_linestyle() == "--")
    assert dashed == ["untrained pooling=cls", "untrained pooling=mean"]


def test_a_single_trained_line_is_called_trained_beside_the_untrained_one(tmp_path):
    fig = PLOTS["dual-error-vs-margin"](with_baselines(dual_table().query("scale == 10")), tmp_path / "e.png")
    for ax in fig.axes:
        assert [c.get_label() for c in ax.containers] == ["trained"]
        assert [line.get_label() for line in ax.get_lines() if line.get_linestyle() == "--"] == ["untrained"]
    fig = PLOTS["dual-error-vs-margin"](dual_table().query("scale == 10"), tmp_path / "e2.png")
    assert [c.get_label() for c in fig.axes[0].containers] == ["all runs"]  # no baselines: as before


def test_tatoeba_heatmap_ends_with_the_untrained_rows(tmp_path):
    fig = PLOTS["dual-tatoeba-heatmap"](with_baselines(dual_table()), tmp_path / "h.png")
    ax = fig.axes[0]
    rows = [t.get_text() for t in ax.get_yticklabels()]
    assert rows == ["margin=0 scale=10", "margin=0 scale=20", "margin=0.3 scale=10", "margin=0.3 scale=20", "untrained"]
    cells = np.array([float(t.get_text()) for t in ax.texts]).reshape(len(rows), 5)
    assert np.allclose(cells[-1], [91, 90, 96, 95, 93], atol=0.05)  # qaa en->xx, qaa xx->en, qac ..., mean
    # one trained run: "trained" beside "untrained" (not "all runs")
    one = dual_table().query("margin == 0 and scale == 10 and seed == 1")
    fig = PLOTS["dual-tatoeba-heatmap"](with_baselines(one), tmp_path / "h1.png")
    assert [t.get_text() for t in fig.axes[0].get_yticklabels()] == ["trained", "untrained"]


def test_labels_name_only_the_axes_that_vary():
    table = dual_table()
    labels = run_labels(table)
    assert set(labels) == {"margin=0 scale=10", "margin=0 scale=20", "margin=0.3 scale=10", "margin=0.3 scale=20"}
    assert set(run_labels(table, skip=("margin",))) == {"scale=10", "scale=20"}
    assert set(run_labels(table.query("margin == 0 and scale == 10"))) == {"all runs"}


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


def with_intervals(table):
    """Every error record's bounds: 0.02 below and 0.01 above its value."""
    error = table.metric == "error"
    return table.assign(
        ci_low=np.where(error, table.value - 0.02, np.nan), ci_high=np.where(error, table.value + 0.01, np.nan)
    )


@pytest.mark.parametrize(
    "kind, x, other", [("dual-error-vs-margin", "margin", "scale"), ("dual-error-vs-scale", "scale", "margin")]
)
def test_error_vs_axis_shades_the_bootstrap_interval_of_each_line(tmp_path, kind, x, other):
    fig = PLOTS[kind](with_intervals(with_baselines(dual_table())), tmp_path / "e.png")
    for ax, direction in zip(fig.axes, ["xx->en", "en->xx"]):
        bands = {}
        for band in (c for c in ax.collections if c.get_label() == "_interval"):
            colour = tuple(band.get_facecolor()[0][:3])
            container = next(c for c in ax.containers if to_rgb(c.lines[0].get_color()) == colour)
            bands[container.get_label()] = band.get_paths()[0].get_extents().get_points()[:, 1]
        assert sorted(bands) == sorted(c.get_label() for c in ax.containers)  # one band per line, in its colour
        for label, (low, high) in bands.items():
            fixed = float(label.split("=")[1])
            # the error in percent of every point: mean over languages and seeds; the band spans the lowest
            # point's lower bound to the highest point's upper bound
            points = [
                100
                * np.mean(
                    [
                        error(**{x: v, other: fixed}, seed=seed, lang=lang, direction=direction)
                        for seed in (1, 2)
                        for lang in ("qaa", "qac")
                    ]
                )
                for v in (dict(margin=[0, 0.3], scale=[10, 20])[x])
            ]
            assert (low, high) == pytest.approx((min(points) - 2, max(points) + 1))
        (span,) = [p for p in ax.patches if p.get_label() == "_interval"]  # the untrained line's interval
        extra = 1.0 if direction == "en->xx" else 0.0
        assert span.get_path().transformed(span.get_patch_transform()).get_extents().y0 == pytest.approx(90.5 + extra)


def test_error_vs_axis_without_intervals_draws_no_bands(tmp_path):
    for table in (with_baselines(dual_table()), with_baselines(dual_table()).assign(ci_low=np.nan, ci_high=np.nan)):
        fig = PLOTS["dual-error-vs-margin"](table, tmp_path / "e.png")
        ax = fig.axes[0]
        assert not [a for a in [*ax.collections, *ax.patches] if a.get_label() == "_interval"]
        assert len(ax.collections) == 2  # only the two lines' error bars (+- sd over seeds)
        assert len(fig.axes[0].containers) == 2


def objectives_table():
    """mean_error per language (and STS Spearman) of the untrained encoder, the zero-shot teacher,
    two additive-margin runs and a distilled student, with intervals."""
    none = {"margin": np.nan, "scale": np.nan, "batch_size": np.nan, "freeze_depth": np.nan, "seed": np.nan}
    runs = [
        ("u", {"objective": np.nan, "trained": False, **none}, 0.9, 0.1),
        ("t", {"objective": "teacher", "trained": True, **none}, 0.8, 0.7),
        (
            "a0",
            {
                "objective": "additive_margin",
                "margin": 0,
                "scale": 10,
                "batch_size": 32,
                "freeze_depth": -1,
                "seed": 1,
                "trained": True,
            },
            0.5,
            0.3,
        ),
        (
            "a3",
            {
                "objective": "additive_margin",
                "margin": 0.3,
                "scale": 10,
                "batch_size": 32,
                "freeze_depth": -1,
                "seed": 1,
                "trained": True,
            },
            0.4,
            0.35,
        ),
        (
            "kd",
            {
                "objective": "mse_distill",
                "margin": np.nan,
                "scale": np.nan,
                "batch_size": 32,
                "freeze_depth": -1,
                "seed": 1,
                "trained": True,
            },
            0.2,
            0.65,
        ),
    ]
    rows = []
    for run, axes, err, rho in runs:
        for lang in ("qaa", "qac"):
            base = {"run_id": run, "pooling": "mean", **axes, "lang": lang, "split": "test"}
            rows.append({**base, "metric": "mean_error", "value": err, "ci_low": err - 0.05, "ci_high": err + 0.05})
            rows.append({**base, "metric": "error", "direction": "xx->en", "value": err})
            rows.append(
                {
                    **base,
                    "metric": "spearman",
                    "similarity": "cosine",
                    "value": rho,
                    "ci_low": rho - 0.1,
                    "ci_high": rho + 0.1,
                }
            )
    return pd.DataFrame(rows)


def test_objectives_figure_has_a_bar_per_objective_and_language_with_interval_whiskers(tmp_path):
    fig = PLOTS["dual-objectives"](objectives_table(), tmp_path / "o.png")
    assert (tmp_path / "o.png").read_bytes()[:8] == PNG
    error_panel, sts_panel = fig.axes
    labels = [text.get_text() for text in fig.legends[0].get_texts()]
    assert labels == [
        "untrained",
        "teacher (zero-shot)",
        "objective=additive_margin margin=0, 1 seed",
        "objective=additive_margin margin=0.3, 1 seed",
        "objective=mse_distill, 1 seed",
    ]
    heights = [round(bar.get_height(), 6) for bar in error_panel.patches]
    assert heights == [90.0, 90.0, 80.0, 80.0, 50.0, 50.0, 40.0, 40.0, 20.0, 20.0]  # percent, qaa and qac per group
    assert [round(b.get_height(), 6) for b in sts_panel.patches][-2:] == [0.65, 0.65]
    from matplotlib.container import BarContainer

    bars = [c for c in error_panel.containers if isinstance(c, BarContainer)]
    assert len(bars) == 5 and all(c.errorbar is not None for c in bars)  # the 95 % interval of every bar
    whiskers = bars[-1].errorbar.lines[2][0].get_segments()
    assert [(round(seg[0][1], 6), round(seg[1][1], 6)) for seg in whiskers] == [(15.0, 25.0), (15.0, 25.0)]


def test_objectives_figure_draws_one_sts_panel_per_dataset(tmp_path):
    """Two STS sets share language codes (en in stsb-multi and STS 2017), not items: a panel each."""
    table = objectives_table()
    sts = table[table.metric == "spearman"]
    other = sts.assign(dataset="sts2017-extended", value=sts.value / 2)
    table = pd.concat([table.assign(dataset=np.where(table.metric == "spearman", "stsb-multi", "tatoeba")), other])
    fig = PLOTS["dual-objectives"](table, tmp_path / "o.png")
    assert [ax.get_ylabel() for ax in fig.axes[1:]] == [
        "STS Spearman (cosine), stsb-multi",
        "STS Spearman (cosine), sts2017-extended",
    ]
    assert [round(b.get_height(), 6) for b in fig.axes[2].patches][-2:] == [0.325, 0.325]


def test_objectives_figure_needs_a_distilled_run(tmp_path):
    table = objectives_table()
    with pytest.raises(XltError, match="no distilled runs"):
        PLOTS["dual-objectives"](table[table.objective != "mse_distill"], tmp_path / "o.png")


def test_margin_curves_leave_the_other_objectives_out(tmp_path):
    table = objectives_table()
    fig = PLOTS["dual-error-vs-margin"](table, tmp_path / "m.png")
    lines = fig.axes[0].get_legend_handles_labels()[1]
    assert "untrained" in lines and not any("distill" in line or "teacher" in line for line in lines)


def test_objectives_figure_states_each_trained_bars_budget(tmp_path):
    """Issue 35: the distillation's recipe (24M sentences) and its budget-matched twin (4.8M, the
    margin runs') are two bars, each legend entry with its sentences_seen; the teacher and the
    untrained encoder have none."""
    table = objectives_table()
    table["sentences_seen"] = table["run_id"].map({"a0": 4_800_000, "a3": 4_800_000, "kd": 24_000_000})
    matched = table[table.run_id == "kd"].assign(run_id="kd-matched", sentences_seen=4_800_000)
    fig = PLOTS["dual-objectives"](pd.concat([table, matched], ignore_index=True), tmp_path / "o.png")
    labels = [text.get_text() for text in fig.legends[0].get_texts()]
    assert labels == [
        "untrained",
        "teacher (zero-shot)",
        "objective=additive_margin margin=0, 1 seed, 4.8M sentences",
        "objective=additive_margin margin=0.3, 1 seed, 4.8M sentences",
        "objective=mse_distill, 1 seed, 24M sentences",
        "objective=mse_distill, 1 seed, 4.8M sentences",
    ]


def pooled_table():
    """Issue 47: the untrained encoder (cls 0.9, mean 0.6), margin runs from both starts at both
    poolings and a distilled student (mean), the trained ones at three seeds that differ by 0.01."""
    rows = []

    def add(run, axes, err):
        for lang in ("qaa", "qac"):
            rows.append({"run_id": run, **axes, "lang": lang, "split": "test", "metric": "mean_error", "value": err})

    for pooling, err in (("cls", 0.9), ("mean", 0.6)):
        add(f"u-{pooling}", {"objective": np.nan, "pooling": pooling, "trained": False, "seed": np.nan}, err)
    for seed in (1, 2, 3):
        for (pooling, start), err in {
            ("cls", "pretrained"): 0.5,
            ("mean", "pretrained"): 0.3,
            ("cls", "teacher"): 0.4,
            ("mean", "teacher"): 0.2,
        }.items():
            margin = {"objective": "additive_margin", "margin": 0.3, "pooling": pooling, "start": start}
            add(f"a-{pooling}-{start}-{seed}", {**margin, "trained": True, "seed": seed}, err + 0.01 * (seed - 2))
        distill = {"objective": "mse_distill", "margin": np.nan, "pooling": "mean", "start": "pretrained"}
        add(f"kd-{seed}", {**distill, "trained": True, "seed": seed}, 0.1 + 0.01 * (seed - 2))
    return pd.DataFrame(rows)


def test_objectives_figure_draws_each_pooling_apart_and_names_every_bars_start_and_seeds(tmp_path):
    """No bar averages two poolings or two starts: the cls row holds the cls runs, the mean row the
    mean runs and the student; each trained label says its start and its 3 seeds, and a dot per seed."""
    fig = PLOTS["dual-objectives"](pooled_table(), tmp_path / "o.png")
    cls, mean = fig.axes
    assert (cls.get_title(), mean.get_title()) == ("pooling=cls", "pooling=mean")

    def bars(ax):  # label -> heights (percent, qaa then qac)
        return {c.get_label(): [round(b.get_height(), 6) for b in c] for c in ax.containers if c.get_label()}

    margin = "objective=additive_margin, start={}, 3 seeds"
    # the mean over seeds 0.49, 0.50, 0.51 is 0.50 exactly up to float rounding (6 decimals kept)
    assert bars(cls) == {
        "untrained": [90.0, 90.0],
        margin.format("pretrained"): [50.0, 50.0],
        margin.format("teacher"): [40.0, 40.0],
    }
    assert bars(mean) == {
        "untrained": [60.0, 60.0],
        margin.format("pretrained"): [30.0, 30.0],
        margin.format("teacher"): [20.0, 20.0],
        "objective=mse_distill, start=pretrained, 3 seeds": [10.0, 10.0],
    }
    # a dot per seed and language on each of the 3 trained bars of the mean row
    dots = [len(c.get_offsets()) for c in mean.collections if c.get_label() == "_seeds"]
    assert sum(dots) == 3 * 2 * 3
    assert "start=teacher" in fig._suptitle.get_text()


def test_the_margin_curves_and_the_heatmap_keep_the_two_starts_apart(tmp_path):
    """A run from the teacher's checkpoint is its own line and its own heatmap row, never averaged
    with the run from the pretrained model at the same margin and scale."""
    table = dual_table()
    teacher = table[table.margin == 0.3].assign(run_id=lambda t: t.run_id + "-t", start="teacher")
    teacher = teacher.assign(value=teacher.value + 0.2)
    table = pd.concat([table.assign(start="pretrained"), teacher], ignore_index=True)
    fig = PLOTS["dual-error-vs-margin"](table, tmp_path / "m.png")
    lines = {c.get_label(): c for c in fig.axes[0].containers}
    assert set(lines) == {f"scale={s} start={st}" for s in (10, 20) for st in ("pretrained", "teacher")}
    ys = lines["scale=10 start=teacher"].lines[0].get_ydata()
    pretrained = lines["scale=10 start=pretrained"].lines[0].get_ydata()[-1]  # margin 0.3
    # 0.2 more error, in percent, alone at margin 0.3; two means of values below 1 then x100: rounding ~1e-13
    assert list(ys) == pytest.approx([pretrained + 20], abs=1e-9)
    rows = [t.get_text() for t in PLOTS["dual-tatoeba-heatmap"](table, tmp_path / "h.png").axes[0].get_yticklabels()]
    assert "margin=0.3 scale=10 start=teacher" in rows and "margin=0.3 scale=10 start=pretrained" in rows
