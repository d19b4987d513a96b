"""Freeze-depth figures: zero-shot accuracy against the number of frozen layers."""
from __future__ import annotations

from pathlib import Path

from xlt.report.figures import heatmap, save  # first: it selects the headless backend
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402


def _depth_labels(depths) -> list[str]:
    return ["none" if d == -1 else str(d) for d in depths]


def accuracy_vs_depth(table: pd.DataFrame, out: str | Path, title: str = ""):
    """Zero-shot accuracy against freeze depth: one line per language, the average in bold;
    mean over seeds with a band of +- one standard deviation."""
    acc = table[(table.metric == "accuracy")]
    fig, ax = plt.subplots(figsize=(8, 5))
    for lang, group in acc.groupby("lang"):
        by_depth = group.groupby("freeze_depth")["value"].agg(["mean", "std"]).fillna(0.0)
        bold = lang == "avg"
        ax.plot(by_depth.index, by_depth["mean"], marker="o", lw=3 if bold else 1.2, color="black" if bold else None,
                label="average" if bold else lang, zorder=3 if bold else 2)
        ax.fill_between(by_depth.index, by_depth["mean"] - by_depth["std"], by_depth["mean"] + by_depth["std"], alpha=0.15)
    depths = sorted(acc.freeze_depth.unique())
    ax.set_xticks(depths, _depth_labels(depths))
    ax.set_xlabel("frozen layers (none = nothing frozen, 0 = embeddings only)")
    ax.set_ylabel("accuracy")
    ax.set_title(title or "Zero-shot accuracy vs freeze depth")
    ax.legend(ncol=2, fontsize=8)
    ax.grid(alpha=0.3)
    return save(fig, out)


def accuracy_heatmap(table: pd.DataFrame, out: str | Path, title: str = ""):
    """Language x freeze depth heatmap of accuracy (mean over seeds)."""
    acc = table[(table.metric == "accuracy")]
    grid = acc.pivot_table(index="lang", columns="freeze_depth", values="value", aggfunc="mean")
    order = [lang for lang in grid.index if lang != "avg"] + (["avg"] if "avg" in grid.index else [])
    grid = grid.loc[order]
    grid.columns = _depth_labels(grid.columns)
    return heatmap(grid, out, title=title or "Zero-shot accuracy by language and freeze depth", xlabel="frozen layers",
            ylabel="language", cbar_label="accuracy", fmt=".2f", cell=(0.6, 0.45), margin=(1.0, 1.0))


PLOTS = {
    "accuracy-vs-depth": accuracy_vs_depth,
    "accuracy-heatmap": accuracy_heatmap,
}
