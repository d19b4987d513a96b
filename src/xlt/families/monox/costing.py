"""What `xlt plan` (xlt.cost) needs to know of the MonoX jobs beyond their specs: the cost hooks
of xlt.core.family_plan, which plan.py hands on.

- a student's split folder (--split) is no prepared data file: its rows are its task's train split's;
- a self-training student trains the gold run, then --rounds more, each as long;
- a split (monox_split) writes its task's train split again, cut into labelled.jsonl and
  unlabelled.jsonl, and its dev rows (dev.jsonl), at the prepared data's bytes a row;
- a teacher's logits.npz (train_teacher) holds a row for every train row of its split, labelled and
  unlabelled (what the students learn from): float32 logits per label, an id and a part name
  (numpy '<U40' and '<U10', 4 bytes a character, as the rehearsal's files hold them).
"""

from __future__ import annotations

import re

from xlt.core.job_spec import JobSpec
from xlt.core.plan import RESULTS

LOGIT_ROW_BYTES = 4 * (40 + 10)  # a logits row's id and part name; its logits on top
# a job's --split: monox_split's folder, cut from its task dataset's train split
SPLIT_DIR = re.compile(rf"^{RESULTS}/runs/monox/splits/([^/]+)/")


def training_data(rule: str, spec: JobSpec) -> list[tuple[str, str]]:
    """(task dataset, "train") of a teacher's or student's --split folder."""
    return [(m.group(1), "train") for m in (SPLIT_DIR.match(str(p)) for p in spec.all("split")) if m]


def training_runs(rule: str, spec: JobSpec) -> int:
    """Self-training (--mode self_train): the gold run, then --rounds more (the plan gives both)."""
    return 1 + int(spec.get("rounds")) if spec.get("mode", None) == "self_train" else 1


def output_bytes(rule: str, spec: JobSpec, train_rows: int, dev_rows: int, row_bytes: float, hidden: int) -> float:
    """A split's three files, a teacher's logits (module docstring); nothing else grows with the data."""
    if rule == "monox_split":
        return (train_rows + dev_rows) * row_bytes
    if rule == "train_teacher":
        return train_rows * (LOGIT_ROW_BYTES + 4 * int(spec.get("num_labels")))
    return 0.0


def trained_models(section: dict) -> list[str]:
    """The students (the teachers' models are never a job's --model by their run directory)."""
    return list(section.get("students") or [])
