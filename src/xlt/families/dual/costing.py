"""What `xlt plan` (xlt.cost) needs to know of the dual jobs beyond their specs: the cost hooks
of xlt.core.family_plan, which plan.py hands on.

- every job embeds each sentence of a pair on its own (a dual encoder), so each is padded apart;
- a distillation on single sentences (--distill-examples sentences) has two examples a data row,
  each half its tokens;
- prefix_states_dual writes the sweep's frozen-prefix store;
- a distilled student (train_dual --objective mse_distill) writes teacher_vectors.npz: a float16
  vector of the teacher's width per distinct English sentence, counted once per training row (an
  upper bound: the TED talks' English sides repeat across languages). The teacher is planned at
  the student's width (the config's teacher is an sbert run of the same model).
"""

from __future__ import annotations

from xlt.core.job_spec import JobSpec

SIAMESE = ("text", "text_pair")
TEACHER_VECTOR_BYTES = 2  # float16
PREFIX_STORE_RULE = "prefix_states_dual"


def token_forms(rule: str) -> tuple[str, ...]:
    return SIAMESE if rule in ("train_dual", "tatoeba_dual", PREFIX_STORE_RULE) else ("pair",)


def example_shape(rule: str, spec: JobSpec) -> tuple[int, float]:
    """A distillation on single sentences: two examples a data row, each half its tokens."""
    if rule == "train_dual" and spec.get("distill_examples", None) == "sentences":
        return 2, 0.5
    return 1, 1.0


def prefix_store(rule: str) -> bool:
    return rule == PREFIX_STORE_RULE


def output_bytes(rule: str, spec: JobSpec, train_rows: int, dev_rows: int, row_bytes: float, hidden: int) -> float:
    """A distilled student's teacher vectors (module docstring)."""
    if rule == "train_dual" and spec.get("objective", None) == "mse_distill":
        return train_rows * hidden * TEACHER_VECTOR_BYTES
    return 0.0
