"""Where a seed study names a setting otherwise than our run tables do (xlt.report.paper).

Published rows keep the paper's own labels (``step=501`` is the paper's "#501"); these rules
say which of our rows such a label means. Nothing here changes a published value.

Each family declares its own in its plan (xlt.core.family_plan.FamilyPlan): `PAPER_ONE_BASED`
and `PAPER_DOMAIN_MEANS`.

- **1-based steps** (adapt's `PAPER_ONE_BASED`): seed 003, Table 1, numbers its measurements "Fine-tuning
  steps #1, #501, #1501", taken "at every 50 steps" (A.2): #1, #51, ..., #501 are the 1st, 51st,
  501st steps of a 1-based count, so #1 is the model before any update and #s the model after
  s-1 updates. Our adapt runs evaluate at step 0 (the untouched model) and after every
  ``adapt.training.eval_every`` (K) updates, so a published ``step=s`` is our ``step`` s-1:
  #1 -> 0, #501 -> 500, #1501 -> 1500 (reached by the curve runs, scheme 0-12 in ``adapt.curve.schemes``,
  with K = 50: config/paper.yaml).
- **domain means** (monox's `PAPER_DOMAIN_MEANS`): seed 002, Table 1, "The results on CLS are averaged over
  three domains"; our MonoX table has one task per domain (cls-books, cls-dvd, cls-music). A
  published ``task=cls`` row is matched by the mean of our three domain rows of one run setting
  (same model, mode, size, seed, language, split, metric ...), and only when all three are
  there. Its ``run_id`` joins the three runs' ids with ``+``; its interval is left empty (the
  domains' bootstrap intervals do not make one for the mean), and its ``note`` says so.
"""

from __future__ import annotations

import pandas as pd

from xlt.core import registry


def one_based(family: str) -> frozenset[str]:
    """Setting keys the family's seed study counts from 1, our tables from 0."""
    return frozenset(registry.plan(family).PAPER_ONE_BASED) if family in registry.names() else frozenset()


def domain_means(family: str) -> dict[tuple[str, str], tuple[str, ...]]:
    """(setting key, published value) -> the values of our per-domain rows it averages."""
    return dict(registry.plan(family).PAPER_DOMAIN_MEANS) if family in registry.names() else {}


NOT_KEYS = {"run_id", "value", "ci_low", "ci_high", "note"}  # columns that are no part of a run setting


def ours(family: str, key: str, value: str) -> tuple[str | tuple[str, ...], str, str]:
    """(the value or values of our column `key` that `value` means, the reason's label of the
    check, a note for a matched row: empty when the paper's label is ours)."""
    if key in one_based(family):
        number = pd.to_numeric(value, errors="coerce")
        if pd.notna(number) and float(number).is_integer() and number >= 1:
            step = int(number) - 1
            return (
                str(step),
                f"published {key}={value} is our {key} {step}",
                f"published {key} #{value} (1-based) is our {key} {step}",
            )
    domains = domain_means(family).get((key, value))
    if domains:
        return domains, f"{key}={value}, the mean over {', '.join(domains)}", ""
    return value, f"{key}={value}", ""


def domain_mean(rows: pd.DataFrame, family: str, key: str, value: str) -> tuple[pd.DataFrame, str]:
    """The rows of `rows` (matching every other check) averaged over the domains of a published
    `key=value` (domain_means): one row per run setting with exactly one row per domain, or
    none and which domains are missing."""
    domains = domain_means(family)[(key, value)]
    settings = [c for c in rows.columns if c not in NOT_KEYS | {key} and rows[c].notna().any()]
    out, missing = [], set()
    for _, group in rows.groupby(settings, dropna=False, sort=False) if settings else [((), rows)]:
        counts = group[key].value_counts()
        missing |= {d for d in domains if d not in counts.index}
        if any(d not in counts.index for d in domains):
            continue
        if (counts[list(domains)] > 1).any():
            continue
        parts = group.set_index(key).loc[list(domains)]
        mean = group.iloc[0].copy()
        mean[key], mean["value"] = value, float(parts["value"].mean())
        mean["run_id"] = "+".join(str(r) for r in parts["run_id"])
        for bound in ("ci_low", "ci_high"):
            if bound in mean.index:
                mean[bound] = float("nan")
        mean["note"] = f"mean over {len(domains)} domain rows ({key} {', '.join(domains)}); no interval for the mean"
        out.append(mean)
    if out:
        return pd.DataFrame(out), ""
    label = f"{key}={value} is the mean over {', '.join(domains)}"
    if missing:
        lacking = ", ".join(d for d in domains if d in missing)
        return rows.iloc[:0], f"no run with every domain of that setting ({label}; missing: {lacking})"
    return rows.iloc[:0], f"no run with one row per domain ({label}; a domain has several rows of that setting)"
