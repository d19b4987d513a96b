import hashlib
import json
import random
from collections import Counter

import numpy as np
import pytest

from xlt.core.errors import XltError
from xlt.families.monox.teacher_logits import load_teacher_logits, read_teacher_logits_header, save_teacher_logits
from xlt.families.monox.teacher_student import (
    build_kd_dataset,
    build_pl_dataset,
    example_id,
    pseudo_label,
    self_train,
    split_dev,
    split_labelled,
    subsample,
)


def make_records(n, num_labels=3, pair=True, weights=None):
    rng = random.Random(n)
    labels = rng.choices(range(num_labels), weights=weights, k=n)
    return [
        {"text": f"premise {i}", **({"text_pair": f"hypothesis {i}"} if pair else {}), "label": lab}
        for i, lab in enumerate(labels)
    ]


# ---------------------------------------------------------------- ids


def test_example_id_is_sha1_of_inputs_or_explicit_id():
    r = {"text": "a", "text_pair": "b", "label": 2}
    assert example_id(r) == hashlib.sha1(json.dumps(["a", "b"]).encode()).hexdigest()
    assert example_id({"text": "a", "text_pair": "b", "label": 0}) == example_id(r)  # label-free
    assert example_id({"text": "a"}) != example_id({"text": "a", "text_pair": ""})
    assert example_id({"text": "ab"}) != example_id({"text": "a", "text_pair": "b"})
    assert example_id({"id": 17, "text": "x"}) == "17"


# ---------------------------------------------------------------- splits


def test_split_labelled_reproducible_disjoint_complete_and_stratified():
    records = make_records(1000, weights=[5, 3, 2])
    labelled, unlabelled = split_labelled(records, 0.2, seed=3)
    again, _ = split_labelled(records, 0.2, seed=3)
    other, _ = split_labelled(records, 0.2, seed=4)

    def ids(rs):
        return [example_id(r) for r in rs]

    assert ids(labelled) == ids(again)
    assert ids(labelled) != ids(other)
    assert len(labelled) == 200 and len(unlabelled) == 800
    assert not set(ids(labelled)) & set(ids(unlabelled))
    assert sorted(ids(labelled) + ids(unlabelled)) == sorted(ids(records))
    # Input order is kept on both sides.
    position = {example_id(r): i for i, r in enumerate(records)}
    assert [position[k] for k in ids(labelled)] == sorted(position[k] for k in ids(labelled))
    # Stratified: each class within one example of 20% of its size.
    total, picked = Counter(r["label"] for r in records), Counter(r["label"] for r in labelled)
    for c in total:
        assert abs(picked[c] - 0.2 * total[c]) < 1


def test_split_unstratified_and_dev_split():
    records = make_records(50)
    labelled, rest = split_labelled(records, 0.2, seed=0, stratify=False)
    assert len(labelled) == 10 and len(rest) == 40
    train, dev = split_dev(records, 0.2, seed=0)
    assert len(dev) == 10 and len(train) == 40
    with pytest.raises(XltError, match="selects 0"):
        split_labelled(records[:2], 0.2)
    with pytest.raises(XltError, match="between 0 and 1"):
        split_labelled(records, 1.5)


# ---------------------------------------------------------------- subsample


def test_subsample_nested_stratified_and_seeded():
    records = make_records(3000, weights=[6, 3, 1])
    total = Counter(r["label"] for r in records)
    full = subsample(records, "all", seed=1)
    assert sorted(map(example_id, full)) == sorted(map(example_id, records))
    for size in (1, 2, 3, 10, 100, 1000, 2999):
        sample = subsample(records, size, seed=1)
        assert len(sample) == size == len({example_id(r) for r in sample})
        assert [example_id(r) for r in sample] == [example_id(r) for r in full[:size]]  # nested
        counts = Counter(r["label"] for r in sample)
        for c in total:  # floor or ceil of the proportional share
            assert abs(counts[c] - size * total[c] / len(records)) < 1
    assert [example_id(r) for r in subsample(records, 10, seed=2)] != [example_id(r) for r in full[:10]]


def test_subsample_prefix_balance_holds_for_many_shapes():
    rng = np.random.default_rng(0)
    for trial in range(30):
        k = int(rng.integers(2, 9))
        sizes = rng.integers(1, 40, size=k)
        records = [{"text": f"{c}-{i}", "label": c} for c in range(k) for i in range(sizes[c])]
        order = subsample(records, "all", seed=trial)
        counts = np.zeros(k)
        for j, r in enumerate(order, start=1):
            counts[r["label"]] += 1
            assert np.all(np.abs(counts - j * sizes / sizes.sum()) < 1), (trial, j)


def test_subsample_unlabelled_and_errors():
    corpus = [{"text": str(i)} for i in range(20)]
    assert len(subsample(corpus, 5, seed=0)) == 5
    with pytest.raises(XltError, match=r"training size 21 .* 20 available"):
        subsample(corpus, 21)
    with pytest.raises(XltError, match="positive integer"):
        subsample(corpus, 0)
    with pytest.raises(XltError, match="positive integer"):
        subsample(corpus, "1k")


# ---------------------------------------------------------------- pseudo labels


def test_pseudo_label_threshold_exact_indices():
    probs = np.array([[0.9, 0.05, 0.05], [0.4, 0.35, 0.25], [0.1, 0.2, 0.7], [0.5, 0.5, 0.0], [0.2, 0.6, 0.2]])
    idx, lab = pseudo_label(probs, 0.6)
    assert idx.tolist() == [0, 2, 4] and lab.tolist() == [0, 2, 1]  # 0.6 itself is kept
    idx, lab = pseudo_label(probs, 0.0)
    assert idx.tolist() == [0, 1, 2, 3, 4] and lab.tolist() == [0, 0, 2, 0, 1]
    idx, _ = pseudo_label(probs, 0.95)
    assert idx.tolist() == []
    with pytest.raises(XltError, match="logits"):
        pseudo_label(np.array([[2.0, -1.0]]), 0.5)
    with pytest.raises(XltError, match="threshold"):
        pseudo_label(probs, 1.5)


def test_build_pl_dataset_concatenates_and_never_leaks_gold():
    gold = [{"text": "g0", "label": 1}, {"text": "g1", "label": 0}]
    unlabelled = [
        {"text": "u0", "text_pair": "p0", "label": 2},
        {"text": "u1", "text_pair": "p1", "label": 2},
        {"text": "u2", "text_pair": "p2", "label": 2},
    ]
    probs = np.array([[0.8, 0.1, 0.1], [0.3, 0.3, 0.4], [0.1, 0.85, 0.05]])
    data = build_pl_dataset(gold, unlabelled, probs, threshold=0.5)
    assert data == gold + [{"text": "u0", "text_pair": "p0", "label": 0}, {"text": "u2", "text_pair": "p2", "label": 1}]
    assert unlabelled[0]["label"] == 2  # inputs untouched
    assert build_pl_dataset([], ["a", "b"], probs[:2])[1] == {"text": "b", "label": 2}
    with pytest.raises(XltError, match="3 unlabelled examples but 2 rows"):
        build_pl_dataset(gold, unlabelled, probs[:2])


def test_build_kd_dataset_attaches_logits():
    parts = {"labelled": [{"text": "a", "label": 1}], "unlabelled": [{"text": "b"}, {"text": "c"}]}
    data = build_kd_dataset(
        parts, {"labelled": np.array([[1.0, 2.0]]), "unlabelled": np.array([[3.0, 4.0], [5.0, 6.0]])}
    )
    assert data == [
        {"text": "a", "label": 1, "teacher_logits": [1.0, 2.0]},
        {"text": "b", "teacher_logits": [3.0, 4.0]},
        {"text": "c", "teacher_logits": [5.0, 6.0]},
    ]


# ---------------------------------------------------------------- self-training


def test_self_train_rounds_with_fakes():
    gold = [{"text": "g", "label": 0}]
    unlabelled = [{"text": f"u{i}", "label": 1} for i in range(4)]
    calls = []

    def train_fn(records, previous):
        version = 0 if previous is None else previous + 1
        calls.append((version, [(r["text"], r["label"]) for r in records]))
        return version

    def predict_fn(model, texts):
        # Model v labels example i as class (i + v) % 2, confidence 0.9 for even i, 0.6 for odd i.
        probs = np.zeros((len(texts), 2))
        for i in range(len(texts)):
            conf = 0.9 if i % 2 == 0 else 0.6
            probs[i, (i + model) % 2] = conf
            probs[i, 1 - (i + model) % 2] = 1 - conf
        return probs

    result = self_train(gold, unlabelled, train_fn, predict_fn, rounds=2, threshold=0.8)
    assert result.model == 2
    assert calls[0] == (0, [("g", 0)])
    assert calls[1] == (1, [("g", 0), ("u0", 0), ("u2", 0)])  # labelled by model 0
    assert calls[2] == (2, [("g", 0), ("u0", 1), ("u2", 1)])  # relabelled by model 1
    assert [(r.round, r.num_train, r.num_pseudo, r.num_changed) for r in result.rounds] == [
        (0, 1, 0, None),
        (1, 3, 2, None),
        (2, 3, 2, 4),
    ]
    assert result.train_records == [{"text": "g", "label": 0}, {"text": "u0", "label": 1}, {"text": "u2", "label": 1}]
    assert self_train(gold, unlabelled, train_fn, predict_fn, rounds=0).rounds[-1].round == 0


# ---------------------------------------------------------------- teacher-logits artifact


@pytest.fixture
def split():
    records = make_records(60)
    labelled, unlabelled = split_labelled(records, 0.2, seed=7)
    rng = np.random.default_rng(0)
    return {
        "labelled": (labelled, rng.normal(size=(len(labelled), 3))),
        "unlabelled": (unlabelled, rng.normal(size=(len(unlabelled), 3))),
    }


def test_teacher_logits_round_trip_aligned_by_example_after_shuffle(tmp_path, split):
    path = tmp_path / "teacher.npz"
    header = save_teacher_logits(path, split, meta={"seed": 7, "teacher": "roberta-large"})
    assert read_teacher_logits_header(path) == header and header["num_labels"] == 3
    assert [p.name for p in tmp_path.iterdir()] == ["teacher.npz"]
    expected = {(example_id(r), tuple(np.float32(row))) for r, row in zip(*split["unlabelled"])}
    shuffled = list(split["unlabelled"][0])
    random.Random(1).shuffle(shuffled)
    loaded = load_teacher_logits(
        path, {"unlabelled": shuffled, "labelled": split["labelled"][0]}, expected_meta={"seed": 7}
    )
    assert loaded["unlabelled"].shape == (len(shuffled), 3)
    assert {(example_id(r), tuple(row)) for r, row in zip(shuffled, loaded["unlabelled"])} == expected
    np.testing.assert_allclose(loaded["labelled"], split["labelled"][1], rtol=1e-6)


def test_teacher_logits_from_another_seed_is_refused(tmp_path, split):
    path = tmp_path / "teacher.npz"
    save_teacher_logits(path, split, meta={"seed": 7})
    with pytest.raises(XltError, match="seed=7.*expects 8"):
        load_teacher_logits(path, {"labelled": split["labelled"][0]}, expected_meta={"seed": 8})
    everything = split["labelled"][0] + split["unlabelled"][0]
    labelled8, unlabelled8 = split_labelled(everything, 0.2, seed=8)
    # Same union of examples, different split: the labelled ones sit in the other part.
    with pytest.raises(XltError, match="stored under part 'unlabelled'.*another split/seed"):
        load_teacher_logits(path, {"labelled": labelled8, "unlabelled": unlabelled8})


def test_teacher_logits_missing_example_and_fingerprint_mismatch(tmp_path, split):
    path = tmp_path / "teacher.npz"
    save_teacher_logits(path, split)
    stranger = {"text": "never seen", "text_pair": "by the teacher", "label": 0}
    with pytest.raises(XltError, match=r"1 of .* 'labelled' examples are missing.*never seen"):
        load_teacher_logits(path, {"labelled": split["labelled"][0] + [stranger]})
    # A subset of the part: every example is present, but the set differs from the stored one.
    with pytest.raises(XltError, match="fingerprint.*another split/seed"):
        load_teacher_logits(path, {"labelled": split["labelled"][0][:-1]})
    with pytest.raises(XltError, match="no part 'dev'"):
        load_teacher_logits(path, {"dev": split["labelled"][0]})
    with pytest.raises(XltError, match="does not exist"):
        load_teacher_logits(tmp_path / "nope.npz", {"labelled": []})


def test_teacher_logits_duplicates_and_bad_shapes(tmp_path):
    records = [{"text": "same"}, {"text": "same"}, {"text": "other"}]
    path = tmp_path / "t.npz"
    header = save_teacher_logits(path, {"unlabelled": (records, np.array([[1, 2], [1, 2], [3, 4]]))})
    assert header["parts"]["unlabelled"]["examples"] == 2
    got = load_teacher_logits(path, {"unlabelled": records})["unlabelled"]
    assert got.tolist() == [[1, 2], [1, 2], [3, 4]]
    with pytest.raises(XltError, match="need logits of shape"):
        save_teacher_logits(path, {"unlabelled": (records, np.zeros((2, 2)))})
    with pytest.raises(XltError, match="NaN"):
        save_teacher_logits(path, {"unlabelled": (records, np.full((3, 2), np.nan))})
