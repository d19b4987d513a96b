"""The seed studies' published numbers (each family's ``paper_results.csv``) beside ours.

A paper row is ``setting, language, metric, value, source``. ``setting`` is ``key=value``
pairs joined by ``;``, each key a column of the family's run table. Values are in our tables'
units (accuracies and correlations as 0-1 fractions; the source column says what the paper
printed).

Matching a published row against a run-table row (`deltas`), in this order:

- ``model``: the model the run *loads*, not the config's nickname in the table's ``model``
  column: the nickname's hub id or path (``models.<name>.path``, the ``--model NAME=REF`` pairs
  of `config_args`) without its ``@revision`` pin (the papers name none). A published value with
  an owner (``GroNLP/bert-base-dutch-cased``) must equal the hub id; one without
  (``roberta-large``) is compared with its last part, since the hub later moved the legacy ids
  under owners (``FacebookAI/roberta-large``). Monox's ``model`` column is the model the job
  trains (teacher or student), so the same rule holds there;
- ``metric``, then every other setting key, compared as text (6.0, 6 and "6" are one value);
- ``split`` on both sides in our config's names: the hub's ``validation`` is our ``dev``
  (config ``split_names: {dev: validation}``). A table without a ``split`` column (freeze_depth:
  its records carry none) takes the family's evaluation split from the config
  (``<family>.eval.split``, the ``--split FAMILY=SPLIT`` pairs of `config_args`);
- ``language`` equals ``lang``; a published ``<name>-mix`` (sentences pooled over a dataset's
  languages) is our pooled set, ``lang`` ``multilingual`` (adapt; which dataset it was drawn
  from is the family's config, not checked here);
- where the paper labels a setting otherwise (`xlt.report.paper_match`, with the seeds' words):
  adapt's published ``step=s`` counts from 1 (seed 003's "step #1" is the model before any
  update), so it is our ``step`` s-1 (#1 -> 0, #501 -> 500, #1501 -> 1500); MonoX's
  ``task=cls`` is the mean over the three CLS domains, so it is matched by the mean of our
  cls-books, cls-dvd and cls-music rows of one run setting, when all three are there (no
  interval for the mean). A matched row's ``note`` says which rule made it;
- a column the published setting leaves unnamed but our matched rows vary in (dual's STS rows,
  one per similarity; seeds aside) gives one matched row per value, each ``note`` naming it.

`deltas` accounts for every published number: one row per matching run-table row (so one per
seed when seeds match), ``matched`` yes, ours minus theirs in ``delta``; or one row with
``matched`` no and the ``reason`` of the first check nothing passed (different model, metric
not computed, no run with that setting or language, family not in this config, demo run).
"""

from __future__ import annotations

import re
import shlex
from functools import partial
from pathlib import Path

import pandas as pd

from xlt.core import registry, settings
from xlt.core.errors import XltError
from xlt.core.model_files import split_revision
from xlt.core.plan import model_ref
from xlt.core.tables import read_table
from xlt.report import paper_match

COLUMNS = ["setting", "language", "metric", "value", "source"]
PUBLISHED = "paper_results.csv"  # a family's published numbers, in its folder
# the metric names our evaluations write (xlt.evaluate, xlt.families.*)
METRICS = {"accuracy", "pearson", "spearman", "perplexity", "error", "mean_error", "accuracy@1", "mean_accuracy@1"}
# ISO 639-1 codes, `avg` (an average over the paper's languages) or a named mixture such as `xnli-mix`
LANGUAGE = re.compile(r"^([a-z]{2}|avg|[a-z]+-mix)$")
DELTA_COLUMNS = [
    "family",
    "setting",
    "lang",
    "metric",
    "theirs",
    "matched",
    "reason",
    "note",
    "run_id",
    "ours",
    "ci_low",
    "ci_high",
    "delta",
    "source",
]
# the hub's split names -> ours (config split_names map ours to the hub's: {dev: validation})
SPLIT_ALIASES = {"validation": "dev"}
POOLED = "multilingual"  # our `lang` of a set pooled over languages; the papers write <name>-mix
DEMO = "demo run: synthetic languages and tiny models, no setting is comparable to a paper"
NOT_IN_CONFIG = "family not in this config"
SHOWN = 8  # values listed in a reason before "..."
REASONS = {"metric": "metric not computed", "lang": "no run in that language"}  # other keys: no run with that setting


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


def published_files(folder: Path | None = None) -> dict[str, Path]:
    """family -> its published numbers: `PUBLISHED` in the folder of every registered family
    that has one, or with `folder`, that folder's `<family>.csv` files."""
    if folder is not None:
        return {path.stem: path for path in sorted(Path(folder).glob("*.csv"))}
    return {
        name: registry.folder(name) / PUBLISHED
        for name in registry.names()
        if (registry.folder(name) / PUBLISHED).is_file()
    }


def load(family: str, folder: Path | None = None) -> pd.DataFrame:
    """The published rows for `family` (empty when its seed study printed no comparable number)."""
    path = published_files(folder).get(family)
    if path is None:
        return pd.DataFrame(columns=COLUMNS)
    return check(pd.read_csv(path, dtype={"setting": str, "language": str, "metric": str, "source": str}), str(path))


def _text(value) -> str:
    # 6.0 and 6 and "6" are one setting; NaN is no setting
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def split_name(split) -> str:
    """A split in our config's names (validation -> dev)."""
    return SPLIT_ALIASES.get(str(split), str(split))


def loaded_name(ref: str, published: str) -> bool:
    """Whether the model `ref` (hub id or path, maybe `@revision`-pinned) is the published `model`."""
    hub_id, _ = split_revision(str(ref))
    hub_id = hub_id.rstrip("/")
    mine = hub_id if "/" in published else hub_id.rsplit("/", 1)[-1]
    return mine.lower() == published.lower()


def _order(text: str):
    number = pd.to_numeric(text, errors="coerce")  # steps and depths in numeric order
    return (0, float(number), "") if pd.notna(number) else (1, 0.0, text)


def _listing(values: pd.Series) -> str:
    seen = sorted({_text(v) for v in values if pd.notna(v)}, key=_order)
    return ", ".join(seen[:SHOWN]) + (", ..." if len(seen) > SHOWN else "") if seen else "none"


def _equal(column: str, value, wanted: str | tuple[str, ...]) -> bool:
    if isinstance(wanted, tuple):  # any of them (a domain mean's domains)
        return any(_equal(column, value, one) for one in wanted)
    if pd.isna(value):
        return False
    if column == "lang" and wanted.endswith("-mix"):
        return value == POOLED
    return (split_name(value) if column == "split" else _text(value)) == wanted


def _narrow(rows: pd.DataFrame, family: str, checks: list[tuple]) -> tuple[pd.DataFrame, str]:
    """The rows passing every (column, wanted, label, note) check in turn, or none and why the
    first failed (`label` names the check in the reason)."""
    for column, wanted, label, _ in checks:
        if column not in rows.columns:
            return rows.iloc[:0], f"no run with that setting ({label}; the {family} table has no {column} column)"
        keep = rows[column].map(partial(_equal, column, wanted=wanted))
        if not keep.any():
            why = REASONS.get(column, "no run with that setting")
            return rows.iloc[:0], f"{why} ({label}; ours: {_listing(rows[column])})"
        rows = rows[keep]
    return rows, ""


def _checks(family: str, theirs: dict, setting: dict[str, str]) -> list[tuple]:
    """(our column, the value(s) it must hold, the reason's label, a matched row's note) per
    published key but the model: the paper's labels mapped onto ours (xlt.report.paper_match)."""
    keys = [("metric", theirs["metric"])] + [(k, v) for k, v in setting.items() if k != "model"]
    checks = [
        (key, *paper_match.ours(family, key, split_name(value) if key == "split" else value)) for key, value in keys
    ]
    return checks + [("lang", theirs["language"], f"lang={theirs['language']}", "")]


def match(runs: pd.DataFrame, family: str, theirs: dict, models: dict[str, str]) -> tuple[pd.DataFrame, str]:
    """The run-table rows that match the published row `theirs`, or none and the reason; a
    matched row carries a `note` where the paper's label is not ours (paper_match)."""
    setting = parse_setting(theirs["setting"])
    checks = _checks(family, theirs, setting)
    rows = runs[runs["family"] == family] if "family" in runs.columns else runs.iloc[:0]
    if rows.empty:
        return rows, f"no {family} run in its table"
    if "model" in setting:
        if "model" not in rows.columns:
            return rows.iloc[:0], f"no run with that setting (the {family} table has no model column)"
        loads = rows["model"].map(lambda name: models.get(name, name) if pd.notna(name) else None)
        same = loads.map(lambda ref: ref is not None and loaded_name(ref, setting["model"]))
        if not same.any():
            trained = ", ".join(
                sorted(
                    {
                        f"{split_revision(str(ref))[0]} ({name})"
                        for name, ref in zip(rows["model"], loads)
                        if ref is not None
                    }
                )
            )
            rest, _ = _narrow(rows, family, checks)
            tail = "; our runs have the rest of this setting and language" if not rest.empty else ""
            return rows.iloc[:0], (
                f"different model: the config trains {trained}, the paper reports {setting['model']}{tail}"
            )
        rows = rows[same]
    rows, reason = _narrow(rows, family, checks)
    for key, value in setting.items():
        if not rows.empty and (key, value) in paper_match.domain_means(family):
            rows, reason = paper_match.domain_mean(rows, family, key, value)
    notes = "; ".join(note for *_, note in checks if note)
    if notes and not rows.empty:
        before = rows["note"] if "note" in rows.columns else [None] * len(rows)
        rows = rows.assign(note=[f"{n}; {notes}" if isinstance(n, str) else notes for n in before])
    return _unnamed(rows, setting), reason


def _unnamed(rows: pd.DataFrame, setting: dict[str, str]) -> pd.DataFrame:
    """Where the matched rows differ in a column the published setting does not name (dual's STS
    rows, one per similarity), each row's `note` says its value: the paper picked one of them
    without saying which. Seeds are replicates (one row each), not noted."""
    unnamed = [
        c
        for c in rows.columns
        if c not in paper_match.NOT_KEYS | set(setting) | {"family", "metric", "lang", "seed"}
        and rows[c].nunique(dropna=True) > 1
    ]
    if not unnamed:
        return rows
    notes = [
        ", ".join(f"{c}={_text(v)}" for c, v in zip(unnamed, values)) + " (the paper names none)"
        for values in rows[unnamed].itertuples(index=False)
    ]
    before = rows["note"] if "note" in rows.columns else [None] * len(rows)
    return rows.assign(note=[f"{n}; {m}" if isinstance(n, str) else m for n, m in zip(before, notes)])


def _unmatched(family: str, theirs: dict, reason: str) -> dict:
    return {
        "family": family,
        "setting": theirs["setting"],
        "lang": theirs["language"],
        "metric": theirs["metric"],
        "theirs": float(theirs["value"]),
        "matched": "no",
        "reason": reason,
        "source": theirs["source"],
    }


def deltas(
    runs: pd.DataFrame,
    family: str,
    folder: Path | None = None,
    *,
    models: dict[str, str] | None = None,
    split: str | None = None,
) -> pd.DataFrame:
    """Every published number of `family` beside the run-table rows it matches (one row each)
    or, matching none, once with the reason. `models`: config name -> the hub id or path it
    loads (config_args); `split`: the family's evaluation split where its table has no split."""
    runs = runs if "split" in runs.columns or split is None else runs.assign(split=split)
    out = []
    for _, theirs in load(family, folder).iterrows():
        rows, reason = match(runs, family, theirs, models or {})
        if rows.empty:
            out.append(_unmatched(family, theirs, reason))
        for _, ours in rows.iterrows():
            out.append(
                {
                    **_unmatched(family, theirs, ""),
                    "matched": "yes",
                    "note": ours.get("note"),
                    "run_id": ours["run_id"],
                    "ours": ours["value"],
                    "ci_low": ours.get("ci_low"),
                    "ci_high": ours.get("ci_high"),
                    "delta": ours["value"] - float(theirs["value"]),
                }
            )
    return pd.DataFrame(out, columns=DELTA_COLUMNS)


TABLE = "results/tables/paper_delta.csv"
PLOT = "results/plots/paper_overlay.png"


def family_tables(config: dict) -> dict[str, str]:
    """family -> its run table, for the enabled families that have published numbers."""
    published = published_files()
    return {
        name: settings.plan_module(name).TABLE
        for name in registry.names()
        if settings.family(config, name) is not None and name in published
    }


def targets(config: dict) -> list[str]:
    return [TABLE, PLOT] if family_tables(config) else []


def config_args(config: dict) -> str:
    """`xlt paper-delta`'s view of the config, shell-quoted for the rule: `--model NAME=REF` for
    every configured model (what its jobs load, xlt.core.plan.model_ref) and `--split
    FAMILY=SPLIT` for every enabled family that names one evaluation split (`<family>.eval.split`);
    `--rehearsal` for a config `xlt rehearse` derived."""
    args = [a for name in config["models"] for a in ("--model", f"{name}={model_ref(config, name)}")]
    if config["report"].get("rehearsal"):
        args.append("--rehearsal")
    for name in registry.names():
        evaluation = (settings.family(config, name) or {}).get("eval", {})
        if isinstance(evaluation.get("split"), str):
            args += ["--split", f"{name}={evaluation['split']}"]
    return shlex.join(args)


def published_families(folder: Path | None = None) -> list[str]:
    return sorted(published_files(folder))


def compare(
    tables: dict[str, str | Path],
    *,
    demo: bool,
    models: dict[str, str] | None = None,
    splits: dict[str, str] | None = None,
    folder: Path | None = None,
) -> pd.DataFrame:
    """paper_delta: every published number of every family, matched against the run tables
    `tables` (family -> CSV). A family without a table is not in this config; in a demo run
    nothing matches (its synthetic languages and tiny models share no setting with a paper)."""
    parts = []
    for family in published_families(folder):
        if demo or family not in tables:
            rows = [
                _unmatched(family, theirs, DEMO if demo else NOT_IN_CONFIG)
                for _, theirs in load(family, folder).iterrows()
            ]
            parts.append(pd.DataFrame(rows, columns=DELTA_COLUMNS))
        else:
            parts.append(
                deltas(read_table(tables[family]), family, folder, models=models, split=(splits or {}).get(family))
            )
    parts = [p for p in parts if not p.empty]
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=DELTA_COLUMNS)
