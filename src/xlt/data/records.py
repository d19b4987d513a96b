"""The one normalised record format every family reads, whatever the source.

  nli / sentiment   text, [text_pair], label (int)
  sts               text, text_pair, score (float)
  bitext            text (the language's side), text_pair (English)
  corpus            text
"""
from __future__ import annotations

from xlt.core.errors import XltError

TASK_FIELDS = {
    "nli": ("text", "text_pair", "label"),
    "sentiment": ("text", "label"),
    "sts": ("text", "text_pair", "score"),
    "bitext": ("text", "text_pair"),
    "corpus": ("text",),
}
NUM_LABELS = {"nli": 3, "sentiment": 2}


def normalise(rows: list[dict], task: str, name: str, columns: dict | None = None,
              label_names: list[str] | None = None, labelled: bool = True) -> list[dict]:
    """Rename source columns to the normalised fields, map string labels to ids, drop
    rows without a gold label (e.g. MultiNLI's label -1). With ``labelled=False`` (an
    unlabelled pool) only the input fields are kept."""
    if task not in TASK_FIELDS:
        raise XltError(f"dataset {name}: unknown task {task!r}; use one of {', '.join(TASK_FIELDS)}")
    fields = TASK_FIELDS[task] if labelled else tuple(f for f in TASK_FIELDS[task] if f not in ("label", "score"))
    columns = {f: f for f in fields} | (columns or {})
    label_ids = {str(n): i for i, n in enumerate(label_names)} if label_names else None
    out = []
    for i, row in enumerate(rows):
        missing = [columns[f] for f in fields if columns[f] not in row]
        if missing:
            raise XltError(
                f"dataset {name}: row {i} has no column(s) {missing}; it has {sorted(map(str, row))}. "
                f"Map them with datasets.{name}.columns, e.g. {{text: <column>}}"
            )
        record = {f: row[columns[f]] for f in fields}
        if "label" in record:
            label = record["label"]
            if label_ids is not None and str(label) in label_ids:
                label = label_ids[str(label)]
            try:
                label = int(label)
            except (TypeError, ValueError):
                raise XltError(f"dataset {name}: row {i} has label {label!r}; declare datasets.{name}.label_names "
                               f"to map string labels to ids") from None
            if label < 0:
                continue
            if label >= NUM_LABELS[task]:
                raise XltError(f"dataset {name}: row {i} has label {label}, but task {task} has "
                               f"{NUM_LABELS[task]} labels")
            record["label"] = label
        if "score" in record:
            record["score"] = float(record["score"])
        for f in ("text", "text_pair"):
            if f in record:
                record[f] = str(record[f]).strip()
        out.append(record)
    return out
