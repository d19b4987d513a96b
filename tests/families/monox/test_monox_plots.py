"""MonoX table and figures from a synthetic tidy table made by the real aggregate -> CSV path."""

import itertools

import numpy as np
import pandas as pd
import pytest

from xlt.core.io import write_json
from xlt.families.monox.plots import PLOTS, accuracy_table, table_html, table_markdown
from xlt.report.aggregate import aggregate

LANGS = ["en", "de"]


def metrics_file(axes, accuracies, train_examples, teacher=False):
    records = [
        {"metric": "train_examples", "value": train_examples},
        {"metric": "accuracy", "value": 0.5, "lang": "en", "split": "dev"},
    ]
    records += [{"metric": "accuracy", "value": v, "lang": lang, "split": "test"} for lang, v in accuracies.items()]
    if not teacher:
        records.append(
            {"metric": "accuracy", "value": float(np.mean(list(accuracies.values()))), "lang": "avg", "split": "test"}
        )
    run_id = "-".join(str(v) for v in axes.values())
    return {"meta": {"family": "monox", "run_id": run_id, "model": "m", "axes": axes}, "metrics": records}


def accuracy_of(mode, size, temperature, seed, lang):
    """A made-up but deterministic accuracy, so expected cells can be computed independently."""
    base = {"teacher": 0.9, "finetune": 0.6, "self_train": 0.62, "pl": 0.7, "kd": 0.72}[mode]
    return (
        base
        + (0.05 if size == "all" else 0.0)
        - 0.01 * seed
        - (0.1 if lang == "de" else 0.0)
        + (0.02 * np.log10(temperature) if temperature else 0.0)
    )


@pytest.fixture()
def table(tmp_path):
    paths = []
    rows = []
    for seed, size in itertools.product((1, 2), ("all", 10)):
        rows.append(
            dict(
                task="t",
                mode="teacher",
                student=None,
                teacher="mono",
                size=size,
                temperature=None,
                seed=seed,
                headline=size == "all",
            )
        )
        for mode in ("finetune", "self_train", "pl", "kd"):
            temps = [0.1] + ([0.01, 10.0] if mode == "kd" and size == "all" else [])
            for t in temps:
                rows.append(
                    dict(
                        task="t",
                        mode=mode,
                        student="mbert",
                        teacher="mono" if mode in ("kd", "pl") else None,
                        size=size,
                        temperature=t if mode == "kd" else None,
                        seed=seed,
                        headline=size == "all" and t == 0.1,
                    )
                )
    for i, axes in enumerate(rows):
        teacher = axes["mode"] == "teacher"
        langs = ["en"] if teacher else LANGS
        acc = {lang: accuracy_of(axes["mode"], axes["size"], axes["temperature"], axes["seed"], lang) for lang in langs}
        path = tmp_path / f"{i}.json"
        write_json(path, metrics_file(axes, acc, 200 if axes["size"] == "all" else 10, teacher))
        paths.append(path)
    csv = tmp_path / "monox.csv"
    aggregate(paths).to_csv(csv, index=False)
    return pd.read_csv(csv)


def test_accuracy_table_is_the_headline_mean_over_seeds(table):
    grid = accuracy_table(table)
    assert list(grid.index.get_level_values("method")) == ["teacher", "finetune", "self_train", "pl", "kd"]
    assert list(grid.columns) == ["seeds", "de", "en", "avg"]  # the tidy table's (sorted) order, avg last
    for mode in ("finetune", "kd"):
        t = 0.1 if mode == "kd" else None
        for lang in LANGS:
            expected = np.mean([accuracy_of(mode, "all", t, s, lang) for s in (1, 2)])
            assert grid.loc[("t", mode), lang] == pytest.approx(expected)
        assert grid.loc[("t", mode), "avg"] == pytest.approx(np.mean([grid.loc[("t", mode), lang] for lang in LANGS]))
    assert grid.loc[("t", "teacher"), "en"] == pytest.approx(
        np.mean([accuracy_of("teacher", "all", None, s, "en") for s in (1, 2)])
    )
    assert np.isnan(grid.loc[("t", "teacher"), "de"]) and np.isnan(grid.loc[("t", "teacher"), "avg"])
    assert (grid["seeds"] == 2).all()


def test_markdown_and_html_show_percent(table):
    grid = accuracy_table(table)
    md = table_markdown(grid)
    expected = 100 * np.mean([accuracy_of("kd", "all", 0.1, s, "de") for s in (1, 2)])
    assert "| kd | 2 | " in md and f"{expected:.2f}" in md
    assert md.splitlines()[2] == "| method | seeds | de | en | avg |"
    html = table_html(grid, "title")
    assert "<h3>t</h3>" in html and f"<td>{expected:.2f}</td>" in html


def mean_avg(mode, size, temperature):
    """The students' average over languages, mean over seeds, in percent (what the curves draw)."""
    return 100 * np.mean([np.mean([accuracy_of(mode, size, temperature, s, lang) for lang in LANGS]) for s in (1, 2)])


@pytest.mark.parametrize("kind", sorted(PLOTS))
def test_plots_are_registered_and_write_png(table, tmp_path, kind):
    from xlt.report.plots import plot_functions

    assert plot_functions()[kind] is PLOTS[kind]  # registered for `xlt plot`
    out = tmp_path / f"{kind}.png"
    fig = PLOTS[kind](table, out)
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert fig.axes[0].get_title() == "t"


def test_heatmap_cells_are_the_headline_table_in_percent(table, tmp_path):
    fig = PLOTS["monox-accuracy-heatmap"](table, tmp_path / "h.png", title="T")
    ax = fig.axes[0]
    rows = [t.get_text() for t in ax.get_yticklabels()]
    columns = [t.get_text() for t in ax.get_xticklabels()]
    assert rows == ["teacher", "finetune", "self_train", "pl", "kd"] and columns == ["de", "en", "avg"]
    cells = {(rows[int(t.get_position()[1])], columns[int(t.get_position()[0])]): t.get_text() for t in ax.texts}
    grid = accuracy_table(table)
    expected = {
        (method, lang): f"{100 * grid.loc[('t', method), lang]:.1f}"
        for method in rows
        for lang in columns
        if not np.isnan(grid.loc[("t", method), lang])
    }
    assert cells == expected
    assert ("teacher", "de") not in cells and cells[
        ("kd", "de")
    ] == f"{100 * np.mean([accuracy_of('kd', 'all', 0.1, s, 'de') for s in (1, 2)]):.1f}"
    assert fig._suptitle.get_text() == "T"


def test_size_curves_are_the_average_over_languages_per_method(table, tmp_path):
    fig = PLOTS["monox-accuracy-vs-size"](table, tmp_path / "s.png")
    ax = fig.axes[0]
    curves = {line.get_label(): (list(line.get_xdata()), list(line.get_ydata())) for line in ax.lines}
    # kd at the headline temperature only; the teacher has no average over languages
    assert list(curves) == ["finetune", "self_train", "pl", "kd"]
    for mode, (x, y) in curves.items():
        t = 0.1 if mode == "kd" else None
        assert x == [10, 200]  # the train_examples records, not the size labels
        assert y == pytest.approx([mean_avg(mode, 10, t), mean_avg(mode, "all", t)])
    assert [t.get_text() for t in ax.get_xticklabels()] == ["10", "200"] and ax.get_xscale() == "log"


def test_temperature_curve_is_kd_with_the_other_methods_as_references(table, tmp_path):
    fig = PLOTS["monox-accuracy-vs-temperature"](table, tmp_path / "t.png")
    ax = fig.axes[0]
    (kd,) = ax.containers  # one errorbar curve
    line = kd.lines[0]
    assert list(line.get_xdata()) == [0.01, 0.1, 10.0]
    assert list(line.get_ydata()) == pytest.approx([mean_avg("kd", "all", t) for t in (0.01, 0.1, 10.0)])
    references = {ln.get_label(): ln.get_ydata()[0] for ln in ax.lines if ln.get_linestyle() == "--"}
    assert references == pytest.approx({mode: mean_avg(mode, "all", None) for mode in ("finetune", "self_train", "pl")})
    assert [t.get_text() for t in ax.get_xticklabels()] == ["0.01", "0.1", "10"]


def test_several_students_and_teachers_get_method_labels(table):
    from xlt.families.monox.plots import with_methods

    more = table.copy()
    extra = more[more["mode"] == "kd"].copy()
    extra["teacher"] = "mono2"
    labels = set(with_methods(pd.concat([more, extra]))["method"])
    assert {"kd <- mono", "kd <- mono2", "finetune", "teacher <- mono"} <= labels


@pytest.mark.parametrize("name, demo", [("config.yaml", True), ("config/paper.yaml", False)])
def test_caption_renders_the_settings_of_each_shipped_config(name, demo):
    from pathlib import Path
    from types import SimpleNamespace

    import jinja2
    import yaml

    from xlt.core.settings import validate

    root = Path(__file__).resolve().parents[3]
    config = validate(yaml.safe_load((root / name).read_text()))  # the caption reads the validated settings
    text = jinja2.Template((root / "src" / "xlt" / "families" / "monox" / "caption.rst").read_text()).render(
        snakemake=SimpleNamespace(config=config)
    )
    first = config["monox"]["tasks"][0]
    assert f"Training on ``{first['dataset']}``: students" in text
    assert f"KD temperatures {', '.join(map(str, first['temperatures']))}" in text
    assert ("not about mBERT or real languages" in text) == demo
    if demo:  # the task's overrides for the students, teacher_training on top for the teacher
        assert (
            "Teacher(s): demo-teacher;" in text
            and "(gold data + the teacher's argmax labels on the pool with max probability >= 0.0" in text
        )
        students, teacher = text.split("Training on ``demo-sentiment``: students ")[1].split("\nteacher ")
        assert "batch_size=16," in students and "max_steps=200," in students and "lr=0.0005," in students
        assert "batch_size=32," in teacher and "max_steps=200," in teacher and "lr=0.002," in teacher
        assert "warmup_ratio=0.3" in students and "warmup_ratio=0.3" in teacher
    else:
        assert "lr=5e-06" in text and "batch_size=8" in text and "Teacher(s): roberta-large" in text


def with_intervals(table):
    """Every accuracy record's bounds: 0.02 below and 0.01 above its value; other records have none."""
    accuracy = table.metric == "accuracy"
    return table.assign(
        ci_low=np.where(accuracy, table.value - 0.02, np.nan), ci_high=np.where(accuracy, table.value + 0.01, np.nan)
    )


def band_extents(ax):
    return sorted(
        tuple(b.get_paths()[0].get_extents().get_points()[:, 1]) for b in ax.collections if b.get_label() == "_interval"
    )


def test_size_curves_shade_the_bootstrap_interval(table, tmp_path):
    ax = PLOTS["monox-accuracy-vs-size"](with_intervals(table), tmp_path / "s.png").axes[0]
    expected = sorted(
        (min(points) - 2, max(points) + 1)
        for points in (
            [mean_avg(mode, size, 0.1 if mode == "kd" else None) for size in (10, "all")]
            for mode in ("finetune", "self_train", "pl", "kd")
        )
    )
    np.testing.assert_allclose(band_extents(ax), expected)


def test_temperature_curve_and_references_shade_the_bootstrap_interval(table, tmp_path):
    ax = PLOTS["monox-accuracy-vs-temperature"](with_intervals(table), tmp_path / "t.png").axes[0]
    kd = [mean_avg("kd", "all", t) for t in (0.01, 0.1, 10.0)]
    np.testing.assert_allclose(band_extents(ax), [(min(kd) - 2, max(kd) + 1)])
    spans = sorted(
        p.get_path().transformed(p.get_patch_transform()).get_extents().y0
        for p in ax.patches
        if p.get_label() == "_interval"
    )
    assert spans == pytest.approx(sorted(mean_avg(mode, "all", None) - 2 for mode in ("finetune", "self_train", "pl")))


@pytest.mark.parametrize("kind", ["monox-accuracy-vs-size", "monox-accuracy-vs-temperature"])
def test_curves_without_intervals_draw_as_before(table, tmp_path, kind):
    assert "ci_low" not in table.columns  # aggregated without examples files: no interval columns
    for frame in (table, table.assign(ci_low=np.nan, ci_high=np.nan)):
        ax = PLOTS[kind](frame, tmp_path / "c.png").axes[0]
        assert not [a for a in [*ax.collections, *ax.patches] if a.get_label() == "_interval"]


def cell_texts(ax):
    rows = [t.get_text() for t in ax.get_yticklabels()]
    columns = [t.get_text() for t in ax.get_xticklabels()]
    return {(rows[int(t.get_position()[1])], columns[int(t.get_position()[0])]): t.get_text() for t in ax.texts}


def test_heatmap_cells_carry_half_the_interval_where_the_records_have_one(table, tmp_path):
    bounded = with_intervals(table)
    # one seed's kd record in de without an upper bound: that cell says its value only
    kd_de = (
        (bounded["mode"] == "kd")
        & (bounded.lang == "de")
        & bounded.headline
        & (bounded.seed == 2)
        & (bounded.metric == "accuracy")
        & (bounded.split == "test")
    )
    assert kd_de.sum() == 1
    bounded.loc[kd_de, "ci_high"] = np.nan
    cells = cell_texts(PLOTS["monox-accuracy-heatmap"](bounded, tmp_path / "h.png").axes[0])
    plain = cell_texts(PLOTS["monox-accuracy-heatmap"](table, tmp_path / "p.png").axes[0])
    assert set(cells) == set(plain) and ("teacher", "de") not in cells
    for key, text in cells.items():
        # bounds 2 points below and 1 above every value: half of 3 points
        assert text == (plain[key] if key == ("kd", "de") else f"{plain[key]}\n±1.5"), key


def test_the_paper_table_reads_mean_sd_and_interval(table):
    from xlt.families.monox.plots import accuracy_spread

    bounded = with_intervals(table)
    grid, spread = accuracy_table(bounded), accuracy_spread(bounded)
    seeds = [100 * accuracy_of("kd", "all", 0.1, s, "de") for s in (1, 2)]
    mean, sd = np.mean(seeds), np.std(seeds, ddof=1)
    kd_de = f"{mean:.2f} ± {sd:.2f} [{mean - 2:.2f}, {mean + 1:.2f}]"
    md = table_markdown(grid, spread=spread)
    assert f"| kd | 2 | {kd_de} |" in md
    assert f"<td>{kd_de}</td>" in table_html(grid, "title", spread=spread)
    # without interval columns: mean ± sd; one seed: the interval alone; neither: the mean alone
    assert f"| kd | 2 | {mean:.2f} ± {sd:.2f} |" in table_markdown(accuracy_table(table), spread=accuracy_spread(table))
    one = bounded[bounded.seed != 2]
    md = table_markdown(accuracy_table(one), spread=accuracy_spread(one))
    assert "±" not in md and f"| kd | 1 | {seeds[0]:.2f} [{seeds[0] - 2:.2f}, {seeds[0] + 1:.2f}] |" in md
    assert table_markdown(grid) == table_markdown(grid, spread=None) and "±" not in table_markdown(grid)
