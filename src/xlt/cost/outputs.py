"""What a job writes besides a model and the prepared data, where it grows with the data (the
plan's disk column, xlt.cost.estimate):

- a MonoX split (monox_split): its task's train split again, cut into labelled.jsonl and
  unlabelled.jsonl, and its dev rows (dev.jsonl), at the prepared data's bytes a row;
- a MonoX teacher's logits.npz (train_teacher): a row for every train row of its split, labelled
  and unlabelled (what the students learn from): float32 logits per label, an id and a part name
  (numpy '<U40' and '<U10', 4 bytes a character, as the rehearsal's files hold them);
- a distilled dual student's teacher_vectors.npz (train_dual --objective mse_distill): a float16
  vector of the teacher's width per distinct English sentence, counted once per training row (an
  upper bound: the TED talks' English sides repeat across languages). The teacher is planned at
  the student's width (the config's teacher is an sbert run of the same model).

Not counted: metrics, curves, per-example outputs and plots, kilobytes to a few MB a job
whatever the data's size (the paper rehearsal's, per family: BENCHMARKS.md).
"""

from __future__ import annotations

from xlt.cost.job_args import value

LOGIT_ROW_BYTES = 4 * (40 + 10)  # a logits row's id and part name; its logits on top
TEACHER_VECTOR_BYTES = 2  # float16


def output_bytes(rule: str, args: list[str], train_rows: int, dev_rows: int, row_bytes: float, hidden: int) -> float:
    """Bytes of a job's data-sized outputs (module docstring): `train_rows` and `dev_rows` are the
    rows it reads (a MonoX job's split: its task's train split), `row_bytes` a prepared row of its
    training data, `hidden` its model's width."""
    if rule == "monox_split":
        return (train_rows + dev_rows) * row_bytes
    if rule == "train_teacher":
        return train_rows * (LOGIT_ROW_BYTES + 4 * value(args, "--num-labels", 2))
    if rule == "train_dual" and value(args, "--objective", "") == "mse_distill":
        return train_rows * hidden * TEACHER_VECTOR_BYTES
    return 0.0
