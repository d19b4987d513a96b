"""Figures of the sentence-embedding family: retrieval error trained vs untrained, STS, layers."""

from __future__ import annotations

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import seaborn as sns  # noqa: E402

from xlt.report.figures import (  # first: it selects the headless backend
    error_lengths,
    halfwidth_grid,
    heatmap,
    interval_band,
    mean_intervals,
    save,
    seed_dots,
    seed_sd_band,
    seed_sd_bars,
    seed_spread,
)


def _variant(row) -> str:
    if not bool(row["trained"]) or pd.isna(row.get("freeze_depth")):
        return "untrained"
    depth = int(row["freeze_depth"])
    return "trained" if depth == -1 else f"trained, depth {depth}"


def _with_variant(table: pd.DataFrame) -> pd.DataFrame:
    table = table.copy()
    table["trained"] = table["trained"].astype(str).str.lower().isin(["true", "1"])
    table["variant"] = table.apply(_variant, axis=1)
    return table


def relative_reduction(table: pd.DataFrame) -> pd.DataFrame:
    """Mean retrieval error per (pooling, layer, variant, lang), mean over seeds, with the
    relative reduction of every trained variant against the untrained model in %, the mean of
    the seeds' interval bounds (ci_low / ci_high) when the table has them, and where a point has
    several seeds their values (`seeds`) and between-seed sd (`seed_sd`)."""
    err = _with_variant(table[table.metric == "mean_error"])
    keys = ["pooling", "layer", "variant", "lang"]
    means = _with_spread(err.groupby(keys, dropna=False)["value"].mean().reset_index(), err, keys)
    base = means[means.variant == "untrained"].set_index(["pooling", "layer", "lang"])["value"]
    keys = list(zip(means.pooling, means.layer, means.lang))
    means["reduction_pct"] = [
        100.0 * (base[k] - v) / base[k] if k in base.index and base[k] > 0 else np.nan
        for k, v in zip(keys, means.value)
    ]
    return means


def _with_spread(means: pd.DataFrame, rows: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """`means` (one row per group of `keys`) with the mean interval bounds of the averaged rows
    and the seed spread (`seeds`: a tuple, empty with fewer than two seeds; `seed_sd`), where the
    table has them."""
    intervals = mean_intervals(rows, keys)
    if intervals is not None:
        means = means.join(intervals, on=keys)
    spread = seed_spread(rows, keys)
    if spread is not None and len(spread):
        means = means.join(spread, on=keys)
        means["seeds"] = [v if isinstance(v, tuple) else () for v in means.seeds]
    return means


def retrieval_error(table: pd.DataFrame, out, title: str = ""):
    """Bars of retrieval error per language (mean over seeds), one panel per pooling at one
    layer (the last when layers count from the top), trained variants labelled with their
    relative error reduction against the untrained model; error bars: the 95 % bootstrap
    interval where the table has one; beside them, where a bar averages several seeds, a dot
    per seed and a grey bar of ± one between-seed sd."""
    means = relative_reduction(table)
    layer = means.layer.max() if (means.layer < 0).all() else means.layer.iloc[0]
    means = means[means.layer == layer]
    poolings = sorted(means.pooling.unique())
    fig, axes = plt.subplots(1, len(poolings), figsize=(5 * len(poolings), 4.2), sharey=True, squeeze=False)
    for ax, pooling in zip(axes[0], poolings):
        part = means[means.pooling == pooling]
        sns.barplot(part, x="lang", y="value", hue="variant", ax=ax)
        for container, variant in zip(ax.containers, part.variant.drop_duplicates()):
            if variant == "untrained":
                continue
            labels = [f"{r:+.0f}%" if np.isfinite(r) else "" for r in part[part.variant == variant].reduction_pct]
            ax.bar_label(container, labels=labels, fontsize=7)
        if "ci_low" in part.columns:
            _bar_intervals(ax, part)
        if "seed_sd" in part.columns:
            _bar_seed_spread(ax, part)
        ax.set_title(f"pooling: {pooling} (layer {layer})")
        ax.set_xlabel("language")
        ax.set_ylabel("retrieval error (mean of both directions)")
    fig.suptitle(title or "Bitext retrieval error, trained vs untrained (labels: relative reduction)")
    return save(fig, out)


def _bars(ax, part: pd.DataFrame):
    """(bar centres, bar width, the rows they draw) per variant of seaborn's bars: its first
    containers follow the hue order, its bars the x ticks."""
    langs = [tick.get_text() for tick in ax.get_xticklabels()]
    for container, variant in zip(list(ax.containers), part.variant.drop_duplicates()):
        rows = part[part.variant == variant].set_index("lang")
        bars = [(bar, lang) for bar, lang in zip(container, langs) if lang in rows.index]
        if bars:
            yield (
                [bar.get_x() + bar.get_width() / 2 for bar, _ in bars],
                bars[0][0].get_width(),
                rows.loc[[lang for _, lang in bars]],
            )


def _bar_intervals(ax, part: pd.DataFrame) -> None:
    """Error bars of the 95 % bootstrap interval on the bars' centres."""
    for centres, _, rows in _bars(ax, part):
        yerr = error_lengths(rows.value, rows.ci_low, rows.ci_high)
        if yerr is not None:
            ax.errorbar(centres, rows.value, yerr=yerr, fmt="none", ecolor="0.2", capsize=3, lw=1, label="_interval")


def _bar_seed_spread(ax, part: pd.DataFrame) -> None:
    """Beside the bootstrap error bar (a quarter bar to the right): ± one between-seed sd and a dot per seed."""
    for centres, width, rows in _bars(ax, part):
        beside = [centre + width / 4 for centre in centres]
        seed_sd_bars(ax, beside, rows.value, rows.seed_sd, color="0.5")
        seed_dots(ax, beside, rows.seeds, color="0.1")


DEV_SPLIT = "dev"  # sbert.dev's STS set, scored for the paper overlay (plan.dev_sts_file), not for these figures


def _evaluation_rows(table: pd.DataFrame) -> pd.DataFrame:
    """The rows of the evaluation sets: without the dev split's rows where other splits are there."""
    if "split" not in table.columns or not (table.split != DEV_SPLIT).any():
        return table
    return table[table.split != DEV_SPLIT]


def sts(table: pd.DataFrame, out, title: str = ""):
    """Heatmap of Spearman x 100 (mean over seeds): one row per pooling, layer and variant,
    one column per language and similarity, on the STS evaluation split (the dev set's rows,
    `DEV_SPLIT`, are left out)."""
    rows = _with_variant(_evaluation_rows(table[(table.metric == "spearman")]))
    rows["config"] = rows.pooling + ", L" + rows.layer.astype(str) + ", " + rows.variant
    rows["column"] = rows.lang.astype(str) + " " + rows.similarity.astype(str)
    grid = rows.pivot_table(index="config", columns="column", values="value", aggfunc="mean") * 100
    return heatmap(
        grid,
        out,
        title=title or "STS: Spearman correlation x 100 (mean over seeds)",
        xlabel="language, similarity",
        cbar_label="Spearman x 100",
        halfwidth=halfwidth_grid(rows, "config", "column", scale=100),
    )


def layers(table: pd.DataFrame, out, title: str = ""):
    """Retrieval error (mean over languages, directions and seeds) against the pooled layer:
    one line per pooling and variant, untrained dashed; bands: the 95 % bootstrap interval
    where the table has one; hatched: ± one between-seed sd, with a dot per seed (its mean over
    languages and directions), where a point has several seeds."""
    err = _with_variant(table[table.metric == "mean_error"])
    keys = ["pooling", "variant", "layer"]
    means = _with_spread(err.groupby(keys)["value"].mean().reset_index(), err, keys)
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for (pooling, variant), part in means.groupby(["pooling", "variant"]):
        (line,) = ax.plot(
            part.layer,
            part.value,
            marker="o",
            ls="--" if variant == "untrained" else "-",
            label=f"{pooling}, {variant}",
        )
        if "ci_low" in part.columns:
            interval_band(ax, part.layer, part.ci_low, part.ci_high, color=line.get_color())
        if "seed_sd" in part.columns:
            seed_sd_band(ax, part.layer, part.value, part.seed_sd, color=line.get_color())
            seed_dots(ax, part.layer, part.seeds, color=line.get_color())
    ax.set_xlabel("pooled hidden-state index (negative: from the top)")
    ax.set_ylabel("retrieval error, mean over languages and directions")
    ax.set_title(title or "Retrieval error by layer")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    return save(fig, out)


PLOTS = {"sbert-retrieval-error": retrieval_error, "sbert-sts": sts, "sbert-layers": layers}
