"""The teacher-logits artifact of the MonoX family: the teacher's logits on the labelled and
unlabelled parts of a split, in one ``.npz`` file, for the students to distil from.

Teacher and student use different tokenizers (RoBERTa vs mBERT), so the rows are keyed per
*example* (`example_id`), never by position or token; a header records which examples each part
held and what the logits were made for, and loading checks both (`load_teacher_logits`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from xlt.core.errors import XltError
from xlt.core.io import atomic_path
from xlt.families.monox.teacher_student import example_id, ids_fingerprint

ARTIFACT_FORMAT = "xlt-teacher-logits"
ARTIFACT_VERSION = 1


def save_teacher_logits(
    path: str | Path, parts: Mapping[str, tuple[Sequence[dict], np.ndarray]], meta: Mapping[str, Any] | None = None
) -> dict:
    """Write the teacher's logits for named parts (e.g. ``{"labelled": (records, logits),
    "unlabelled": (records, logits)}``) to one ``.npz`` file, one row per (part, example id).

    Rows are keyed by `example_id`, so the student (another tokenizer, another order) finds its
    rows by example. The header stores, per part, the number of examples and a fingerprint of its
    example-id set, plus the caller's `meta` (teacher model, seed, fractions ...): loading checks
    both, so logits of another split or seed cannot be used silently. Returns the header."""
    if not parts:
        raise XltError("save_teacher_logits needs at least one part, e.g. {'unlabelled': (records, logits)}")
    names, ids, rows = [], [], []
    header_parts, num_labels = {}, None
    for name, (records, logits) in parts.items():
        logits = np.asarray(logits, dtype=np.float32)
        if logits.ndim != 2 or len(logits) != len(records):
            raise XltError(
                f"part {name!r}: {len(records)} records need logits of shape ({len(records)}, "
                f"num_labels), got {logits.shape}"
            )
        if num_labels is None:
            num_labels = logits.shape[1]
        elif logits.shape[1] != num_labels:
            raise XltError(f"part {name!r} has {logits.shape[1]} labels, earlier parts {num_labels}")
        if not np.all(np.isfinite(logits)):
            raise XltError(f"part {name!r}: teacher logits contain NaN or inf; the teacher run diverged")
        seen: set[str] = set()
        for record, row in zip(records, logits):
            key = example_id(record)
            if key in seen:  # the same input twice: the teacher's output is the same row
                continue
            seen.add(key)
            names.append(name)
            ids.append(key)
            rows.append(row)
        header_parts[name] = {"examples": len(seen), "fingerprint": ids_fingerprint(seen)}
    header = {
        "format": ARTIFACT_FORMAT,
        "version": ARTIFACT_VERSION,
        "num_labels": int(num_labels),
        "parts": header_parts,
        "meta": dict(meta or {}),
    }
    with atomic_path(path) as tmp, open(tmp, "wb") as f:
        # A file object, so numpy does not append ".npz" to the temporary name.
        np.savez(
            f,
            parts=np.array(names, dtype=str),
            ids=np.array(ids, dtype=str),
            logits=np.stack(rows) if rows else np.zeros((0, num_labels), np.float32),
            header=np.array(json.dumps(header)),
        )
    return header


def read_teacher_logits_header(path: str | Path) -> dict:
    with _open_artifact(path) as data:
        return _header(data, path)


def load_teacher_logits(
    path: str | Path, parts: Mapping[str, Sequence[dict]], expected_meta: Mapping[str, Any] | None = None
) -> dict[str, np.ndarray]:
    """Teacher logits aligned to `parts` ({part name: records}): one (len(records), num_labels)
    float32 array per part, row i belonging to records[i] whatever their order.

    Raises XltError when a value of `expected_meta` differs from the stored meta, when a part or
    an example is missing, or when a part's example set differs from the one the logits were
    computed for (another split or seed)."""
    with _open_artifact(path) as data:
        header = _header(data, path)
        row_of: dict[tuple[str, str], int] = {
            (p, i): n for n, (p, i) in enumerate(zip(data["parts"].tolist(), data["ids"].tolist()))
        }
        logits = data["logits"]
    stored = header["meta"]
    for key, value in (expected_meta or {}).items():
        if key not in stored or stored[key] != value:
            raise XltError(
                f"teacher logits {path} were made with {key}={stored.get(key, '<unset>')!r}, "
                f"this run expects {value!r}; recompute them for this configuration"
            )
    parts_of_id: dict[str, list[str]] = {}
    for p, i in row_of:
        parts_of_id.setdefault(i, []).append(p)
    out = {}
    for name, records in parts.items():
        if name not in header["parts"]:
            raise XltError(f"teacher logits {path} have no part {name!r} (parts: {', '.join(header['parts'])})")
        ids = [example_id(r) for r in records]
        missing = [(k, r) for k, r in zip(ids, records) if (name, k) not in row_of]
        if missing:
            key, record = missing[0]
            elsewhere = parts_of_id.get(key)
            where = (
                f"; it is stored under part {elsewhere[0]!r}, so the logits belong to another split/seed"
                if elsewhere
                else ""
            )
            raise XltError(
                f"teacher logits {path}: {len(missing)} of {len(records)} {name!r} examples are missing "
                f"(first: id {key}, text {str(record.get('text'))[:60]!r}){where}; "
                f"re-run the teacher's prediction for this split (meta of the artifact: {stored})"
            )
        fingerprint = ids_fingerprint(set(ids))
        if fingerprint != header["parts"][name]["fingerprint"]:
            raise XltError(
                f"teacher logits {path}: part {name!r} was computed for {header['parts'][name]['examples']} "
                f"examples, these records are {len(set(ids))} different ones (fingerprint {fingerprint[:12]} "
                f"vs {header['parts'][name]['fingerprint'][:12]}): the artifact came from another split/seed "
                f"(its meta: {stored}); recompute it"
            )
        out[name] = logits[[row_of[(name, k)] for k in ids]].reshape(len(ids), header["num_labels"])
    return out


def _open_artifact(path: str | Path):
    if not Path(path).is_file():
        raise XltError(f"teacher logits file {path} does not exist; run the teacher's prediction step first")
    try:
        return np.load(path, allow_pickle=False)
    except Exception as e:  # not an npz at all
        raise XltError(f"{path} is not a teacher-logits artifact (.npz written by save_teacher_logits): {e}") from e


def _header(data, path) -> dict:
    try:
        header = json.loads(data["header"].item())
    except KeyError:
        raise XltError(f"{path} has no header: not written by save_teacher_logits") from None
    if header.get("format") != ARTIFACT_FORMAT or header.get("version") != ARTIFACT_VERSION:
        raise XltError(
            f"{path} is format {header.get('format')!r} v{header.get('version')}, expected "
            f"{ARTIFACT_FORMAT!r} v{ARTIFACT_VERSION}; recompute the teacher logits"
        )
    return header
