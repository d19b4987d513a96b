"""The one normalised record format every family reads, whatever the source.

nli / sentiment   text, [text_pair], label (int)
sts               text, text_pair, score (float)
bitext            text (the language's side), text_pair (English)
corpus            text
"""

from __future__ import annotations

from xlt.core.errors import XltError
from xlt.core.io import numbered_jsonl

TASK_FIELDS = {
    "nli": ("text", "text_pair", "label"),
    "sentiment": ("text", "label"),
    "sts": ("text", "text_pair", "score"),
    "bitext": ("text", "text_pair"),
    "corpus": ("text",),
}
NUM_LABELS = {"nli": 3, "sentiment": 2}


def source_columns(task: str, name: str, columns: dict | None = None, labelled: bool = True) -> dict:
    """Normalised field -> the source column it is read from (`columns` renames, by name or index)."""
    if task not in TASK_FIELDS:
        raise XltError(f"dataset {name}: unknown task {task!r}; use one of {', '.join(TASK_FIELDS)}")
    fields = TASK_FIELDS[task] if labelled else tuple(f for f in TASK_FIELDS[task] if f not in ("label", "score"))
    return {f: (columns or {}).get(f, f) for f in fields}


def normalise(
    rows: list[dict],
    task: str,
    name: str,
    columns: dict | None = None,
    label_names: list[str] | None = None,
    labelled: bool = True,
    origin: str | None = None,
    lines: list[int] | None = None,
) -> list[dict]:
    """Rename source columns to the normalised fields, map string labels to ids, drop
    rows without a gold label (e.g. MultiNLI's label -1). With ``labelled=False`` (an
    unlabelled pool) only the input fields are kept. Errors name `origin` (the file) and the
    row's line in it (`lines[i]`), else the row's index."""
    wanted = source_columns(task, name, columns, labelled)
    label_ids = {str(n): i for i, n in enumerate(label_names)} if label_names else None

    def where(i: int) -> str:
        if origin is None:
            return f"dataset {name}: row {i}"
        return f"{origin} line {lines[i]}" if lines is not None else f"{origin} row {i}"

    out = []
    for i, row in enumerate(rows):
        missing = [column for column in wanted.values() if column not in row]
        if missing:
            raise XltError(
                f"{where(i)} has no column(s) {missing}; it has {sorted(map(str, row))}. "
                f"Map them with datasets.{name}.columns, e.g. {{text: <column>}}"
            )
        record = {f: row[column] for f, column in wanted.items()}
        if "label" in record:
            label = record["label"]
            if label_ids is not None and str(label) in label_ids:
                label = label_ids[str(label)]
            try:
                label = int(label)
            except (TypeError, ValueError):
                if label_ids is not None:
                    raise XltError(
                        f"{where(i)} has label {label!r}, which is not in datasets.{name}.label_names "
                        f"{list(label_ids)}; correct the label in the file or the names in the config"
                    ) from None
                raise XltError(
                    f"{where(i)} has label {label!r}; declare datasets.{name}.label_names to map string labels to ids"
                ) from None
            if label < 0:
                continue
            if label >= NUM_LABELS[task]:
                raise XltError(
                    f"{where(i)} has label {label}, but task {task} has "
                    f"{NUM_LABELS[task]} labels (ids 0..{NUM_LABELS[task] - 1})"
                )
            record["label"] = label
        if "score" in record:
            try:
                record["score"] = float(record["score"])
            except (TypeError, ValueError):
                raise XltError(f"{where(i)} has score {record['score']!r}, not a number") from None
        for f in ("text", "text_pair"):
            if f in record:
                record[f] = str(record[f]).strip()
        out.append(record)
    return out


def read_records(path: str, fields: tuple[str, ...], needs: str) -> list[dict]:
    """The normalised records of one JSONL file (what `xlt prepare-data` writes), each checked
    for `fields` before any model is loaded: an empty file, a truncated one or one of another
    task stops the job with the file, the line and what the verb `needs`."""
    records = []
    for number, record in numbered_jsonl(path):
        if not isinstance(record, dict):
            raise XltError(f"{path} line {number} is not a JSON object; {needs}")
        missing = [f for f in fields if f not in record]
        if missing:
            raise XltError(
                f"{path} line {number} has no {', '.join(map(repr, missing))} (it has "
                f"{', '.join(sorted(record))}); {needs}"
            )
        records.append(record)
    if not records:
        raise XltError(
            f"{path} holds no examples (an empty split); check the dataset's files for this "
            f"language and split, then rerun xlt prepare-data"
        )
    return records
