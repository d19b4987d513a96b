"""Figures of the adapt family (target-language MLM adaptation, seed 003), from the tidy table.

Adapted runs carry role "adapted"; the untouched reference models "native" and "transfer".
Curves are means over seeds with +- one standard deviation bands. Where the table has 95 %
bootstrap intervals (ci_low / ci_high: the final evaluations and the untouched models, from
their kept per-sentence losses, and every checkpoint of the perplexity curves, computed by the
training job), the curves get a darker band of their interval (the mean of the seeds' bounds),
the reference lines a band of theirs, the selected model a diamond with its interval at its
selected step, and the final-perplexity bars a grey bar of it beside the seeds' sd.
"""

from __future__ import annotations

import math
from pathlib import Path

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from matplotlib.ticker import FuncFormatter  # noqa: E402

from xlt.core.errors import XltError  # noqa: E402
from xlt.families.adapt.plan import MULTILINGUAL  # noqa: E402
from xlt.families.adapt.scheme_names import scheme_label, scheme_order  # noqa: E402
from xlt.families.adapt.tables import WORD_METRICS, final_perplexity_table, word_nll_table  # noqa: E402
from xlt.report.figures import (
    INTERVAL_COLUMNS,
    error_lengths,
    interval_band,
    mean_intervals,
    reference_span,
    save,
)  # first: it selects the headless backend

LEVEL_STYLE = {"sentence": "-", "word": "--"}
REFERENCE_STYLE = {"native": ":", "transfer": "-."}
PLAIN = FuncFormatter(lambda value, _: f"{value:g}")  # 20, 30, 60 on log axes instead of 2x10^1


def _steps(table: pd.DataFrame) -> pd.Series:
    return table["step"] if "step" in table.columns else pd.Series(np.nan, index=table.index)


def _runs(table: pd.DataFrame) -> list[tuple[str, str]]:
    """(model, scheme) of the adapted runs, schemes in the seed's order."""
    adapted = table[table.role == "adapted"][["model", "scheme"]].drop_duplicates()
    return sorted(map(tuple, adapted.to_numpy()), key=lambda ms: (ms[0], scheme_order(ms[1])))


def _band(ax, group: pd.DataFrame, **style) -> None:
    """The mean over seeds against the step, a band of +- one sd, and where every seed has bounds
    at a step, a darker band of the 95 % bootstrap interval (nothing more where none has). Nothing
    for no records (a run that never scored the set at a checkpoint: adapt.scheme_eval)."""
    if group.empty:
        return
    stats = group.groupby("step")["value"].agg(["mean", "std"]).fillna(0.0)
    (line,) = ax.plot(stats.index, stats["mean"], **style)
    ax.fill_between(
        stats.index,
        stats["mean"] - stats["std"],
        stats["mean"] + stats["std"],
        color=line.get_color(),
        alpha=0.15,
        lw=0,
    )
    bounds = mean_intervals(group, "step")
    if bounds is not None:
        bounds = bounds.reindex(stats.index)
        interval_band(ax, stats.index, bounds.ci_low, bounds.ci_high, color=line.get_color())


def _set_label(lang: str, split: str) -> str:
    return f"multilingual ({split})" if lang == MULTILINGUAL else f"{lang} {split}"


def _selected_model(ax, finals: pd.DataFrame, selected: pd.DataFrame, color) -> None:
    """The final (selected) model's perplexity with its 95 % bootstrap interval, a diamond at
    the selected step (means over seeds); nothing where a bound or the step is missing."""
    bounds = mean_intervals(finals.assign(_point=0), "_point")
    if finals.empty or selected.empty or bounds is None:
        return
    value, step = finals["value"].mean(), selected["value"].mean()
    yerr = error_lengths([value], bounds.ci_low.to_numpy(), bounds.ci_high.to_numpy())
    if yerr is not None and np.isfinite(step):
        ax.errorbar([step], [value], yerr=yerr, fmt="D", ms=4, color=color, capsize=3, lw=1, label="_interval")


def perplexity_vs_step(table: pd.DataFrame, out: str | Path, title: str = ""):
    """One panel per (model, scheme): target and multilingual perplexity against the training
    step (log scale), with the untouched models' perplexities as horizontal reference lines
    and the selected model's final perplexity at the selected step; where the table has
    intervals, the curves and reference lines get bands of them and the selected model a bar."""
    ppl = table[table.metric == "perplexity"]
    curves = ppl[_steps(ppl).notna() & (ppl.role == "adapted")]
    refs = ppl[_steps(ppl).isna() & (ppl.role != "adapted")]
    finals = ppl[_steps(ppl).isna() & (ppl.role == "adapted")]
    selected = table[table.metric == "selected_step"]
    runs = _runs(curves)
    if not runs:
        raise XltError("no perplexity-per-step records of adapted runs in the table")
    sets = sorted(
        {(lang, split) for lang, split in zip(curves.lang, curves.split)}, key=lambda s: (s[0] == MULTILINGUAL, s)
    )
    colors = {s: f"C{i}" for i, s in enumerate(sets)}
    # the y range follows the curves; a reference far outside it (e.g. the monolingual native
    # model on other languages) is named with its value instead of squashing the curves
    lo, hi = curves["value"].min(), curves["value"].max()
    shown = refs[(refs["value"] >= lo / 10) & (refs["value"] <= hi * 10)]
    lo, hi = min(lo, shown["value"].min() if len(shown) else lo), max(hi, shown["value"].max() if len(shown) else hi)
    # the curves' interval bands stay inside the panel (a checkpoint's bounds may reach past the
    # curves); which references are off scale still follows the values alone
    bounds = curves[[c for c in INTERVAL_COLUMNS if c in curves.columns]].to_numpy(dtype=float).ravel()
    bounds = bounds[np.isfinite(bounds)]
    bottom, top = (min(lo, bounds.min()), max(hi, bounds.max())) if bounds.size else (lo, hi)
    fig, axes = plt.subplots(1, len(runs), figsize=(3.6 * len(runs) + 0.6, 4.2), sharey=True, squeeze=False)
    several_models = len({m for m, _ in runs}) > 1
    for ax, (model, scheme) in zip(axes[0], runs):
        run = curves[(curves.model == model) & (curves.scheme == scheme)]
        final = finals[(finals.model == model) & (finals.scheme == scheme)]
        for lang, split in sets:
            _band(
                ax,
                run[(run.lang == lang) & (run.split == split)],
                color=colors[(lang, split)],
                marker="o",
                ms=3,
                label=_set_label(lang, split),
            )
            _selected_model(
                ax,
                final[(final.lang == lang) & (final.split == split)],
                selected[(selected.model == model) & (selected.scheme == scheme)],
                colors[(lang, split)],
            )
            for (role, ref_model), group in refs[(refs.lang == lang) & (refs.split == split)].groupby(
                ["role", "model"]
            ):
                value = group["value"].mean()
                off_scale = not lo / 10 <= value <= hi * 10
                ax.axhline(
                    value if not off_scale else np.nan,
                    color=colors[(lang, split)],
                    ls=REFERENCE_STYLE.get(role, ":"),
                    lw=1.2,
                    label=f"{ref_model} untouched ({role}), {_set_label(lang, split)}: {value:.1f}"
                    + (" (off scale)" if off_scale else ""),
                )
                if not off_scale:
                    reference_span(ax, group, color=colors[(lang, split)])
        ax.set_yscale("log")
        ax.set_ylim(bottom / 1.15, top * 1.15)
        ax.yaxis.set_major_formatter(PLAIN)
        ax.yaxis.set_minor_formatter(PLAIN)
        ax.set_title(scheme_label(scheme) + (f"\n{model}" if several_models else ""), fontsize=10)
        ax.set_xlabel("training step")
        ax.grid(alpha=0.3, which="both")
    axes[0][0].set_ylabel("MLM perplexity (fixed masks, log scale)")
    # every panel's entries, once: a run of adapt.scheme_eval may lack the multilingual curve
    legend = {}
    for ax in axes[0]:
        legend.update({label: handle for handle, label in zip(*ax.get_legend_handles_labels()) if label not in legend})
    handles, labels = list(legend.values()), list(legend)
    fig.legend(handles, labels, loc="lower center", ncol=min(3, len(labels)), fontsize=8, frameon=False)
    fig.suptitle(
        title
        or "Perplexity during target-language MLM training (mean over seeds; light band +- sd, "
        "darker band 95 % bootstrap interval)"
    )
    fig.tight_layout(rect=(0, 0.06 + 0.035 * math.ceil(len(labels) / 3), 1, 1))
    return save(fig, out, tight=False)


def _row_labels(summary: pd.DataFrame) -> list[str]:
    labels = [
        scheme_label(s) if r == "adapted" else f"{m}\nuntouched ({r})"
        for m, r, s in zip(summary.model, summary.role, summary.scheme)
    ]
    if summary.model[summary.role == "adapted"].nunique() > 1:
        labels = [f"{m}: {lab}" if r == "adapted" else lab for m, r, lab in zip(summary.model, summary.role, labels)]
    return labels


def _bars(ax, summary: pd.DataFrame, digits: int = 1, log_scale: bool = True) -> None:
    """One group of bars per summary row, one bar per evaluation set: the means over seeds with
    +- sd caps, the value printed on the bar, and a wide grey bar of the 95 % bootstrap interval
    (mean of the seeds' bounds) where the summary has one."""
    sets = [c[: -len(" mean")] for c in summary.columns if c.endswith(" mean") and c != "selected step mean"]
    x = np.arange(len(summary))
    width = 0.8 / len(sets)
    values = []
    for i, name in enumerate(sets):
        means, sds = summary[f"{name} mean"].to_numpy(), summary[f"{name} sd"].fillna(0.0).to_numpy()
        lang, split = name.split("/", 1)
        bars = ax.bar(
            x + (i - (len(sets) - 1) / 2) * width,
            means,
            width,
            yerr=sds,
            capsize=2,
            label=_set_label(lang, split),
            color=f"C{i}",
        )
        ax.bar_label(bars, labels=[f"{v:.{digits}f}" if np.isfinite(v) else "" for v in means], fontsize=7, padding=2)
        if f"{name} ci_low" in summary.columns:
            yerr = error_lengths(means, summary[f"{name} ci_low"], summary[f"{name} ci_high"])
            if yerr is not None:
                ax.errorbar(
                    x + (i - (len(sets) - 1) / 2) * width,
                    means,
                    yerr=yerr,
                    fmt="none",
                    ecolor="0.35",
                    elinewidth=4,
                    alpha=0.5,
                    capsize=0,
                    label="_interval",
                )
        values.extend(v for v in means if np.isfinite(v) and v > 0)
    if log_scale and values and max(values) / min(values) > 20:
        ax.set_yscale("log")
        ax.yaxis.set_major_formatter(PLAIN)
    ax.set_xticks(x, _row_labels(summary), fontsize=8)
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3, axis="y")


def final_perplexity(table: pd.DataFrame, out: str | Path, title: str = ""):
    """Final perplexity of every scheme (the selected checkpoint) and of the untouched models,
    per evaluation set; error bars are +- one sd over seeds, values printed on the bars, and a
    wide grey bar is the 95 % bootstrap interval (mean of the seeds' bounds) where the table
    has intervals."""
    summary = final_perplexity_table(table)
    fig, ax = plt.subplots(figsize=(1.6 + 1.5 * len(summary), 4.8))
    _bars(ax, summary)
    ax.set_ylabel("perplexity of the final model")
    ax.set_title(title or "Final perplexity per layer scheme and of the untouched models")
    fig.tight_layout()
    return save(fig, out, tight=False)


def word_nll(table: pd.DataFrame, out: str | Path, title: str = ""):
    """The tokenizer-independent counterpart of `final_perplexity`: NLL per word (top) and per
    character (bottom) of the final models and the untouched ones, the word-level
    pseudo-log-likelihood of the same words (xlt.families.adapt.word_nll); linear scale, since
    these are log-likelihoods already; bars +- one sd over seeds."""
    summary = word_nll_table(table)
    bars = int((summary.metric == WORD_METRICS[0]).sum())  # the table's unk_share block is no panel
    fig, axes = plt.subplots(len(WORD_METRICS), 1, figsize=(1.6 + 1.5 * bars, 8.0), squeeze=False)
    for ax, metric in zip(axes[:, 0], WORD_METRICS):
        _bars(ax, summary[summary.metric == metric].reset_index(drop=True), digits=2, log_scale=False)
        ax.set_ylabel({"nll_per_word": "NLL per word (nats)", "nll_per_char": "NLL per character (nats)"}[metric])
    axes[0][0].set_title(
        title or "Final NLL per word and per character (compares across tokenizers, unlike perplexity per piece)",
        fontsize=10,
    )
    fig.tight_layout()
    return save(fig, out, tight=False)


def _layer_grid(table: pd.DataFrame, metric: str, ylabel: str, out, title: str):
    data = table[(table.metric == metric) & _steps(table).notna()]
    if data.empty:
        raise XltError(f"no per-step {metric!r} records in the table (adapt-mlm writes them when given --native)")
    layers = sorted(int(v) for v in data["layer"].dropna().unique())
    runs = _runs(data)
    levels = [lv for lv in LEVEL_STYLE if lv in set(data.level)]
    ncols = min(4, len(layers))
    nrows = math.ceil(len(layers) / ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(3.3 * ncols, 2.5 * nrows + 0.8), sharex=True, squeeze=False)
    spans = []
    for ax, layer in zip(axes.flat, layers):
        panel = data[data.layer == layer]
        for i, (model, scheme) in enumerate(runs):
            for level in levels:
                group = panel[(panel.model == model) & (panel.scheme == scheme) & (panel.level == level)]
                if not group.empty:
                    _band(
                        ax,
                        group,
                        color=f"C{i}",
                        ls=LEVEL_STYLE[level],
                        lw=1.3,
                        label=f"{scheme_label(scheme)}, {level}"
                        + (f" ({model})" if len({m for m, _ in runs}) > 1 else ""),
                    )
        ax.set_title("embeddings (0)" if layer == 0 else f"layer {layer}", fontsize=9)
        ax.grid(alpha=0.3)
        spans.append(ax.get_ylim())
    # every panel spans the same y range (the seed's way of keeping the scale across layers
    # while showing each layer around its own level)
    span = max(hi - lo for lo, hi in spans)
    for ax, (lo, hi) in zip(axes.flat, spans):
        mid = (lo + hi) / 2
        ax.set_ylim(mid - span / 2, mid + span / 2)
    for ax in axes.flat[len(layers) :]:
        ax.set_visible(False)
    for ax in axes[:, 0]:
        ax.set_ylabel(ylabel, fontsize=8)
    for column in range(ncols):  # step ticks under the lowest panel of every column
        lowest = max(row for row in range(nrows) if row * ncols + column < len(layers))
        axes[lowest, column].xaxis.set_tick_params(labelbottom=True)
        axes[lowest, column].set_xlabel("training step", fontsize=8)
    handles, labels = axes.flat[0].get_legend_handles_labels()
    fig.suptitle(title)
    if len(layers) < axes.size:  # the legend takes the first free panel
        spare = axes.flat[len(layers)]
        spare.set_visible(True)
        spare.axis("off")
        spare.legend(handles, labels, loc="center", fontsize=8, frameon=False)
        fig.tight_layout()
    else:
        fig.legend(handles, labels, loc="lower center", ncol=min(3, len(labels)), fontsize=8, frameon=False)
        fig.tight_layout(rect=(0, 0.03 + 0.03 * math.ceil(len(labels) / 3), 1, 1))
    return save(fig, out, tight=False)


def distance_vs_step(table: pd.DataFrame, out: str | Path, title: str = ""):
    """Per layer: mean Euclidean distance between the adapted and the native model's vectors of
    the same sentences (solid: mean-pooled sentences, dashed: first sub-words of words)."""
    return _layer_grid(
        table,
        "euclidean",
        "mean Euclidean distance",
        out,
        title or "Distance to the native model per layer during adaptation (equal y span per panel)",
    )


def cka_vs_step(table: pd.DataFrame, out: str | Path, title: str = ""):
    """Per layer: linear CKA between the adapted and the native model (1 = same up to rotation and scale)."""
    return _layer_grid(
        table,
        "cka",
        "linear CKA",
        out,
        title or "Linear CKA with the native model per layer during adaptation (equal y span per panel)",
    )


PLOTS = {
    "adapt-perplexity-vs-step": perplexity_vs_step,
    "adapt-final-perplexity": final_perplexity,
    "adapt-word-nll": word_nll,
    "adapt-distance-vs-step": distance_vs_step,
    "adapt-cka-vs-step": cka_vs_step,
}
