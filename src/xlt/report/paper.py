"""The seed studies' published numbers (``paper_results/<family>.csv``) beside ours.

A paper row is ``setting, language, metric, value, source``. ``setting`` is ``key=value``
pairs joined by ``;``; a run-table row matches when the family is the file's, every setting key
is a column of the run table with that value (compared as text), ``lang`` equals ``language``
and the metrics agree. Values are in our tables' units (accuracies and correlations as 0-1
fractions; the source column says what the paper printed). A key the run table lacks never
matches, so a published number is only drawn beside a run that really has that setting.
"""
from __future__ import annotations

import re
from importlib import resources
from pathlib import Path

import pandas as pd

from xlt.core.errors import XltError

COLUMNS = ["setting", "language", "metric", "value", "source"]
# the metric names our evaluations write (xlt.evaluate, xlt.families.*)
METRICS = {"accuracy", "pearson", "spearman", "perplexity", "error", "mean_error", "accuracy@1", "mean_accuracy@1"}
# ISO 639-1 codes, `avg` (an average over the paper's languages) or a named mixture such as `xnli-mix`
LANGUAGE = re.compile(r"^([a-z]{2}|avg|[a-z]+-mix)$")
DELTA_COLUMNS = ["family", "run_id", "setting", "lang", "metric", "ours", "ci_low", "ci_high", "theirs", "delta", "source"]


def parse_setting(text: str) -> dict[str, str]:
    pairs = [p for p in text.split(";") if p]
    out = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key or not value:
            raise XltError(f"paper setting {text!r}: {pair!r} is not key=value")
        out[key] = value
    return out


def check(table: pd.DataFrame, name: str) -> pd.DataFrame:
    """Every row has a setting, a known metric, a valid language, a finite value and a source."""
    if list(table.columns) != COLUMNS:
        raise XltError(f"{name}: columns are {list(table.columns)}, expected {COLUMNS}")
    for i, row in table.iterrows():
        where = f"{name} row {i + 2}"
        parse_setting(str(row["setting"]))
        if row["metric"] not in METRICS:
            raise XltError(f"{where}: metric {row['metric']!r} is not one we compute {sorted(METRICS)}")
        if not LANGUAGE.match(str(row["language"])):
            raise XltError(f"{where}: language {row['language']!r} is not an ISO 639-1 code, 'avg' or '<name>-mix'")
        if not isinstance(row["source"], str) or len(row["source"].strip()) < 20:
            raise XltError(f"{where}: needs a source (citation and table or figure)")
        if not pd.notna(pd.to_numeric(row["value"], errors="coerce")):
            raise XltError(f"{where}: value {row['value']!r} is not a number")
    return table


def paper_dir() -> Path:
    return Path(str(resources.files("xlt.report") / "paper_results"))


def load(family: str, folder: Path | None = None) -> pd.DataFrame:
    """The published rows for `family` (empty when its seed study printed no comparable number)."""
    path = (folder or paper_dir()) / f"{family}.csv"
    if not path.exists():
        return pd.DataFrame(columns=COLUMNS)
    return check(pd.read_csv(path, dtype={"setting": str, "language": str, "metric": str, "source": str}), str(path))


def _text(value) -> str:
    # 6.0 and 6 and "6" are one setting; NaN is no setting
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def deltas(runs: pd.DataFrame, family: str, folder: Path | None = None) -> pd.DataFrame:
    """Ours minus theirs for every run-table row that matches a published row of `family`."""
    paper = load(family, folder)
    out = []
    for _, theirs in paper.iterrows():
        setting = parse_setting(theirs["setting"])
        if any(key not in runs.columns for key in setting) or "lang" not in runs.columns:
            continue
        mask = (runs["family"] == family) & (runs["metric"] == theirs["metric"]) & (runs["lang"] == theirs["language"])
        for key, value in setting.items():
            mask &= runs[key].map(lambda v: pd.notna(v) and _text(v) == value)
        for _, ours in runs[mask].iterrows():
            out.append({"family": family, "run_id": ours["run_id"], "setting": theirs["setting"], "lang": ours["lang"],
                        "metric": theirs["metric"], "ours": ours["value"],
                        "ci_low": ours.get("ci_low"), "ci_high": ours.get("ci_high"),
                        "theirs": float(theirs["value"]), "delta": ours["value"] - float(theirs["value"]),
                        "source": theirs["source"]})
    return pd.DataFrame(out, columns=DELTA_COLUMNS)


def overlay_plot(delta: pd.DataFrame, out: str | Path, *, demo: bool = False):
    """Ours (with the interval where the table has one) beside the published value, one row per match."""
    from xlt.report.figures import plt, save

    fig, ax = plt.subplots(figsize=(8, 1.2 + 0.45 * max(1, len(delta))))
    if demo or delta.empty:
        why = ("demo run: its world and models are synthetic, so the papers' numbers are not comparable"
               if demo else "no run matches a published setting (family, setting, language, metric)")
        ax.text(0.5, 0.5, f"no paper overlay: {why}", ha="center", va="center", wrap=True)
        ax.set_axis_off()
        return save(fig, out)
    labels = [f"{r.run_id} {r.lang} {r.metric}" for r in delta.itertuples()]
    y = range(len(delta))
    low = (delta["ours"] - delta["ci_low"]).where(delta["ci_low"].notna(), 0).astype(float)
    high = (delta["ci_high"] - delta["ours"]).where(delta["ci_high"].notna(), 0).astype(float)
    ax.errorbar(delta["ours"].astype(float), list(y), xerr=[low, high], fmt="o", label="ours (95 % CI where present)")
    for i, row in enumerate(delta.itertuples()):
        ax.plot(row.theirs, i, marker="D", color="tab:red", linestyle="none",
                label="published" if i == 0 else None)
        ax.annotate(row.source.split(",")[0][:60], (row.theirs, i), textcoords="offset points", xytext=(6, 4),
                    fontsize=7, color="tab:red")
    ax.set_yticks(list(y), labels)
    ax.set_xlabel("value (our units)")
    ax.legend(loc="lower right", fontsize=8)
    ax.set_title("ours beside the seed studies' published numbers")
    return save(fig, out)


TABLE = "results/tables/paper_delta.csv"
PLOT = "results/plots/paper_overlay.png"


def family_tables(config: dict) -> dict[str, str]:
    """family -> its run table, for the enabled families that have published numbers."""
    from xlt.core import settings

    return {name: settings.plan_module(name).TABLE for name in settings.FAMILIES
            if settings.family(config, name) is not None and (paper_dir() / f"{name}.csv").exists()}


def targets(config: dict) -> list[str]:
    return [TABLE, PLOT] if family_tables(config) else []


def compare(tables: dict[str, str | Path], *, demo: bool, folder: Path | None = None) -> pd.DataFrame:
    """paper_delta for the run tables `tables` (family -> CSV); empty for a demo run, whose
    synthetic languages and tiny models share no setting with a paper."""
    from xlt.report.aggregate import read_table  # the table with its summary rows (lang avg)

    if demo:
        return pd.DataFrame(columns=DELTA_COLUMNS)
    parts = [deltas(read_table(path), family, folder) for family, path in tables.items()]
    parts = [p for p in parts if not p.empty]
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=DELTA_COLUMNS)
