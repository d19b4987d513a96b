"""Figures of the dual-encoder family (Tatoeba error vs margin / scale, error per language,
mining P/R/F1) and the alignment family's accuracy-vs-layer comparison of models.

Each function reads the tidy table of `xlt aggregate`, writes one PNG and returns the figure.
Baseline rows (the untrained encoder, `trained` false; `dual.baselines`) are the dashed
reference lines of the error curves and their own rows of the heatmap.
"""

from __future__ import annotations

import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

from xlt.core.errors import XltError  # noqa: E402
from xlt.families.dual.objective_plot import objectives as draw_objectives  # noqa: E402
from xlt.families.dual.run_labels import DUAL_AXES, baseline_labels, run_labels, split_baselines  # noqa: E402
from xlt.report.figures import (
    halfwidth_grid,
    heatmap,
    interval_band,
    mean_intervals,
    reference_span,
    save,
)  # first: it selects the headless backend

ADDITIVE = "additive_margin"  # the objective whose runs have a margin and a scale
DIRECTIONS = ("xx->en", "en->xx")


def _rows(table: pd.DataFrame, metric: str, what: str) -> pd.DataFrame:
    rows = table[table.metric == metric]
    if rows.empty:
        raise XltError(f"the table has no {metric!r} records; {what}")
    return rows


def _error_vs(table: pd.DataFrame, out, x: str, title: str):
    """Tatoeba error (mean over languages; mean +- std over seeds) against axis `x`, one line
    per combination of the other axes, one panel per direction; where the table has them, a
    band (a grey span for the untrained line) shows the 95 % bootstrap interval."""
    err, untrained = split_baselines(_rows(table, "error", "run the Tatoeba evaluation (tatoeba_dual) first"))
    if "objective" in err.columns:  # margin and scale are the additive-margin runs' axes (dual-objectives: the rest)
        err = err[err["objective"].isna() | (err["objective"] == ADDITIVE)]
    err = err.drop(columns=["objective"], errors="ignore").copy()
    err["line"] = run_labels(err, skip=(x,))
    if not untrained.empty:
        err["line"] = err["line"].replace("all runs", "trained")  # beside the untrained line
    per_run = err.groupby(["run_id", "line", x, "seed", "direction"], dropna=False)["value"].mean().reset_index()
    untrained = untrained.assign(line=baseline_labels(untrained))
    fig, axes = plt.subplots(1, len(DIRECTIONS), figsize=(11, 4.2), sharey=True, squeeze=False)
    for ax, direction in zip(axes[0], DIRECTIONS):
        part = per_run[per_run.direction == direction]
        for line, group in part.groupby("line"):
            stats = group.groupby(x)["value"].agg(["mean", "std"]).fillna(0.0).sort_index()
            drawn = ax.errorbar(
                stats.index, 100 * stats["mean"], yerr=100 * stats["std"], marker="o", capsize=3, label=line
            )
            rows = err[(err.direction == direction) & (err.line == line)]
            intervals = mean_intervals(rows, x)
            if intervals is not None:
                intervals = intervals.reindex(stats.index)
                interval_band(
                    ax, stats.index, intervals.ci_low, intervals.ci_high, color=drawn.lines[0].get_color(), scale=100
                )
        # the untrained encoder: a dashed line at its error (mean over languages)
        for line, group in untrained[untrained.direction == direction].groupby("line"):
            ax.axhline(100 * group["value"].mean(), linestyle="--", color="0.45", label=line)
            reference_span(ax, group, color="0.45", scale=100)
        ax.set_title(f"{direction}")
        ax.set_xlabel(x)
        ax.set_xticks(sorted(part[x].unique()))
        ax.set_ylabel("retrieval error % (mean over languages)")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    fig.suptitle(title)
    return save(fig, out)


def error_vs_margin(table: pd.DataFrame, out, title: str = ""):
    return _error_vs(table, out, "margin", title or "Tatoeba retrieval error vs additive margin")


def error_vs_scale(table: pd.DataFrame, out, title: str = ""):
    return _error_vs(table, out, "scale", title or "Tatoeba retrieval error vs scale")


def tatoeba_heatmap(table: pd.DataFrame, out, title: str = ""):
    """Error % per run (rows) and language x direction (columns), mean over seeds; the untrained
    baselines are the last rows."""
    trained, untrained = split_baselines(_rows(table, "error", "run the Tatoeba evaluation (tatoeba_dual) first"))
    labels = run_labels(trained, axes=DUAL_AXES)
    if not untrained.empty and set(labels) == {"all runs"}:
        labels[:] = "trained"  # beside the untrained row
    err = pd.concat([trained.assign(run=labels), untrained.assign(run=baseline_labels(untrained))])
    err["column"] = err["lang"].astype(str) + " " + err["direction"].astype(str)
    grid = 100 * err.pivot_table(index="run", columns="column", values="value", aggfunc="mean")
    order = sorted(set(labels)) + sorted(set(err["run"]) - set(labels))  # trained runs first, baselines last
    grid = grid.reindex([run for run in order if run in grid.index])
    grid["mean"] = grid.mean(axis=1)  # no interval: the directions' errors are not independent
    return heatmap(
        grid,
        out,
        title=title or "Tatoeba retrieval error % per language and direction",
        xlabel="language, direction",
        cbar_label="error %",
        cmap="viridis_r",
        cell=(0.9, 0.5),
        margin=(1.5, 1.6),
        min_width=6.5,
        halfwidth=halfwidth_grid(err, "run", "column", scale=100),
    )


def mining_table(table: pd.DataFrame, out, title: str = ""):
    """Precision, recall and F1 (%) on the test split per run and language pair, as an annotated table;
    a cell with a bootstrap interval (resampled source sentences) also says ± half its width."""
    rows = table[table.metric.isin(["precision", "recall", "f1"]) & (table.split == "test")].copy()
    if rows.empty:
        raise XltError("the table has no mining records (precision/recall/f1 on the test split); run `mine` first")
    rows["run"] = run_labels(rows, axes=DUAL_AXES)
    rows["column"] = rows["lang"].astype(str) + " " + rows["metric"].map({"precision": "P", "recall": "R", "f1": "F1"})
    order = [f"{lang} {m}" for lang in sorted(rows["lang"].astype(str).unique()) for m in ("P", "R", "F1")]
    grid = 100 * rows.pivot_table(index="run", columns="column", values="value", aggfunc="mean")[order]
    return heatmap(
        grid,
        out,
        title=title or "BUCC-style mining: precision / recall / F1 %",
        xlabel="source language: score on the test split (threshold tuned on the tuning split)",
        cbar_label="%",
        cell=(0.7, 0.5),
        margin=(1.5, 1.4),
        min_width=6.5,
        vmin=0,
        vmax=100,
        halfwidth=halfwidth_grid(rows, "run", "column", scale=100),
    )


def objectives(table: pd.DataFrame, out, title: str = ""):
    """xlt.families.dual.objective_plot.objectives: error and STS per language by objective."""
    return draw_objectives(table, out, title)


PLOTS = {
    "dual-error-vs-margin": error_vs_margin,
    "dual-error-vs-scale": error_vs_scale,
    "dual-tatoeba-heatmap": tatoeba_heatmap,
    "dual-mining": mining_table,
    "dual-objectives": objectives,
}
