"""The dual family's objectives side by side (`dual-objectives`): per language, the Tatoeba
error (both directions averaged) and, with `dual.sts`, the STS cosine Spearman of the untrained
encoder, the distillation teacher scored zero-shot, every additive-margin run and every distilled
student, means over seeds with the 95 % bootstrap interval as whiskers and a dot per seed. Nothing
is averaged over an axis the bars do not name: each pooling is its own row of panels (a margin bar
of cls and mean runs would mix two encoders), and each trained bar's label states its start
(pretrained model or the teacher's checkpoint, xlt.families.dual.comparison), its number of seeds
and its training budget (sentences_seen, xlt.families.dual.budget), so runs of one objective at
two budgets (the recipe's and the budget-matched twin) are two bars, and unequal budgets show."""

from __future__ import annotations

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from xlt.core.errors import XltError  # noqa: E402
from xlt.families.dual.budget import AXIS as BUDGET  # noqa: E402
from xlt.families.dual.comparison import AXIS as START  # noqa: E402
from xlt.families.dual.run_labels import DUAL_AXES as RUN_AXES  # noqa: E402
from xlt.families.dual.run_labels import run_labels, split_baselines  # noqa: E402
from xlt.report.figures import (  # first: it selects the headless backend
    error_lengths,
    mean_intervals,
    save,
    seed_dots,
    seed_spread,
)

# bar order: before training, zero-shot teacher, then the trained objectives
ORDER = {"untrained": 0, "teacher": 1, "additive_margin": 2, "mse_distill": 3}


def _groups(rows: pd.DataFrame) -> pd.DataFrame:
    """Each row with its bar label and the label's place in ORDER."""
    trained, untrained = split_baselines(rows)
    trained = trained.assign(
        group=run_labels(trained, skip=("pooling", "batch_size", "freeze_depth", BUDGET, START)),
        rank=trained["objective"].map(ORDER).fillna(len(ORDER)),
    )
    trained["group"] = trained["group"] + _starts(trained) + _seed_counts(trained)
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


def _starts(trained: pd.DataFrame) -> pd.Series:
    """ ", start=pretrained" or ", start=teacher" per row: every trained bar names its start point."""
    if START not in trained.columns:
        return pd.Series("", index=trained.index)
    return trained[START].map(lambda start: "" if pd.isna(start) else f", start={start}")


def _seed_counts(trained: pd.DataFrame) -> pd.Series:
    """ ", 3 seeds" per row: the seeds its bar averages (counted over the runs of its setting)."""
    if "seed" not in trained.columns:
        return pd.Series("", index=trained.index)
    setting = [c for c in dict.fromkeys(("model", *RUN_AXES, START, BUDGET)) if c in trained.columns]
    counts = trained.groupby(setting, dropna=False)["seed"].transform("nunique")
    return counts.map(lambda n: f", {n} seed{'s' if n != 1 else ''}" if n else "")


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


def _panel(ax, rows: pd.DataFrame, ylabel: str, scale: float, colours: dict) -> None:
    """One bar per group and language; `rows` are one pooling's (and the runs without a pooling)."""
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
        colour = colours.setdefault(group, f"C{len(colours) % 10}")
        ax.bar(x, scale * values, width, yerr=yerr, capsize=2, label=group, color=colour)
        spread = seed_spread(part, "lang")
        if spread is not None:  # a dot per seed where a bar averages several
            seeds = spread["seeds"].reindex(langs)
            seed_dots(ax, x, [one if isinstance(one, tuple) else () for one in seeds], color="0.1", scale=scale)
    ax.set_xticks(np.arange(len(langs)), langs)
    ax.set_ylabel(ylabel)
    ax.grid(alpha=0.3, axis="y")


def _poolings(rows: pd.DataFrame) -> list:
    """The poolings to draw apart (one row of panels each); [None] for a table without the axis."""
    if "pooling" not in rows.columns or rows["pooling"].isna().all():
        return [None]
    return sorted(rows["pooling"].dropna().astype(str).unique())


def _of_pooling(rows: pd.DataFrame, pooling) -> pd.DataFrame:
    """The rows of one pooling, and those without a pooling (drawn in every row of panels)."""
    if pooling is None:
        return rows
    return rows[rows["pooling"].isna() | (rows["pooling"].astype(str) == pooling)]


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
    poolings = _poolings(pd.concat([rows for rows, _, _ in panels]))
    width = max(6.5 * len(panels), 11.0)  # room for the legend's long labels beside one panel
    fig, axes = plt.subplots(len(poolings), len(panels), figsize=(width, 4.4 * len(poolings)), squeeze=False)
    colours: dict = {}  # one colour per bar label in every panel
    # labelled over every pooling, so a setting has one label (and colour) in every row of panels
    panels = [(_groups(rows), ylabel, scale) for rows, ylabel, scale in panels]
    for row, pooling in zip(axes, poolings):
        for ax, (rows, ylabel, scale) in zip(row, panels):
            _panel(ax, _of_pooling(rows, pooling), ylabel, scale, colours)
            if pooling is not None:
                ax.set_title(f"pooling={pooling}")
    # below the panels: the bars of a high error reach the top of the axes; every row's labels once,
    # in bar order (the teacher's bar is in its pooling's row only)
    drawn = {}
    for ax in axes.flat:
        for handle, label in zip(*ax.get_legend_handles_labels()):
            drawn.setdefault(label, handle)
    order = pd.concat([rows for rows, _, _ in panels]).drop_duplicates("group").sort_values(["rank", "group"])
    handles = {label: drawn[label] for label in order["group"] if label in drawn}
    columns = min(len(handles), 3 if width > 12 else 2)
    fig.legend(list(handles.values()), list(handles), loc="lower center", ncol=columns, fontsize=8)
    note = single_objective(table)
    heading = title or _title(table)
    fig.suptitle(f"{heading}\n{note}" if note else heading)
    legend_rows = -(-len(handles) // columns)
    fig.tight_layout(rect=(0, min(0.4, 0.035 * legend_rows / len(poolings) + 0.03), 1, 0.92 if note else 1))
    return save(fig, out, tight=False)


def _title(table: pd.DataFrame) -> str:
    title = "Objectives: untrained, zero-shot teacher, additive margin, distilled student; dots: seeds"
    if START in table.columns and (table[START] == "teacher").any():
        title += "\nstart=teacher: trained from the distillation teacher's (NLI) checkpoint"
    return title
