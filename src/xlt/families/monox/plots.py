"""MonoX figures and the paper-style accuracy table, all drawn from the tidy table of
`xlt aggregate` (results/tables/monox.csv).

The table's `headline` column marks the runs at the headline training size and temperature
(the per-language table, as the paper's Tables 2 and 3); the size and temperature sweeps are the
other rows. Accuracy is test accuracy (split test) averaged over seeds.
"""

from __future__ import annotations

import html
from pathlib import Path

import matplotlib.pyplot as plt  # noqa: E402
import matplotlib.ticker
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from xlt.core.errors import XltError  # noqa: E402
from xlt.report.figures import (  # first: it selects the headless backend
    INTERVAL_COLUMNS,
    TWO_LINES,
    complete_mean,
    draw_heatmap,
    halfwidth_grid,
    has_halfwidths,
    interval_band,
    mean_intervals,
    reference_span,
    save,
    seed_spread,
)

# paper order: the teacher (Table 1), MBERT, MBERT-ST, MonoX-PL, MonoX-KD
MODE_ORDER = ("teacher", "finetune", "self_train", "pl", "kd")


def _truthy(column: pd.Series) -> pd.Series:
    return column.astype(str).str.lower().isin(("true", "1", "1.0"))


def with_methods(table: pd.DataFrame) -> pd.DataFrame:
    """Add a `method` column: the mode, plus the student / teacher when several are compared."""
    table = table.copy()
    for column in ("student", "teacher"):
        if column not in table.columns:
            table[column] = np.nan
    several_students = table.loc[table["mode"] != "teacher", "student"].dropna().nunique() > 1
    several_teachers = table["teacher"].dropna().nunique() > 1

    def label(row) -> str:
        parts = [row["mode"]]
        if several_students and row["mode"] != "teacher":
            parts.append(f"[{row['student']}]")
        if several_teachers and isinstance(row["teacher"], str):
            parts.append(f"<- {row['teacher']}")
        return " ".join(parts)

    table["method"] = table.apply(label, axis=1)
    table["_order"] = table["mode"].map({m: i for i, m in enumerate(MODE_ORDER)}).fillna(len(MODE_ORDER))
    return table


def _test_accuracy(table: pd.DataFrame) -> pd.DataFrame:
    need = {"metric", "split", "lang", "mode", "task", "value", "headline"}
    missing = need - set(table.columns)
    if missing:
        raise XltError(
            f"the table has no column(s) {sorted(missing)}: is it the MonoX table (results/tables/monox.csv)?"
        )
    acc = table[(table.metric == "accuracy") & (table.split == "test")]
    if acc.empty:
        raise XltError("the table has no test accuracy records")
    return with_methods(acc)


def _ordered_methods(frame: pd.DataFrame) -> list[str]:
    return list(frame.sort_values(["_order", "method"]).drop_duplicates("method")["method"])


def _headline_accuracy(table: pd.DataFrame) -> pd.DataFrame:
    acc = _test_accuracy(table)
    return acc[_truthy(acc.headline)]


def _task_grids(acc: pd.DataFrame, values: str, aggfunc) -> pd.DataFrame:
    """One (task, method) x language block per task, `values` reduced by `aggfunc` per cell:
    methods in paper order, languages in table order with `avg` last."""
    langs = [lang for lang in dict.fromkeys(acc.lang) if lang != "avg"] + (["avg"] if (acc.lang == "avg").any() else [])
    blocks = []
    for task in dict.fromkeys(acc.task):
        part = acc[acc.task == task]
        grid = part.pivot_table(index="method", columns="lang", values=values, aggfunc=aggfunc)
        grid = grid.reindex(index=_ordered_methods(part), columns=[c for c in langs if c in grid.columns])
        grid.index = pd.MultiIndex.from_product([[task], grid.index], names=["task", "method"])
        blocks.append(grid)
    return pd.concat(blocks)


def accuracy_table(table: pd.DataFrame) -> pd.DataFrame:
    """Headline test accuracy, mean over seeds: one row per (task, method), one column per
    evaluation language in table order, then `avg` (the students' average over languages; a
    teacher is scored in its own language only and has none)."""
    acc = _headline_accuracy(table)
    out = _task_grids(acc, "value", "mean")
    seeds = acc.groupby(["task", "method"])["seed"].nunique() if "seed" in acc.columns else None
    if seeds is not None:
        out.insert(0, "seeds", seeds.reindex(out.index).astype(int))
    return out


def accuracy_spread(table: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """Beside `accuracy_table`'s means, laid out as its grid: the between-seed standard deviation
    ("sd", NaN where a cell has one seed) and the mean of the seeds' 95 % bootstrap bounds
    ("ci_low", "ci_high"; NaN where a record lacks one, absent without interval columns)."""
    acc = _headline_accuracy(table)
    keys = ["task", "method", "lang"]
    spread = seed_spread(acc, keys)
    sd = spread["seed_sd"] if spread is not None else pd.Series(dtype=float)
    out = {"sd": _task_grids(acc.join(sd.rename("_sd"), on=keys), "_sd", "first")}
    if set(INTERVAL_COLUMNS) <= set(acc.columns):
        out.update({bound: _task_grids(acc, bound, complete_mean) for bound in INTERVAL_COLUMNS})
    return out


def table_markdown(grid: pd.DataFrame, percent: bool = True, spread: dict[str, pd.DataFrame] | None = None) -> str:
    """One markdown table per task, accuracies in percent with two decimals as in the paper; with
    `spread` (`accuracy_spread`), a cell reads "mean ± sd [low, high]" where it has them."""
    lines = []
    for task in dict.fromkeys(grid.index.get_level_values("task")):
        part = grid.xs(task, level="task").dropna(axis=1, how="all")
        lines += [
            f"### {task}",
            "",
            "| method | " + " | ".join(map(str, part.columns)) + " |",
            "|---|" + "---:|" * len(part.columns),
        ]
        for method, cells in _row_texts(part, task, percent, spread):
            lines.append(f"| {method} | " + " | ".join(cells) + " |")
        lines.append("")
    return "\n".join(lines)


def table_html(
    grid: pd.DataFrame, title: str = "", percent: bool = True, spread: dict[str, pd.DataFrame] | None = None
) -> str:
    body = []
    for task in dict.fromkeys(grid.index.get_level_values("task")):
        part = grid.xs(task, level="task").dropna(axis=1, how="all")
        head = "".join(f"<th>{html.escape(str(c))}</th>" for c in part.columns)
        rows = "".join(
            f"<tr><th>{html.escape(str(m))}</th>" + "".join(f"<td>{html.escape(c)}</td>" for c in cells) + "</tr>"
            for m, cells in _row_texts(part, task, percent, spread)
        )
        body.append(
            f"<h3>{html.escape(str(task))}</h3><table><thead><tr><th>method</th>{head}</tr></thead>"
            f"<tbody>{rows}</tbody></table>"
        )
    style = (
        "body{font-family:sans-serif}table{border-collapse:collapse;margin-bottom:1.5em}"
        "th,td{border:1px solid #ccc;padding:3px 8px;text-align:right}th:first-child{text-align:left}"
    )
    heading = f"<h2>{html.escape(title)}</h2>" if title else ""
    note = "Test accuracy in percent, mean over seeds"
    if spread is not None:
        note += " ± their standard deviation, then [the 95 % bootstrap interval] (the mean of the seeds' bounds)"
    return (
        f"<!DOCTYPE html><html><head><meta charset='utf-8'><style>{style}</style></head><body>{heading}"
        f"{''.join(body)}<p>{note}.</p></body></html>\n"
    )


def _row_texts(part: pd.DataFrame, task, percent: bool, spread: dict[str, pd.DataFrame] | None):
    """(method, cell texts) per row of one task's block; `spread` adds each cell's sd and interval."""
    extra = {
        name: grid.xs(task, level="task").reindex(index=part.index, columns=part.columns)
        for name, grid in (spread or {}).items()
    }
    for method, row in part.iterrows():
        yield (
            method,
            [
                _cell(c, v, percent, **{name: grid.at[method, c] for name, grid in extra.items()})
                for c, v in row.items()
            ],
        )


def _cell(column, value, percent: bool, sd=np.nan, ci_low=np.nan, ci_high=np.nan) -> str:
    if pd.isna(value):
        return ""
    if column == "seeds":
        return str(int(value))
    scale, fmt = (100, ".2f") if percent else (1, ".4f")
    text = f"{scale * value:{fmt}}"
    if np.isfinite(sd):
        text += f" ± {scale * sd:{fmt}}"
    if np.isfinite(ci_low) and np.isfinite(ci_high):
        text += f" [{scale * ci_low:{fmt}}, {scale * ci_high:{fmt}}]"
    return text


def accuracy_heatmap(table: pd.DataFrame, out: str | Path, title: str = ""):
    """Method x language heatmap of headline test accuracy (percent), one panel per task; a cell
    whose records have intervals also says ± half the 95 % interval (the mean of the seeds')."""
    grid = accuracy_table(table).drop(columns="seeds", errors="ignore")
    acc = _headline_accuracy(table)
    tasks = list(dict.fromkeys(grid.index.get_level_values("task")))
    parts = [grid.xs(task, level="task").dropna(axis=1, how="all") * 100 for task in tasks]
    halves = [halfwidth_grid(acc[acc.task == task], "method", "lang", scale=100) for task in tasks]
    width = 3.5 + 0.75 * max(p.shape[1] for p in parts)
    heights = [1.0 + 0.5 * (TWO_LINES if has_halfwidths(half) else 1) * p.shape[0] for p, half in zip(parts, halves)]
    fig, axes = plt.subplots(
        len(parts), 1, figsize=(width, sum(heights) + 0.6), squeeze=False, gridspec_kw={"height_ratios": heights}
    )
    for ax, task, part, half in zip(axes[:, 0], tasks, parts, halves):
        draw_heatmap(ax, part, half, cbar_label="accuracy (%)", fmt=".1f", mask=part.isna())
        ax.set_title(task)
        ax.set_xlabel("evaluation language")
        ax.set_ylabel("")
    fig.suptitle(title or "Zero-shot test accuracy by method and language")
    return save(fig, out)


def _log_ticks(ax, values) -> None:
    """Log x axis with a tick at each swept value, labelled as written (10, 100, 0.01 ...)."""
    ax.set_xscale("log")
    ax.set_xticks(values, [f"{v:g}" for v in values])
    ax.xaxis.set_minor_locator(matplotlib.ticker.NullLocator())


def _headline_temperature(acc: pd.DataFrame) -> float | None:
    kd = acc[(acc["mode"] == "kd") & _truthy(acc.headline)]
    return float(kd.temperature.iloc[0]) if len(kd) else None


def _headline_size(acc: pd.DataFrame) -> str:
    return str(acc[_truthy(acc.headline)]["size"].iloc[0])


def _band(ax, rows: pd.DataFrame, x: str, points, color) -> None:
    """The 95 % bootstrap band (percent) of a curve whose points average `rows` by `x`."""
    bounds = mean_intervals(rows, x)
    if bounds is not None:
        bounds = bounds.reindex(points)
        interval_band(ax, points, bounds.ci_low, bounds.ci_high, color=color, scale=100)


def _task_panels(acc: pd.DataFrame, axis: str):
    """One panel per task whose runs vary `axis` (every task where none does): the figure and
    (axes, task, that task's rows) per panel."""
    tasks = [t for t in dict.fromkeys(acc.task) if acc[acc.task == t][axis].nunique() > 1] or list(
        dict.fromkeys(acc.task)
    )
    fig, axes = plt.subplots(1, len(tasks), figsize=(6 * len(tasks), 4.5), squeeze=False)
    return fig, [(ax, task, acc[acc.task == task]) for ax, task in zip(axes[0], tasks)]


def _method_curves(part: pd.DataFrame, axis: str):
    """Per method of a panel, in legend order: its rows and the mean and sd of the value per `axis` value."""
    for method in _ordered_methods(part):
        rows = part[part.method == method]
        yield method, rows, rows.groupby(axis)["value"].agg(["mean", "std"]).fillna(0.0)


def _finish_panel(ax, task: str, part: pd.DataFrame, axis: str, xlabel: str) -> None:
    """A panel's log-scale ticks at the `axis` values it draws, its labels, title, grid and legend."""
    _log_ticks(ax, sorted(part[axis].dropna().unique()))
    ax.set_xlabel(xlabel)
    ax.set_ylabel("average test accuracy (%)")
    ax.set_title(task)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)


def accuracy_vs_size(table: pd.DataFrame, out: str | Path, title: str = ""):
    """Average test accuracy over languages against the number of labelled training examples
    (log scale), one line per method (kd at the headline temperature), mean +- std over seeds;
    where the table has them, a darker band of the 95 % bootstrap interval."""
    acc = _test_accuracy(table)
    sizes = table[table.metric == "train_examples"].groupby("run_id")["value"].first()
    acc = acc[(acc.lang == "avg")].assign(examples=lambda d: d.run_id.map(sizes))
    temperature = _headline_temperature(acc)
    if temperature is not None:
        acc = acc[(acc["mode"] != "kd") | np.isclose(acc.temperature.astype(float), temperature)]
    fig, panels = _task_panels(acc, "examples")
    for ax, task, part in panels:
        for method, rows, curve in _method_curves(part, "examples"):
            (line,) = ax.plot(curve.index, 100 * curve["mean"], marker="o", label=method)
            ax.fill_between(
                curve.index, 100 * (curve["mean"] - curve["std"]), 100 * (curve["mean"] + curve["std"]), alpha=0.15
            )
            _band(ax, rows, "examples", curve.index, line.get_color())
        _finish_panel(ax, task, part, "examples", "labelled training examples")
    fig.suptitle(title or "Zero-shot accuracy vs training data size")
    return save(fig, out)


def accuracy_vs_temperature(table: pd.DataFrame, out: str | Path, title: str = ""):
    """KD: average test accuracy over languages against the softmax temperature (log scale) at
    the headline training size; the other methods at that size as horizontal reference lines;
    where the table has them, shaded bands (spans) of the 95 % bootstrap interval."""
    acc = _test_accuracy(table)
    acc = acc[(acc.lang == "avg") & (acc["size"].astype(str) == _headline_size(acc))]
    kd = acc[acc["mode"] == "kd"]
    if kd.empty:
        raise XltError("no kd runs in the table: the temperature plot needs mode kd")
    fig, panels = _task_panels(kd, "temperature")
    for ax, task, part in panels:
        for method, rows, curve in _method_curves(part, "temperature"):
            drawn = ax.errorbar(
                curve.index, 100 * curve["mean"], yerr=100 * curve["std"], marker="o", capsize=3, label=method
            )
            _band(ax, rows, "temperature", curve.index, drawn.lines[0].get_color())
        reference = acc[(acc.task == task) & (acc["mode"] != "kd") & _truthy(acc.headline)]
        for i, method in enumerate(_ordered_methods(reference)):
            rows = reference[reference.method == method]
            ax.axhline(100 * rows.value.mean(), ls="--", lw=1, color=f"C{i + 3}", label=method)
            reference_span(ax, rows, color=f"C{i + 3}", scale=100)
        _finish_panel(ax, task, part, "temperature", "KD softmax temperature T")
    fig.suptitle(title or "MonoX-KD: zero-shot accuracy vs distillation temperature")
    return save(fig, out)


PLOTS = {
    "monox-accuracy-heatmap": accuracy_heatmap,
    "monox-accuracy-vs-size": accuracy_vs_size,
    "monox-accuracy-vs-temperature": accuracy_vs_temperature,
}
