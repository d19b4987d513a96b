"""Stage 1 of the MonoX family (`xlt monox-split`): the source-language training data split into
labelled / unlabelled / dev, seeded (`make_split`; the seeded splitting itself is
xlt.families.monox.teacher_student's), written to and read from its folder, and the labelled
examples of one training size (`training_set`), which the teacher and every student at that size
share. `artifact_meta` says which split, size and seed a teacher-logits artifact belongs to.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

from xlt.core.errors import XltError
from xlt.core.io import read_json, read_jsonl, write_json, write_jsonl
from xlt.families.monox.plan import SPLIT_PARTS
from xlt.families.monox.teacher_student import split_dev, split_fingerprint, split_labelled, subsample


@dataclass
class Split:
    labelled: list[dict]
    unlabelled: list[dict]
    dev: list[dict]
    meta: dict = field(default_factory=dict)

    @property
    def split_id(self) -> str:
        return self.meta["split_id"]


def make_split(
    train_records: Sequence[dict],
    seed: int,
    *,
    labelled_fraction: float | None = None,
    unlabelled: Sequence[dict] | None = None,
    dev: Sequence[dict] | None = None,
    dev_fraction: float | None = None,
    name: str = "",
) -> Split:
    """The paper's split of the source-language data.

    Exactly one of `labelled_fraction` (XNLI: that share of `train_records` keeps its labels, the
    rest is the unlabelled pool) or `unlabelled` (CLS: a separate pool), and exactly one of `dev`
    (a dev set) or `dev_fraction` (CLS: hold out that share of the labelled data)."""
    if (labelled_fraction is None) == (unlabelled is None):
        raise XltError("give exactly one of labelled_fraction (split the training data) or an unlabelled set")
    if (dev is None) == (dev_fraction is None):
        raise XltError("give exactly one of a dev set or dev_fraction (hold out part of the labelled data)")
    missing = sum(r.get("label") is None for r in train_records)
    if missing:
        raise XltError(f"{missing} of {len(train_records)} training records have no label")
    if labelled_fraction is not None:
        labelled, pool = split_labelled(train_records, labelled_fraction, seed)
    else:
        labelled, pool = list(train_records), list(unlabelled)
    if dev_fraction is not None:
        labelled, dev = split_dev(labelled, dev_fraction, seed)
    if not pool:
        raise XltError("the unlabelled pool is empty")
    parts = {"labelled": labelled, "unlabelled": pool, "dev": list(dev)}
    fingerprints = split_fingerprint(parts)
    meta = {
        "name": name,
        "seed": seed,
        "labelled_fraction": labelled_fraction,
        "dev_fraction": dev_fraction,
        "counts": {k: len(v) for k, v in parts.items()},
        "fingerprints": fingerprints,
        "split_id": hashlib.sha1(json.dumps(fingerprints, sort_keys=True).encode()).hexdigest()[:16],
    }
    return Split(labelled, [_unlabelled_record(r) for r in pool], list(dev), meta)


def _unlabelled_record(r: dict) -> dict:
    # The pool's gold label (XNLI's 80%) must never be trained on: it is moved aside and only
    # used to report how accurate the pseudo labels are.
    out = {k: r[k] for k in ("id", "text", "text_pair") if r.get(k) is not None}
    if r.get("label") is not None:
        out["heldout_label"] = r["label"]
    return out


def write_split(split: Split, out_dir: str | Path) -> None:
    out_dir = Path(out_dir)
    for part in SPLIT_PARTS:
        write_jsonl(out_dir / f"{part}.jsonl", getattr(split, part))
    write_json(out_dir / "split.json", split.meta)


def read_split(split_dir: str | Path) -> Split:
    split_dir = Path(split_dir)
    if not (split_dir / "split.json").is_file():
        raise XltError(f"{split_dir} is not a MonoX split (no split.json); make it with `xlt monox-split`")
    return Split(
        *(read_jsonl(split_dir / f"{part}.jsonl") for part in SPLIT_PARTS), read_json(split_dir / "split.json")
    )


def training_set(split: Split, size: int | str, seed: int) -> list[dict]:
    """The labelled examples of one training size: nested, stratified, seeded (`subsample`), so
    the teacher and every student at that size see exactly the same examples."""
    return subsample(split.labelled, size, seed)


def parse_size(value: str) -> int | str:
    if value == "all":
        return value
    try:
        return int(value)
    except ValueError:
        raise XltError(f"training size must be a positive integer or 'all', got {value!r}") from None


def artifact_meta(split: Split, size: int | str, seed: int) -> dict:
    """What a teacher-logits artifact is valid for; a student passes the same as expected_meta."""
    return {"split_id": split.split_id, "size": str(size), "seed": int(seed)}
