"""Mining the tuning and the test split as one pool (the threshold's scale must transfer).

The ratio margin divides a pair's cosine by its neighbourhood density, the mean cosine of the
k nearest sentences on the other side (xlt.evaluate.mining). That density grows with the
number of sentences on the other side, so margins computed in a small pool are larger than
the same pairs' margins in a big one: a threshold tuned on a 20 % pool, mined on its own,
sits too high for the 80 % pool it is applied to. Here both splits' sentences form one pool
(as the single BUCC split they are cut from): the k-NN terms and the candidate extraction see
every source and target sentence, and each candidate belongs to the split of its SOURCE
sentence. The threshold is tuned on the tuning sources' candidates and applied to the test
sources' candidates, so both sides of the cut share one margin scale, and a candidate's
margin does not depend on which split its source was put in.

A candidate whose target lies in the other split is never a gold pair (gold pairs stay within
their split); its target id is written "{split}:{id}" so that it cannot be mistaken for a
target of its own split with the same id.
"""

from __future__ import annotations

import numpy as np

from xlt.core.errors import XltError
from xlt.data.bucc_files import BuccSplit
from xlt.evaluate.mining import DEFAULT_K, margin_candidates

ROLES = ("tune", "test")


def pooled_candidates(
    vectors: dict[str, tuple[np.ndarray, np.ndarray]],
    splits: dict[str, BuccSplit],
    k: int = DEFAULT_K,
    strategy: str = "max",
) -> dict[str, list[tuple[str, str, float]]]:
    """role -> mined (src_id, tgt_id, margin) of that role's source sentences, highest first,
    with margins and candidates computed over the pool of every role's sentences.

    `vectors[role]` are the (source, target) embeddings of `splits[role]`, in its order."""
    src_of: list[tuple[str, str]] = []  # pool row -> (role, id)
    tgt_of: list[tuple[str, str]] = []
    xs, ys = [], []
    for role, data in splits.items():
        x, y = vectors[role]
        if len(x) != len(data.src_ids) or len(y) != len(data.tgt_ids):
            raise ValueError(f"{role}: embeddings do not match the number of sentences of split {data.split!r}")
        xs.append(np.asarray(x))
        ys.append(np.asarray(y))
        src_of += [(role, sid) for sid in data.src_ids]
        tgt_of += [(role, tid) for tid in data.tgt_ids]
    labels = {role: _target_labels(role, splits) for role in splits}
    mined: dict[str, list[tuple[str, str, float]]] = {role: [] for role in splits}
    for cand in margin_candidates(np.concatenate(xs), np.concatenate(ys), k=k, strategy=strategy):
        role, sid = src_of[cand.src]
        mined[role].append((sid, labels[role][tgt_of[cand.tgt]], cand.score))
    return mined  # each role's list keeps the pool's order: highest margin first


def _target_labels(role: str, splits: dict[str, BuccSplit]) -> dict[tuple[str, str], str]:
    """How a source of `role` names each pool target: its own split's by id, others' as "{split}:{id}"."""
    own = set(splits[role].tgt_ids)
    labels = {(role, tid): tid for tid in own}
    for other, data in splits.items():
        if other == role:
            continue
        for tid in data.tgt_ids:
            label = f"{data.split}:{tid}"
            if label in own:
                raise XltError(
                    f"target id {label!r} of split {splits[role].split!r} reads like target {tid!r} of "
                    f"split {data.split!r}; rename it, pooled mining tells the splits apart by that prefix"
                )
            labels[(other, tid)] = label
    return labels
