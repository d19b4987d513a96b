"""Data building blocks of the teacher -> student (MonoX) family: splits, training-size
subsamples, pseudo labels and self-training rounds (the teacher-logits artifact is
xlt.families.monox.teacher_logits).

The MonoX paper (Chi et al., section 4.2) uses two kinds of split of the English training data:

* XNLI: "randomly sample 20% examples from training data as the training set, and regard the
  other examples as the unlabeled set" -> `split_labelled(records, 0.2, seed)`.
* CLS: "randomly select 20% examples from training data as the development set and use the
  remaining examples as the training set" -> `split_dev(records, 0.2, seed)`; CLS's unlabelled
  set is the corpus's own ``unlabeled.review`` file.

Both are seeded random splits. By default they are stratified by label (each class contributes
its share, rounded by largest remainder so the total is exactly round(fraction * n)): a random
split has that class balance in expectation, stratifying only removes the sampling noise, which
matters for the small training-size sweep points. ``stratify=False`` gives the plain random split.

Teacher and student use different tokenizers (RoBERTa vs mBERT), so teacher outputs are stored
per *example*, keyed by `example_id`, never by position or token.
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from xlt.core.errors import XltError

# ---------------------------------------------------------------- example ids


def example_id(record: Mapping[str, Any]) -> str:
    """A stable id for one example: its explicit ``id`` if it has one, else the sha1 of its
    input text(s). The label is not part of it: teacher outputs depend on the input only."""
    if record.get("id") is not None:
        return str(record["id"])
    if "text" not in record:
        raise XltError(f"record without 'text' (keys: {sorted(record)}): cannot identify the example")
    key = json.dumps([record["text"], record.get("text_pair")], ensure_ascii=False)
    return hashlib.sha1(key.encode("utf-8")).hexdigest()


def split_fingerprint(parts: Mapping[str, Sequence[Mapping[str, Any]]]) -> dict[str, str]:
    """Per part, the sha1 of the sorted set of its example ids: equal iff same examples."""
    return {name: ids_fingerprint({example_id(r) for r in records}) for name, records in parts.items()}


def ids_fingerprint(ids: set[str]) -> str:
    """The sha1 of a set of example ids, whatever their order."""
    return hashlib.sha1("\n".join(sorted(ids)).encode("utf-8")).hexdigest()


# ---------------------------------------------------------------- splits and subsamples


def split_labelled(
    records: Sequence[dict], labelled_fraction: float = 0.2, seed: int = 0, stratify: bool = True
) -> tuple[list[dict], list[dict]]:
    """(labelled, unlabelled): the paper's XNLI split, `labelled_fraction` of the training data
    keeps its labels, the rest becomes the unlabelled set (still carrying its gold labels, which
    `build_pl_dataset` never uses). Both keep the input order; records are not copied."""
    return _split(records, labelled_fraction, seed, stratify, "labelled_fraction")


def split_dev(
    records: Sequence[dict], dev_fraction: float = 0.2, seed: int = 0, stratify: bool = True
) -> tuple[list[dict], list[dict]]:
    """(train, dev): the paper's CLS split, `dev_fraction` of the training data is held out as
    the development set."""
    dev, train = _split(records, dev_fraction, seed, stratify, "dev_fraction")
    return train, dev


def _split(
    records: Sequence[dict], fraction: float, seed: int, stratify: bool, name: str
) -> tuple[list[dict], list[dict]]:
    _check_seed(seed)
    if isinstance(fraction, bool) or not isinstance(fraction, (int, float)) or not 0 < fraction < 1:
        raise XltError(f"{name} must be a number strictly between 0 and 1, got {fraction!r}")
    n = len(records)
    target = math.floor(fraction * n + 0.5)
    if target == 0 or target == n:
        raise XltError(
            f"{name}={fraction} of {n} records selects {target}: both sides of the split "
            f"need at least one example; use more data or another fraction"
        )
    rng = np.random.default_rng(seed)
    groups = _label_groups(records) if stratify else None
    if groups is None:
        chosen = rng.permutation(n)[:target]
    else:
        quotas = _largest_remainder({c: len(idx) * fraction for c, idx in groups.items()}, target)
        chosen = np.concatenate([rng.permutation(groups[c])[: quotas[c]] for c in sorted(groups)])
    mask = np.zeros(n, dtype=bool)
    mask[chosen] = True
    return ([r for r, m in zip(records, mask) if m], [r for r, m in zip(records, mask) if not m])


def subsample(records: Sequence[dict], size: int | str, seed: int = 0) -> list[dict]:
    """`size` records for the training-size sweep (paper: 10, 100, 1k, 10k, all), or all of them
    for ``size="all"``.

    Stratified by label when every record has one, and *nested*: for one seed, the 10-example
    sample is the start of the 100-example sample, and so on, so a sweep adds data instead of
    redrawing it. The records come in a seeded order in which every prefix holds each class within
    one example of its proportional share (floor or ceil of size * n_class / n; within a class the
    records are in a seeded random order). Unlabelled records are taken in a seeded random order."""
    _check_seed(seed)
    n = len(records)
    if size == "all":
        size = n
    elif isinstance(size, bool) or not isinstance(size, int) or size < 1:
        raise XltError(f"training size must be a positive integer or 'all', got {size!r}")
    if size > n:
        raise XltError(f"training size {size} is larger than the {n} available records; use a size <= {n} or 'all'")
    return [records[i] for i in _stratified_order(records, size, np.random.default_rng(seed))]


def _stratified_order(records: Sequence[dict], size: int, rng: np.random.Generator) -> list[int]:
    groups = _label_groups(records)
    if groups is None:
        return rng.permutation(len(records))[:size].tolist()
    classes = sorted(groups)
    members = [rng.permutation(groups[c]).tolist() for c in classes]
    n_class = [len(m) for m in members]
    n = len(records)
    # A seeded class priority breaks ties, so no class is always first in balanced data.
    priority = rng.permutation(len(classes)).tolist()
    taken = [0] * len(classes)
    order = []
    for step in range(1, size + 1):
        # Earliest deadline first (Tijdeman's chairman assignment): a class may take its next
        # record once it is below its share (step * n_c / n > taken, exact integer test); among
        # those, the one whose share reaches the next whole record soonest goes first. This keeps
        # |taken_c - step * n_c / n| < 1 for every prefix.
        best = min(
            (c for c in range(len(classes)) if step * n_class[c] > taken[c] * n),
            key=lambda c: ((taken[c] + 1) / n_class[c], priority[c]),
        )
        order.append(members[best][taken[best]])
        taken[best] += 1
    return order


def _label_groups(records: Sequence[dict]) -> dict[Any, np.ndarray] | None:
    """Indices per label, or None when some record has no label (then no stratification)."""
    if not records or any(r.get("label") is None for r in records):
        return None
    groups: dict[Any, list[int]] = {}
    for i, r in enumerate(records):
        groups.setdefault(r["label"], []).append(i)
    return {c: np.array(idx) for c, idx in groups.items()}


def _largest_remainder(quotas: dict[Any, float], total: int) -> dict[Any, int]:
    counts = {c: math.floor(q) for c, q in quotas.items()}
    by_remainder = sorted(quotas, key=lambda c: (-(quotas[c] - counts[c]), str(c)))
    for c in by_remainder[: total - sum(counts.values())]:
        counts[c] += 1
    return counts


def _check_seed(seed: int) -> None:
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise XltError(f"seed must be a non-negative integer, got {seed!r}")


# ---------------------------------------------------------------- pseudo labels (MonoX-PL)


def pseudo_label(probs: np.ndarray, threshold: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    """(indices, labels) of the examples whose top class probability is >= `threshold`.

    `probs` is (n, num_labels) of probabilities (softmax outputs, not logits). The paper's
    MonoX-PL uses threshold 0, i.e. every example keeps its argmax label."""
    probs = np.asarray(probs, dtype=np.float64)
    if probs.ndim != 2 or probs.shape[1] < 2:
        raise XltError(f"probabilities must be (examples, num_labels >= 2), got shape {probs.shape}")
    if isinstance(threshold, bool) or not isinstance(threshold, (int, float)) or not 0 <= threshold <= 1:
        raise XltError(f"pseudo-label threshold must be in [0, 1], got {threshold!r} (paper: 0)")
    if probs.size and (
        np.any(probs < -1e-6) or np.any(probs > 1 + 1e-6) or not np.allclose(probs.sum(axis=1), 1.0, atol=1e-3)
    ):
        raise XltError(
            "pseudo_label expects probabilities (rows in [0, 1] summing to 1); these look like "
            "logits: apply a softmax first"
        )
    confident = np.flatnonzero(probs.max(axis=1) >= threshold)
    return confident, probs[confident].argmax(axis=1)


def build_pl_dataset(
    gold: Sequence[dict], unlabelled: Sequence[dict | str], teacher_probs: np.ndarray, threshold: float = 0.0
) -> list[dict]:
    """MonoX-PL training set: the gold records followed by the confidently pseudo-labelled
    unlabelled examples, each ``{text, [text_pair], [id], label}`` with the teacher's argmax as
    label. An unlabelled record's own ``label`` (e.g. XNLI's held-out gold) is never copied."""
    if len(unlabelled) != len(teacher_probs):
        raise XltError(
            f"{len(unlabelled)} unlabelled examples but {len(teacher_probs)} rows of teacher "
            f"probabilities: predict on exactly the unlabelled set, in order"
        )
    indices, labels = pseudo_label(teacher_probs, threshold)
    pseudo = []
    for i, label in zip(indices.tolist(), labels.tolist()):
        item = unlabelled[i]
        record = (
            {"text": item}
            if isinstance(item, str)
            else {k: item[k] for k in ("id", "text", "text_pair") if item.get(k) is not None}
        )
        record["label"] = int(label)
        pseudo.append(record)
    return [dict(r) for r in gold] + pseudo


def build_kd_dataset(parts: Mapping[str, Sequence[dict]], teacher_logits: Mapping[str, np.ndarray]) -> list[dict]:
    """MonoX-KD training set D_C: the records of every part (labelled then unlabelled, in the
    mapping's order) with their teacher logits attached as ``teacher_logits`` (list of floats).
    The distillation loss uses only those; gold labels stay on the records for bookkeeping."""
    out = []
    for name, records in parts.items():
        logits = np.asarray(teacher_logits[name])
        if len(logits) != len(records):
            raise XltError(f"part {name!r}: {len(records)} records but {len(logits)} rows of teacher logits")
        out.extend({**r, "teacher_logits": row.tolist()} for r, row in zip(records, logits))
    return out


# ---------------------------------------------------------------- self-training (MBERT-ST)


@dataclass
class SelfTrainingRound:
    round: int
    num_train: int
    num_pseudo: int
    num_changed: int | None  # unlabelled examples whose predicted label changed since the last round


@dataclass
class SelfTrainingResult:
    model: Any
    rounds: list[SelfTrainingRound] = field(default_factory=list)
    train_records: list[dict] = field(default_factory=list)


def self_train(
    gold: Sequence[dict],
    unlabelled: Sequence[dict | str],
    train_fn: Callable[[list[dict], Any], Any],
    predict_fn: Callable[[Any, Sequence[dict | str]], np.ndarray],
    rounds: int,
    threshold: float = 0.0,
) -> SelfTrainingResult:
    """The MBERT-ST baseline: "alternately fine-tuning mBERT and updating the training data by
    labeling English unlabeled examples" with the student itself.

    Round 0 trains on `gold` alone; each of the `rounds` following rounds labels `unlabelled` with
    the latest model and trains on gold + confident pseudo labels. ``train_fn(records, previous)``
    returns a model (``previous`` is None in round 0; whether to continue from it or restart from
    the pretrained weights is the caller's choice); ``predict_fn(model, unlabelled)`` returns
    (n, num_labels) probabilities."""
    if isinstance(rounds, bool) or not isinstance(rounds, int) or rounds < 0:
        raise XltError(f"self-training rounds must be a non-negative integer, got {rounds!r}")
    train_records = [dict(r) for r in gold]
    model = train_fn(train_records, None)
    history = [SelfTrainingRound(0, len(train_records), 0, None)]
    previous_labels = None
    for r in range(1, rounds + 1):
        probs = np.asarray(predict_fn(model, unlabelled))
        train_records = build_pl_dataset(gold, unlabelled, probs, threshold)
        labels = probs.argmax(axis=1)
        changed = None if previous_labels is None else int((labels != previous_labels).sum())
        previous_labels = labels
        model = train_fn(train_records, model)
        history.append(SelfTrainingRound(r, len(train_records), len(train_records) - len(gold), changed))
    return SelfTrainingResult(model, history, train_records)
