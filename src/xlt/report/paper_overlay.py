"""The paper overlay figure: our matched values (with their intervals) beside the seed studies'
published numbers, one row per matched row of xlt.report.paper's `deltas`; a figure without a
matched row says why instead.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from xlt.report.paper import TABLE


def _why_none(delta: pd.DataFrame) -> str:
    """The figure's line when no published number matched: how many, and the commonest reasons."""
    if delta.empty:
        return "no published numbers for the families of this config"
    heads = delta["reason"].fillna("").str.split(r" \(|:|;", regex=True).str[0]
    common = "; ".join(f"{n} x {why}" for why, n in heads.value_counts().head(3).items())
    return f"none of the {len(delta)} published numbers matches a run ({common}); {TABLE} gives each reason"


REHEARSAL = "REHEARSAL on offline stand-in models and data: our values are not results"


def overlay_plot(delta: pd.DataFrame, out: str | Path, *, demo: bool = False, rehearsal: bool = False):
    """Ours (with the interval where the table has one) beside the published value, one row per
    matched row of `delta`; the unmatched ones are only in the table, with their reason."""
    from xlt.report.figures import plt, save  # deferred: imports matplotlib

    everything = delta
    delta = delta[delta["matched"] == "yes"].reset_index(drop=True) if not demo else delta.iloc[:0]
    fig, ax = plt.subplots(figsize=(8, 1.2 + 0.45 * max(1, len(delta))))
    if delta.empty:
        why = (
            "demo run: its world and models are synthetic, so the papers' numbers are not comparable"
            if demo
            else _why_none(everything)
        )
        ax.text(0.5, 0.5, f"no paper overlay: {why}", ha="center", va="center", wrap=True)
        ax.set_axis_off()
        return save(fig, out)
    labels = [f"{r.run_id} {r.lang} {r.metric}" for r in delta.itertuples()]
    y = range(len(delta))
    # a mean over seeds (or a percentile interval) can lie outside the interval's bounds: that
    # side's whisker is drawn empty, as matplotlib refuses a negative length
    low = (delta["ours"] - delta["ci_low"]).where(delta["ci_low"].notna(), 0).astype(float).clip(lower=0)
    high = (delta["ci_high"] - delta["ours"]).where(delta["ci_high"].notna(), 0).astype(float).clip(lower=0)
    ax.errorbar(delta["ours"].astype(float), list(y), xerr=[low, high], fmt="o", label="ours (95 % CI where present)")
    for i, row in enumerate(delta.itertuples()):
        ax.plot(row.theirs, i, marker="D", color="tab:red", linestyle="none", label="published" if i == 0 else None)
        ax.annotate(
            row.source.split(",")[0][:60],
            (row.theirs, i),
            textcoords="offset points",
            xytext=(6, 4),
            fontsize=7,
            color="tab:red",
        )
    ax.set_yticks(list(y), labels)
    ax.set_xlabel("value (our units)")
    ax.legend(loc="lower right", fontsize=8)
    if rehearsal:
        ax.set_title(f"ours beside the seed studies' published numbers\n{REHEARSAL}", color="tab:red")
    else:
        ax.set_title("ours beside the seed studies' published numbers")
    return save(fig, out)
