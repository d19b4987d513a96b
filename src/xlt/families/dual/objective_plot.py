"""The dual family's objectives side by side (`dual-objectives`): per language, the Tatoeba
error (both directions averaged) and, with `dual.sts`, the STS cosine Spearman of the untrained
encoder, the distillation teacher scored zero-shot, every additive-margin run and every distilled
student, means over seeds with the 95 % bootstrap interval as whiskers. Each trained bar's label
states its training budget (sentences_seen, xlt.families.dual.budget), so runs of one objective at
two budgets (the recipe's and the budget-matched twin) are two bars, and unequal budgets show."""

from __future__ import annotations

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from xlt.core.errors import XltError  # noqa: E402
from xlt.families.dual.budget import AXIS as BUDGET  # noqa: E402
from xlt.families.dual.run_labels import run_labels, split_baselines  # noqa: E402
from xlt.report.figures import error_lengths, mean_intervals, save  # first: it selects the headless backend

# bar order: before training, zero-shot teacher, then the trained objectives
ORDER = {"untrained": 0, "teacher": 1, "additive_margin": 2, "mse_distill": 3}


def _groups(rows: pd.DataFrame) -> pd.DataFrame:
    """Each row with its bar label and the label's place in ORDER."""
    trained, untrained = split_baselines(rows)
    trained = trained.assign(
        group=run_labels(trained, skip=("pooling", "batch_size", "freeze_depth", BUDGET)),
        rank=trained["objective"].map(ORDER).fillna(len(ORDER)),
    )
    trained.loc[trained["objective"] == "teacher", "group"] = "teacher (zero-shot)"
    if BUDGET in trained.columns:
        seen = pd.to_numeric(trained[BUDGET], errors="coerce")
        labelled = seen.notna()
        # a sweep without declared data sizes has no budget: nothing to add (and an empty float
        # Series added to pandas' `str` column raises)
        if labelled.any():
            labels = trained.loc[labelled, "group"] + ", " + seen[labelled].map(sentences_label)
            trained.loc[labelled, "group"] = labels
    return pd.concat([untrained.assign(group="untrained", rank=ORDER["untrained"]), trained])


def sentences_label(seen: float) -> str:
    """A budget as the legend says it: 4.8M sentences, 24M sentences, 112 sentences."""
    for size, unit in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if seen >= size:
            return f"{seen / size:.3g}{unit} sentences"
    return f"{int(seen)} sentences"


def single_objective(table: pd.DataFrame) -> str:
    """The figure's note when the sweep trained one objective: no second one to compare it with."""
    trained, _ = split_baselines(table)
    names = sorted(set(trained["objective"].dropna()) - {"teacher"})
    if len(names) != 1:
        return ""
    return f"a single objective ({names[0]}): no second objective to compare it with"


def _panel(ax, rows: pd.DataFrame, ylabel: str, scale: float) -> None:
    rows = _groups(rows)
    langs = sorted(rows["lang"].astype(str).unique())
    groups = rows.drop_duplicates("group").sort_values(["rank", "group"])["group"].tolist()
    width = 0.8 / len(groups)
    for i, group in enumerate(groups):
        part = rows[rows.group == group]
        values = part.groupby("lang")["value"].mean().reindex(langs)
        x = np.arange(len(langs)) + (i - (len(groups) - 1) / 2) * width
        bounds = mean_intervals(part, "lang")
        yerr = (
            None
            if bounds is None
            else error_lengths(values, bounds.ci_low.reindex(langs), bounds.ci_high.reindex(langs), scale=scale)
        )
        ax.bar(x, scale * values, width, yerr=yerr, capsize=2, label=group)
    ax.set_xticks(np.arange(len(langs)), langs)
    ax.set_ylabel(ylabel)
    ax.grid(alpha=0.3, axis="y")


def objectives(table: pd.DataFrame, out, title: str = ""):
    if "objective" not in table.columns or not (table["objective"] == "mse_distill").any():
        raise XltError("the table has no distilled runs (objective mse_distill); add mse_distill to dual.objectives")
    error = table[table.metric == "mean_error"]
    sts = table[
        (table.metric == "spearman")
        & (table.get("similarity", "cosine") == "cosine")
        & (table.get("split", "test") == "test")
    ]
    if error.empty:
        raise XltError("the table has no mean_error records; run the Tatoeba evaluation (tatoeba_dual) first")
    panels = [(error, "Tatoeba retrieval error % (mean of both directions)", 100)]
    # one panel per STS dataset: two sets share language codes (en in both), not items
    for dataset, rows in sts.groupby("dataset", sort=False) if "dataset" in sts.columns else [(None, sts)]:
        if not rows.empty:
            panels.append((rows, f"STS Spearman (cosine){f', {dataset}' if dataset else ''}", 1))
    fig, axes = plt.subplots(1, len(panels), figsize=(6.5 * len(panels), 4.4), squeeze=False)
    for ax, (rows, ylabel, scale) in zip(axes[0], panels):
        _panel(ax, rows, ylabel, scale)
    # below the panels: the bars of a high error reach the top of the axes
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=min(len(labels), 3), fontsize=8)
    heading = title or "Objectives: untrained, zero-shot teacher, additive margin, distilled student"
    note = single_objective(table)
    fig.suptitle(f"{heading}\n{note}" if note else heading)
    fig.tight_layout(rect=(0, 0.1, 1, 0.92 if note else 1))
    return save(fig, out, tight=False)
