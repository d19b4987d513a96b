"""What every report figure shares: the headless backend, one way to save, the annotated heatmap,
the 95 % bootstrap intervals (ci_low / ci_high) of plotted points as error bars, bands or ± in
heatmap cells, and the seed spread of points that average several seeds (a dot per seed, ± one
between-seed sd)."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # no display on cluster nodes or CI
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
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


INTERVAL_COLUMNS = ["ci_low", "ci_high"]


def single_value_note(ax, what: str, value) -> None:
    """Says on the axes that the sweep has one value of what the figure compares (a line
    against an axis of one point): a small sweep draws, and the reader sees why it is flat."""
    ax.text(
        0.5,
        0.97,
        f"a single {what} ({value}): nothing to compare it with",
        transform=ax.transAxes,
        ha="center",
        va="top",
        fontsize=9,
        color="0.3",
    )


def mean_intervals(rows: pd.DataFrame, by) -> pd.DataFrame | None:
    """ci_low and ci_high of every point that averages the rows of one group of `by` (over
    seeds, languages, directions): the mean of its records' bounds, NaN when any record lacks
    one. None when the table has no interval columns (older tables).

    Averaging the bounds is exact when the averaged records move together under resampling
    (seeds scored on the same test examples) and errs wide for independent sets (languages)."""
    if not set(INTERVAL_COLUMNS) <= set(rows.columns):
        return None
    bounds = rows[INTERVAL_COLUMNS].astype(float)
    keys = [rows[key] for key in ([by] if isinstance(by, str) else by)]
    means = bounds.groupby(keys, dropna=False).mean()
    incomplete = bounds.isna().any(axis=1).groupby(keys, dropna=False).any()
    means.loc[incomplete.to_numpy()] = np.nan
    return means


def _has_bounds(low, high) -> bool:
    return (
        low is not None
        and high is not None
        and bool(np.isfinite(np.asarray(high, dtype=float) - np.asarray(low, dtype=float)).any())
    )


def error_lengths(center, low, high, scale: float = 1.0) -> np.ndarray | None:
    """`yerr` for errorbar / bar: the (2, n) distances from each point down to its lower and up
    to its upper bound, times `scale`; NaN (no bar) where a point has no interval. None when
    no point has one, so the caller draws exactly what it drew before intervals existed."""
    if not _has_bounds(low, high):
        return None
    center, low, high = (np.asarray(v, dtype=float) for v in (center, low, high))
    # a percentile interval need not contain the point (a mean of seeds); never a negative bar
    return scale * np.vstack([np.maximum(center - low, 0.0), np.maximum(high - center, 0.0)])


def interval_band(ax, x, low, high, *, color, scale: float = 1.0):
    """Shade a line's interval from `low` to `high` (times `scale`) in the line's colour; returns
    the PolyCollection, or None (nothing drawn) when no point has an interval."""
    if not _has_bounds(low, high):
        return None
    return ax.fill_between(
        np.asarray(x),
        scale * np.asarray(low, dtype=float),
        scale * np.asarray(high, dtype=float),
        color=color,
        alpha=0.2,
        lw=0,
        label="_interval",
    )


def reference_span(ax, rows: pd.DataFrame, *, color, scale: float = 1.0):
    """Shade the interval of a horizontal reference line drawn at the mean of `rows` (the mean of
    their bounds, times `scale`); returns the patch, or None (nothing drawn) when a row lacks one."""
    bounds = mean_intervals(rows.assign(_reference=0), "_reference")
    if bounds is None or bounds.isna().any(axis=None):
        return None
    return ax.axhspan(
        scale * bounds.ci_low.iloc[0], scale * bounds.ci_high.iloc[0], color=color, alpha=0.15, lw=0, label="_interval"
    )


def halfwidth_grid(rows: pd.DataFrame, index, columns, scale: float = 1.0) -> pd.DataFrame | None:
    """Half the width of each heatmap cell's interval, times `scale`: the cell averages its rows'
    bounds as `mean_intervals` does, so NaN when any of them lacks one. None without interval columns."""
    if not set(INTERVAL_COLUMNS) <= set(rows.columns):
        return None
    half = scale * (rows["ci_high"].astype(float) - rows["ci_low"].astype(float)) / 2
    return rows.assign(_half=half).pivot_table(
        index=index, columns=columns, values="_half", dropna=False, aggfunc=complete_mean
    )


def complete_mean(values: pd.Series) -> float:
    """The mean of a cell's interval numbers, NaN when any record lacks one (as `mean_intervals`)."""
    return values.mean() if values.notna().all() else np.nan


def seed_spread(rows: pd.DataFrame, by) -> pd.DataFrame | None:
    """Per point that averages the rows of one group of `by`: the value of each of its seeds
    (`seeds`: each seed's mean over the group's records, in seed order) and their between-seed
    standard deviation (`seed_sd`), for the points with several seeds only. None when the table
    has no seed column. Rows without a seed (an untrained model) have no spread."""
    if "seed" not in rows.columns:
        return None
    keys = [by] if isinstance(by, str) else list(by)
    per_seed = rows[rows["seed"].notna()].groupby([*keys, "seed"], dropna=False)["value"].mean()
    grouped = per_seed.groupby(level=keys, dropna=False)
    spread = pd.DataFrame({"seeds": grouped.apply(tuple), "seed_sd": grouped.std()})
    return spread[spread["seeds"].map(len) > 1]


def seed_dots(ax, x, seeds, *, color, scale: float = 1.0):
    """A dot per seed at its point's x: `seeds` holds each point's seed values (`seed_spread`),
    times `scale`. Returns the PathCollection, or None (nothing drawn) when no point has any."""
    xs = [at for at, values in zip(x, seeds) for _ in values]
    if not xs:
        return None
    ys = [scale * value for values in seeds for value in values]
    return ax.scatter(xs, ys, s=14, color=color, alpha=0.8, edgecolors="none", zorder=3, label="_seeds")


def _sd_limits(center, sd, scale: float):
    """(`center` - sd, `center` + sd), times `scale`, of the seed-sd marks; None when no point has an sd."""
    center, sd = np.asarray(center, dtype=float), np.asarray(sd, dtype=float)
    if not np.isfinite(sd).any():
        return None
    return scale * (center - sd), scale * (center + sd)


def seed_sd_band(ax, x, center, sd, *, color, scale: float = 1.0):
    """Hatch ± one between-seed sd around a line (`center`), times `scale`, in the line's colour:
    hatched, beside the filled bootstrap band. None (nothing drawn) when no point has an sd."""
    limits = _sd_limits(center, sd, scale)
    if limits is None:
        return None
    return ax.fill_between(
        np.asarray(x), *limits, facecolor="none", edgecolor=color, hatch="///", lw=0, alpha=0.5, label="_seed_sd"
    )


def seed_sd_bars(ax, x, center, sd, *, color, scale: float = 1.0):
    """A thick bar from `center` - sd to `center` + sd (times `scale`) at each x, for points drawn
    as bars; None (nothing drawn) when no point has an sd."""
    limits = _sd_limits(center, sd, scale)
    if limits is None:
        return None
    return ax.vlines(np.asarray(x), *limits, colors=color, lw=3, alpha=0.6, zorder=2.5, label="_seed_sd")


# how much taller a cell that also says ± its half-width is drawn
TWO_LINES = 1.6


def _annotations(grid: pd.DataFrame, halfwidth: pd.DataFrame, fmt: str) -> np.ndarray:
    """Cell texts: the value, and below it +- half its interval where the cell has one."""
    half = halfwidth.reindex(index=grid.index, columns=grid.columns).to_numpy(dtype=float)
    values = grid.to_numpy(dtype=float)
    texts = [
        [
            ("" if np.isnan(v) else f"{v:{fmt}}") + (f"\n±{h:{fmt}}" if np.isfinite(h) and not np.isnan(v) else "")
            for v, h in zip(value_row, half_row)
        ]
        for value_row, half_row in zip(values, half)
    ]
    return np.array(texts, dtype=object)


def has_halfwidths(halfwidth: pd.DataFrame | None) -> bool:
    """Whether any cell has an interval to write (its heatmap cells then hold two lines)."""
    return halfwidth is not None and bool(np.isfinite(halfwidth.to_numpy(dtype=float)).any())


def draw_heatmap(
    ax,
    grid: pd.DataFrame,
    halfwidth: pd.DataFrame | None = None,
    *,
    cbar_label: str,
    fmt: str = ".1f",
    cmap: str = "viridis",
    **heatmap_kw,
):
    """Draw the annotated heatmap of `grid` on `ax`: each cell's value, and below it ± half its
    interval where `halfwidth` (same labels; `halfwidth_grid`) has one. Row labels stay upright."""
    annot, annot_fmt = True, fmt
    if has_halfwidths(halfwidth):
        annot, annot_fmt = _annotations(grid, halfwidth, fmt), ""
    sns.heatmap(grid, annot=annot, fmt=annot_fmt, cmap=cmap, ax=ax, cbar_kws={"label": cbar_label}, **heatmap_kw)
    ax.tick_params(axis="y", labelrotation=0)
    return ax


def heatmap(
    grid: pd.DataFrame,
    out: str | Path,
    *,
    title: str,
    xlabel: str,
    ylabel: str = "",
    cbar_label: str,
    fmt: str = ".1f",
    cmap: str = "viridis",
    cell: tuple[float, float] = (0.75, 0.45),
    margin: tuple[float, float] = (1.2, 1.2),
    min_width: float = 0.0,
    halfwidth: pd.DataFrame | None = None,
    **heatmap_kw,
):
    """An annotated heatmap of `grid` (rows x columns), sized to its cells: width = margin +
    cell width x columns (at least `min_width`), height = margin + cell height x rows. With
    `halfwidth` (same labels; `halfwidth_grid`), a cell with an interval also says ± its half-width."""
    if has_halfwidths(halfwidth):
        cell = (cell[0], cell[1] * TWO_LINES)
    width = max(min_width, margin[0] + cell[0] * grid.shape[1])
    fig, ax = plt.subplots(figsize=(width, margin[1] + cell[1] * grid.shape[0]))
    draw_heatmap(ax, grid, halfwidth, cbar_label=cbar_label, fmt=fmt, cmap=cmap, **heatmap_kw)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    return save(fig, out)
