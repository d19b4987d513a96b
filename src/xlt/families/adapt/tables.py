"""The adapt family's summary tables: final perplexity per layer scheme, like the seed's Table 2,
and its tokenizer-independent counterpart, NLL per word and per character (`word_nll_table`).

Reads the tidy table of `xlt aggregate` (adaptation runs + reference models). Final records are
the ones without a `step`: the selected model of a run (or an untouched reference model)
evaluated once on every fixed-masked set, the test set included. Perplexity is per word piece,
so it compares only models that share a tokenizer; NLL per word / character compares across them.
"""

from __future__ import annotations

import pandas as pd

from xlt.core.errors import XltError
from xlt.families.adapt.scheme_names import scheme_order

ROLE_ORDER = {"adapted": 0, "transfer": 1, "native": 2}


def eval_set_name(lang: str, split: str) -> str:
    return f"{lang}/{split}"


def _require_columns(table: pd.DataFrame, columns: list[str]) -> None:
    missing = [c for c in columns if c not in table.columns]
    if missing:
        raise XltError(
            f"the table has no column(s) {missing}; expected the tidy CSV of `xlt aggregate` over "
            "adapt-mlm and reference perplexity metrics"
        )


# the tokenizer-independent metrics (xlt.families.adapt.word_nll), in table order
WORD_METRICS = ("nll_per_word", "nll_per_char")


def final_records(table: pd.DataFrame, metric: str = "perplexity") -> pd.DataFrame:
    _require_columns(table, ["metric", "value", "model", "role", "scheme", "lang", "split"])
    step = table["step"] if "step" in table.columns else pd.Series(float("nan"), index=table.index)
    final = table[(table.metric == metric) & step.isna()].copy()
    if final.empty:
        raise XltError(
            f"no final {metric} records ({metric} without step) in the table"
            + (" (adapt-mlm / xlt perplexity write them with --pll-sentences)" if metric in WORD_METRICS else "")
        )
    final["eval_set"] = [eval_set_name(lang, split) for lang, split in zip(final["lang"], final["split"])]
    return final


def final_perplexity_table(table: pd.DataFrame, metric: str = "perplexity") -> pd.DataFrame:
    """One row per (model, role, scheme): seeds, and mean / sd over seeds of the final perplexity
    (or another final `metric`) on every evaluation set (columns `<lang>/<split> mean`,
    `<lang>/<split> sd`), plus the mean selected step of adapted runs. When the tidy table has
    bootstrap intervals, the mean of the seeds' bounds follows at the end (`<lang>/<split> ci_low`,
    `<lang>/<split> ci_high`; empty where a run has none)."""
    final = final_records(table, metric)
    keys = ["model", "role", "scheme"]
    stats = final.groupby(keys + ["eval_set"])["value"].agg(["mean", "std", "count"]).reset_index()
    # pivot, not pivot_table: a single-seed sd is NaN and pivot_table would drop those columns
    wide = stats.pivot(index=keys, columns="eval_set", values=["mean", "std"])
    wide.columns = [f"{eval_set} {'sd' if stat == 'std' else 'mean'}" for stat, eval_set in wide.columns]
    ordered = sorted({c.rsplit(" ", 1)[0] for c in wide.columns}, key=lambda s: (s.startswith("multilingual"), s))
    wide = wide[[f"{s} {stat}" for s in ordered for stat in ("mean", "sd")]]
    seeds = stats.groupby(keys)["count"].max().rename("seeds")
    out = wide.join(seeds).reset_index()
    if "selected_step" in set(table.metric):
        chosen = table[table.metric == "selected_step"].groupby(keys)["value"].mean().rename("selected step mean")
        out = out.merge(chosen.reset_index(), on=keys, how="left")
    from xlt.report.figures import mean_intervals  # here: the figures module loads matplotlib

    bounds = mean_intervals(final, keys + ["eval_set"])
    if bounds is not None:
        wide_bounds = bounds.unstack("eval_set")
        for eval_set in ordered:
            for bound in ("ci_low", "ci_high"):
                column = wide_bounds[(bound, eval_set)] if (bound, eval_set) in wide_bounds.columns else None
                out[f"{eval_set} {bound}"] = (
                    float("nan")
                    if column is None
                    else [column.get(tuple(k), float("nan")) for k in out[keys].to_numpy()]
                )
    out["_order"] = [(ROLE_ORDER.get(r, 9), scheme_order(s), m) for r, s, m in zip(out.role, out.scheme, out.model)]
    out = out.sort_values("_order", kind="stable").drop(columns="_order").reset_index(drop=True)
    return out[
        ["model", "role", "scheme", "seeds"] + [c for c in out.columns if c not in ("model", "role", "scheme", "seeds")]
    ]


def word_nll_table(table: pd.DataFrame) -> pd.DataFrame:
    """`final_perplexity_table` of NLL per word and of NLL per character (nats), stacked, with a
    leading `metric` column: the numbers that compare across tokenizers (no intervals: the
    word-level scores keep no per-sentence outputs). Beside them, where the runs recorded it, the
    [UNK] share of the scored pieces per language (metric unk_share, columns `<lang>/<split>`: a
    pooled set's languages one by one), and `unk flagged`: the languages of a row's model whose
    share was above adapt.word_nll.max_unk_share in any seed (their NLL is flattered)."""
    metrics = [*WORD_METRICS, *(["unk_share"] if "unk_share" in set(table.metric) else [])]
    parts = [final_perplexity_table(table, metric).assign(metric=metric) for metric in metrics]
    out = pd.concat(parts, ignore_index=True)
    if "unk_share" in metrics:
        flags = final_records(table, "unk_flagged")
        flagged = (
            flags[flags.value > 0]
            .groupby(["model", "role", "scheme"])["lang"]
            .agg(lambda langs: ", ".join(sorted(set(langs))))
        )
        out["unk flagged"] = [flagged.get((m, r, s), "") for m, r, s in zip(out.model, out.role, out.scheme)]
    return out[["metric"] + [c for c in out.columns if c != "metric"]]
