"""Freeze-depth figures: zero-shot accuracy against the number of frozen layers."""

from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

from xlt.report.figures import (
    halfwidth_grid,
    heatmap,
    interval_band,
    mean_intervals,
    save,
    single_value_note,
)  # first: it selects the headless backend


def _depth_labels(depths) -> list[str]:
    return ["none" if d == -1 else str(d) for d in depths]


def _panels(acc: pd.DataFrame) -> list[tuple[str, pd.DataFrame]]:
    """One (label, rows) per warm-up ratio when that axis is swept, else one for the table."""
    if "warmup_ratio" in acc and acc["warmup_ratio"].nunique() > 1:
        return [(f"warm-up ratio {ratio:g}", rows) for ratio, rows in acc.groupby("warmup_ratio")]
    return [("", acc)]


def accuracy_vs_depth(table: pd.DataFrame, out: str | Path, title: str = ""):
    """Zero-shot accuracy against freeze depth: one line per language, the average in bold;
    mean over seeds with a band of +- one standard deviation and, where the table has them, a
    darker band of the 95 % bootstrap interval; one panel per swept warm-up ratio."""
    acc = table[(table.metric == "accuracy")]
    panels = _panels(acc)
    fig, axes = plt.subplots(1, len(panels), figsize=(8 * len(panels), 5), squeeze=False, sharey=True)
    for ax, (label, rows) in zip(axes[0], panels):
        _depth_lines(ax, rows, " - ".join(filter(None, [title or "Zero-shot accuracy vs freeze depth", label])))
    return save(fig, out)


def _depth_lines(ax, acc: pd.DataFrame, title: str) -> None:
    for lang, group in acc.groupby("lang"):
        by_depth = group.groupby("freeze_depth")["value"].agg(["mean", "std"]).fillna(0.0)
        bold = lang == "avg"
        (line,) = ax.plot(
            by_depth.index,
            by_depth["mean"],
            marker="o",
            lw=3 if bold else 1.2,
            color="black" if bold else None,
            label="average" if bold else lang,
            zorder=3 if bold else 2,
        )
        ax.fill_between(
            by_depth.index, by_depth["mean"] - by_depth["std"], by_depth["mean"] + by_depth["std"], alpha=0.15
        )
        intervals = mean_intervals(group, "freeze_depth")
        if intervals is not None:
            intervals = intervals.reindex(by_depth.index)
            interval_band(ax, by_depth.index, intervals.ci_low, intervals.ci_high, color=line.get_color())
    depths = sorted(acc.freeze_depth.unique())
    ax.set_xticks(depths, _depth_labels(depths))
    if len(depths) == 1:
        single_value_note(ax, "freeze depth", _depth_labels(depths)[0])
    ax.set_xlabel("frozen layers (none = nothing frozen, 0 = embeddings only)")
    ax.set_ylabel("accuracy")
    ax.set_title(title)
    ax.legend(ncol=2, fontsize=8)
    ax.grid(alpha=0.3)


def accuracy_heatmap(table: pd.DataFrame, out: str | Path, title: str = ""):
    """Language x freeze depth heatmap of accuracy (mean over seeds); rows per language and
    swept warm-up ratio."""
    acc = table[(table.metric == "accuracy")]
    grids, halves = [], []
    for label, rows in _panels(acc):
        grid = rows.pivot_table(index="lang", columns="freeze_depth", values="value", aggfunc="mean")
        grid = grid.loc[[lang for lang in grid.index if lang != "avg"] + (["avg"] if "avg" in grid.index else [])]
        names = [f"{lang} ({label})" if label else lang for lang in grid.index]
        half = halfwidth_grid(rows, "lang", "freeze_depth")
        if half is not None:
            halves.append(half.reindex(index=grid.index, columns=grid.columns).set_axis(names))
        grids.append(grid.set_axis(names))
    grid = pd.concat(grids)
    half = pd.concat(halves) if len(halves) == len(grids) else None
    grid.columns = _depth_labels(grid.columns)
    if half is not None:
        half.columns = grid.columns
    return heatmap(
        grid,
        out,
        title=title or "Zero-shot accuracy by language and freeze depth",
        xlabel="frozen layers",
        ylabel="language",
        cbar_label="accuracy",
        fmt=".2f",
        cell=(0.6, 0.45),
        margin=(1.0, 1.0),
        halfwidth=half,
    )


PLOTS = {"accuracy-vs-depth": accuracy_vs_depth, "accuracy-heatmap": accuracy_heatmap}
