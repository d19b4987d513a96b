"""What every report figure shares: the headless backend, one way to save, the annotated heatmap."""
from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # no display on cluster nodes or CI
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402
import seaborn as sns  # noqa: E402


def save(fig, out: str | Path, *, tight: bool = True, **savefig_kw):
    """Write `fig` as a 120-dpi PNG and close it (a sweep draws hundreds of figures in one
    process). Returns the figure: its axes still hold what was drawn, for tests to read."""
    if tight:
        fig.tight_layout()
    fig.savefig(out, dpi=120, format="png", **savefig_kw)
    plt.close(fig)
    return fig


def heatmap(grid: pd.DataFrame, out: str | Path, *, title: str, xlabel: str, ylabel: str = "",
            cbar_label: str, fmt: str = ".1f", cmap: str = "viridis", cell: tuple[float, float] = (0.75, 0.45),
            margin: tuple[float, float] = (1.2, 1.2), min_width: float = 0.0, **heatmap_kw):
    """An annotated heatmap of `grid` (rows x columns), sized to its cells: width = margin +
    cell width x columns (at least `min_width`), height = margin + cell height x rows."""
    width = max(min_width, margin[0] + cell[0] * grid.shape[1])
    fig, ax = plt.subplots(figsize=(width, margin[1] + cell[1] * grid.shape[0]))
    sns.heatmap(grid, annot=True, fmt=fmt, cmap=cmap, ax=ax, cbar_kws={"label": cbar_label}, **heatmap_kw)
    ax.tick_params(axis="y", labelrotation=0)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    return save(fig, out)
