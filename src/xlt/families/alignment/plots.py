"""Pictures of the per-layer alignment analysis.

`alignment-by-layer` (in PLOTS, drawn by `xlt plot` from the aggregated table) compares the
analysed models; `cosine_gap_by_layer` (drawn by `xlt align-gap-plot`, one figure per analysed
model) shows one model's cosine gap per language. Each `xlt align` job also draws its own
run's accuracy-vs-layer lines and 2-D scatter grids; those are drawn on matplotlib's Agg canvas
through
`matplotlib.figure.Figure` (no pyplot state) and written atomically as PNG. Every function
returns the figure, whose axes still hold what was drawn.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Mapping, Sequence

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from matplotlib.backends.backend_agg import FigureCanvasAgg  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from xlt.core.errors import XltError  # noqa: E402
from xlt.core.io import atomic_path  # noqa: E402
from xlt.evaluate.alignment import CENTERED_SUFFIX, RETRIEVAL_METRIC, Projection  # noqa: E402
from xlt.evaluate.cosine_gap import GAP_METRIC  # noqa: E402
from xlt.report.figures import interval_band, mean_intervals, save  # first: it selects the headless backend

LINESTYLES = ("-", "--", ":", "-.")
MAX_PAIR_LINES = 400  # more translation links than this turn a scatter into a grey blur


def retrieval_series(
    records: Sequence[dict] | Mapping[str, Sequence[dict]], metrics: Sequence[str] | None = None
) -> dict[tuple[str, str, str, str], tuple[list[int], list[float]]]:
    """Group retrieval records into lines keyed by (model, metric, lang, direction).

    `records` is one run's records, or {model label: records} to compare models (model
    is "" for a single run). Only records of `metrics` (default: every metric starting
    with "bitext_retrieval_acc") that carry a layer are used; points are sorted by layer.
    """
    by_model = records if isinstance(records, Mapping) else {"": records}
    series: dict[tuple[str, str, str, str], dict[int, float]] = {}
    for model, recs in by_model.items():
        for rec in recs:
            metric = rec.get("metric", "")
            wanted = metric in metrics if metrics is not None else metric.startswith(RETRIEVAL_METRIC)
            if not wanted or "layer" not in rec:
                continue
            key = (model, metric, str(rec.get("lang", "")), str(rec.get("direction", "")))
            series.setdefault(key, {})[int(rec["layer"])] = float(rec["value"])
    return {
        key: (sorted(points), [points[layer] for layer in sorted(points)]) for key, points in sorted(series.items())
    }


def _save(fig: Figure, path: str | os.PathLike) -> Figure:
    FigureCanvasAgg(fig)
    with atomic_path(path) as tmp:
        fig.savefig(tmp, format="png", dpi=120, bbox_inches="tight")
    return fig


def plot_retrieval_by_layer(
    records: Sequence[dict] | Mapping[str, Sequence[dict]],
    path: str | os.PathLike,
    metrics: Sequence[str] | None = None,
    title: str | None = None,
) -> Figure:
    """Line plot of retrieval accuracy against hidden-state index.

    One colour per (language, direction); one line style per (model, metric) variant, so
    raw and centred accuracy, or several models, can share the axes.
    """
    series = retrieval_series(records, metrics)
    if not series:
        raise ValueError("no per-layer retrieval records to plot")
    pairs = sorted({(lang, direction) for _, _, lang, direction in series})
    variants = sorted({(model, metric) for model, metric, _, _ in series})
    colours = {pair: f"C{i % 10}" for i, pair in enumerate(pairs)}
    styles = {variant: LINESTYLES[i % len(LINESTYLES)] for i, variant in enumerate(variants)}

    fig = Figure(figsize=(7, 4.5))
    ax = fig.add_subplot(1, 1, 1)
    all_layers: set[int] = set()
    for (model, metric, lang, direction), (layers, values) in series.items():
        parts = [
            p
            for p in (
                model if len({m for m, _ in variants}) > 1 else "",
                metric.replace(RETRIEVAL_METRIC, "").strip("_") or ("raw" if len(variants) > 1 else ""),
                lang,
                direction,
            )
            if p
        ]
        ax.plot(
            layers,
            values,
            linestyle=styles[(model, metric)],
            color=colours[(lang, direction)],
            marker="o",
            markersize=3,
            label=" ".join(parts),
        )
        all_layers.update(layers)
    ax.set_xlabel("hidden-state index (0 = embeddings)")
    ax.set_ylabel("bitext retrieval accuracy")
    ax.set_ylim(-0.02, 1.02)
    ax.set_xticks(sorted(all_layers))
    ax.grid(alpha=0.3)
    if len(series) > 6:  # many lines: keep the legend off the data
        ax.legend(fontsize="small", loc="center left", bbox_to_anchor=(1.01, 0.5))
    else:
        ax.legend(fontsize="small", loc="best")
    ax.set_title(title or "Cross-lingual retrieval accuracy by layer")
    return _save(fig, path)


def plot_projection_grid(
    projections: Sequence[Projection],
    path: str | os.PathLike,
    ncols: int = 3,
    connect_pairs: bool = True,
    title: str | None = None,
) -> Figure:
    """One scatter panel per layer, points coloured by language; translations joined by thin lines."""
    if not projections:
        raise ValueError("no projections to plot")
    ncols = max(1, min(ncols, len(projections)))
    nrows = -(-len(projections) // ncols)
    fig = Figure(figsize=(4 * ncols, 4 * nrows))
    langs = sorted({lang for p in projections for lang in p.langs})
    colours = {lang: f"C{i % 10}" for i, lang in enumerate(langs)}
    for panel, projection in enumerate(projections):
        ax = fig.add_subplot(nrows, ncols, panel + 1)
        langs_arr, source = np.asarray(projection.langs), np.asarray(projection.source)
        if connect_pairs and len(projection.pair) // 2 <= MAX_PAIR_LINES:
            for src in np.unique(source):
                side = (source == src) & (langs_arr == src)
                other = (source == src) & (langs_arr != src)
                position = {pair: i for i, pair in zip(np.flatnonzero(other), projection.pair[other])}
                for i, pair in zip(np.flatnonzero(side), projection.pair[side]):
                    j = position.get(pair)
                    if j is not None:
                        ax.plot(*zip(projection.coords[i], projection.coords[j]), color="0.75", linewidth=0.5, zorder=1)
        for lang in langs:
            mask = langs_arr == lang
            if mask.any():
                ax.scatter(
                    projection.coords[mask, 0],
                    projection.coords[mask, 1],
                    s=8,
                    color=colours[lang],
                    label=lang,
                    zorder=2,
                )
        ax.set_title(f"layer {projection.layer} ({projection.method})")
        ax.set_xticks([])
        ax.set_yticks([])
    handles, labels = fig.axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="upper right", fontsize="small")
    fig.suptitle(title or "Parallel sentences by layer, coloured by language")
    return _save(fig, path)


def alignment_by_layer(table: pd.DataFrame, out: str | Path, title: str = ""):
    """Retrieval accuracy against hidden-state index, one line per analysed model (mean over
    languages and both directions); a second panel with per-language mean-centring if present;
    where the table has them, bands of the 95 % bootstrap interval."""
    acc = table[table.metric.astype(str).str.startswith(RETRIEVAL_METRIC)]
    if acc.empty:
        raise XltError(f"the table has no {RETRIEVAL_METRIC} records; run `align_layers` first")
    metrics = sorted(acc.metric.unique())
    fig, axes = plt.subplots(1, len(metrics), figsize=(6.5 * len(metrics), 4.5), sharey=True, squeeze=False)
    # the y range follows the data (low accuracies stay readable) but always starts at 0
    top = min(1.02, max(0.1, 1.15 * float(acc.groupby(["run_id", "metric", "layer"])["value"].mean().max())))
    for ax, metric in zip(axes[0], metrics):
        part = acc[acc.metric == metric]
        means = part.groupby(["run_id", "layer"])["value"].mean().reset_index()
        intervals = mean_intervals(part, ["run_id", "layer"])
        if intervals is not None:
            means = means.join(intervals, on=["run_id", "layer"])
        for run_id, group in means.groupby("run_id"):
            (line,) = ax.plot(group.layer, group.value, marker="o", markersize=3, label=run_id)
            if intervals is not None:
                interval_band(ax, group.layer, group.ci_low, group.ci_high, color=line.get_color())
        ax.set_title("mean-centred per language" if metric.endswith("_centered") else "raw")
        ax.set_xlabel("hidden-state index (0 = embeddings)")
        ax.set_ylabel("retrieval accuracy (mean over languages, both directions)")
        ax.set_ylim(0, top)
        ax.set_xticks(sorted(int(layer) for layer in means.layer.unique()))
        ax.grid(alpha=0.3)
    axes[0][-1].legend(fontsize=7, loc="center left", bbox_to_anchor=(1.01, 0.5))
    fig.suptitle(title or "Cross-lingual retrieval accuracy by layer, per model")
    return save(fig, out, bbox_inches="tight")  # the legend sits outside the axes


def cosine_gap_by_layer(table: pd.DataFrame, out: str | Path, run_id: str, title: str = ""):
    """One analysed model's cosine gap (translation minus random-pair mean cosine) against
    hidden-state index: a line per language, a panel each for raw and (if present) mean-centred
    vectors, bands of the records' own 95 % bootstrap intervals over pairs where the table has them.

    Not in PLOTS: `xlt plot KIND` draws one figure from a whole table, this one is per run
    (`xlt align-gap-plot`)."""
    rows = table[(table.run_id.astype(str) == run_id) & table.metric.astype(str).str.startswith(GAP_METRIC)]
    if rows.empty:
        raise XltError(
            f"the table has no {GAP_METRIC} records of run {run_id!r}; run `align_layers` "
            f"and `aggregate_alignment` first"
        )
    metrics = sorted(rows.metric.unique())  # cosine_gap, then cosine_gap_centered
    fig, axes = plt.subplots(1, len(metrics), figsize=(6.5 * len(metrics), 4.5), squeeze=False)
    has_bounds = {"ci_low", "ci_high"} <= set(rows.columns)
    langs = sorted(rows.lang.astype(str).unique())
    colours = {lang: f"C{i % 10}" for i, lang in enumerate(langs)}  # a language keeps its colour in both panels
    for ax, metric in zip(axes[0], metrics):
        part = rows[rows.metric == metric].sort_values("layer")
        for lang, group in part.groupby(part.lang.astype(str)):
            ax.plot(group.layer, group.value, marker="o", markersize=3, color=colours[lang], label=lang)
            if has_bounds:
                interval_band(ax, group.layer, group.ci_low, group.ci_high, color=colours[lang])
        ax.axhline(0.0, color="0.5", linewidth=0.8, zorder=0)  # translations no closer than random pairs
        ax.set_title("mean-centred per language" if metric.endswith(CENTERED_SUFFIX) else "raw")
        ax.set_xlabel("hidden-state index (0 = embeddings)")
        ax.set_ylabel("cosine gap (translation - random pair)")
        ax.set_xticks(sorted(int(layer) for layer in part.layer.unique()))
        ax.grid(alpha=0.3)
    axes[0][-1].legend(fontsize="small", loc="center left", bbox_to_anchor=(1.01, 0.5))
    fig.suptitle(title or f"{run_id}: cosine gap of translations by layer")
    return save(fig, out, bbox_inches="tight")  # the legend sits outside the axes


PLOTS = {"alignment-by-layer": alignment_by_layer}
