"""MonoX procedures on tiny random BERTs: splits, teacher logits reused by example id across
tokenizers, the four student modes, and the verbs end to end."""

import json
import random
from collections import Counter

import numpy as np
import pytest
import torch

from xlt.core.classification import predict_logits
from xlt.core.errors import XltError
from xlt.core.train_args import TrainArgs
from xlt.families.monox.data_split import make_split, read_split, training_set, write_split
from xlt.families.monox.teacher_logits import load_teacher_logits, read_teacher_logits_header
from xlt.families.monox.teacher_student import example_id
from xlt.families.monox.training import kd_collate, kd_loss, run_student, run_teacher, softmax

WORDS = "good bad great awful film book song boring lovely poor the is not very this and".split()


def make_records(n, seed=0):
    rng = random.Random(seed)
    out = []
    for i in range(n):
        label = i % 2
        words = [rng.choice(WORDS) for _ in range(rng.randint(2, 6))]
        out.append({"text": " ".join(words) + f" r{i}", "label": label})
    return out


def tokenizer(vocab_size):
    from xlt.data.demo_model import build_tokenizer

    corpus = [" ".join(random.Random(i).choices(WORDS, k=8)) + f" r{i}" for i in range(400)]
    return build_tokenizer(corpus, vocab_size)


def tiny_classifier(tok, seed, num_labels=2):
    from transformers import BertConfig, BertForSequenceClassification

    torch.manual_seed(seed)
    config = BertConfig(
        vocab_size=len(tok),
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=64,
        num_labels=num_labels,
    )
    return BertForSequenceClassification(config)


@pytest.fixture(scope="module")
def tokenizers():
    return tokenizer(120), tokenizer(200)


@pytest.fixture(scope="module")
def split():
    return make_split(make_records(100), seed=3, labelled_fraction=0.2, dev=make_records(12, seed=9), name="toy")


ARGS = TrainArgs(max_steps=3, batch_size=8, lr=1e-3, eval_every=3, max_length=16, seed=1, device="cpu", log_every=100)


# ---------------------------------------------------------------- split


def test_xnli_style_split_moves_pool_labels_aside(split):
    assert split.meta["counts"] == {"labelled": 20, "unlabelled": 80, "dev": 12}
    assert all("label" not in r and "heldout_label" in r for r in split.unlabelled)
    assert Counter(r["label"] for r in split.labelled) == {0: 10, 1: 10}
    labelled_ids = {example_id(r) for r in split.labelled}
    assert not labelled_ids & {example_id(r) for r in split.unlabelled}
    # same seed, same split; another seed, another split
    assert make_split(make_records(100), 3, labelled_fraction=0.2, dev=make_records(12, 9)).split_id == split.split_id
    assert make_split(make_records(100), 4, labelled_fraction=0.2, dev=make_records(12, 9)).split_id != split.split_id


def test_cls_style_split_holds_out_dev_and_keeps_the_pool():
    pool = [{"text": f"unlabelled {i}"} for i in range(30)]
    s = make_split(make_records(50), seed=1, unlabelled=pool, dev_fraction=0.2)
    assert s.meta["counts"] == {"labelled": 40, "unlabelled": 30, "dev": 10}
    assert [r["text"] for r in s.unlabelled] == [r["text"] for r in pool]
    assert not {example_id(r) for r in s.dev} & {example_id(r) for r in s.labelled}


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"labelled_fraction": 0.2, "unlabelled": [{"text": "x"}], "dev": []}, "exactly one of labelled_fraction"),
        ({"dev": []}, "exactly one of labelled_fraction"),
        ({"labelled_fraction": 0.2}, "exactly one of a dev set"),
        ({"labelled_fraction": 0.2, "dev": [], "dev_fraction": 0.2}, "exactly one of a dev set"),
    ],
)
def test_split_rejects_ambiguous_sources(kwargs, message):
    with pytest.raises(XltError, match=message):
        make_split(make_records(20), 1, **kwargs)


def test_split_round_trip(tmp_path, split):
    write_split(split, tmp_path)
    again = read_split(tmp_path)
    assert again.labelled == split.labelled and again.unlabelled == split.unlabelled and again.meta == split.meta
    with pytest.raises(XltError, match="monox-split"):
        read_split(tmp_path / "nothing")


# ---------------------------------------------------------------- KD batch and loss


def test_kd_loss_matches_hand_computation(tokenizers):
    tok = tokenizers[1]
    model = tiny_classifier(tok, 0).eval()
    examples = [
        {"text": "good film", "teacher_logits": [2.0, -1.0]},
        {"text": "awful song", "teacher_logits": [0.3, 0.5]},
    ]
    batch = kd_collate(tok, 16)(examples)
    assert batch["teacher_logits"].shape == (2, 2) and "labels" not in batch
    T = 0.5
    loss = kd_loss(T)(model, batch).item()
    student = (
        model(**{k: v for k, v in batch.items() if k != "teacher_logits"}).logits.detach().numpy().astype(np.float64)
    )
    q = np.exp(np.array([[4.0, -2.0], [0.6, 1.0]]))  # teacher logits / T
    q /= q.sum(1, keepdims=True)
    log_p = student - np.log(np.exp(student).sum(1, keepdims=True))
    assert loss == pytest.approx(float(-(q * log_p).sum(1).mean()), rel=1e-5)
    with pytest.raises(XltError, match="temperature"):
        kd_loss(0.0)


# ---------------------------------------------------------------- teacher once, students by example id


@pytest.fixture(scope="module")
def teacher_artifact(tmp_path_factory, tokenizers, split):
    """One teacher, trained once, shared by the student tests (as in the workflow)."""
    tok = tokenizers[0]
    path = tmp_path_factory.mktemp("teacher") / "logits.npz"
    outcome = run_teacher(
        tiny_classifier(tok, 1), tok, split, 10, seed=3, args=ARGS, logits_path=path, teacher_name="tiny-teacher"
    )
    return path, outcome, tok


def test_teacher_stores_logits_of_its_own_model_keyed_by_example(teacher_artifact, split):
    path, outcome, tok = teacher_artifact
    gold = training_set(split, 10, 3)
    header = read_teacher_logits_header(path)
    assert header["parts"]["labelled"]["examples"] == 10 and header["parts"]["unlabelled"]["examples"] == 80
    assert header["meta"]["size"] == "10" and header["meta"]["split_id"] == split.split_id
    # rows come back by example id even when the student asks in another order
    shuffled = list(reversed(split.unlabelled))
    stored = load_teacher_logits(path, {"unlabelled": shuffled})["unlabelled"]
    direct = predict_logits(outcome.model, tok, shuffled, ARGS.max_length)
    np.testing.assert_allclose(stored, direct, rtol=1e-5, atol=1e-6)
    metrics = {(r["metric"], r.get("split")): r["value"] for r in outcome.records}
    assert metrics[("train_examples", None)] == len(gold) == 10
    pool_acc = float((direct.argmax(1) == [r["heldout_label"] for r in shuffled]).mean())
    assert metrics[("accuracy", "unlabelled")] == pytest.approx(pool_acc)


def _interval(outcome, metric, **dims):
    """The record of `outcome` with these dimensions, and its interval from the outcome's example sets."""
    from xlt.analysis.intervals import record_interval

    (rec,) = [r for r in outcome.records if r["metric"] == metric and all(r.get(k) == v for k, v in dims.items())]
    return rec["value"], record_interval(rec, outcome.examples, resamples=200)


def test_teacher_dev_and_pool_accuracies_get_intervals_from_their_own_predictions(teacher_artifact, split):
    _, outcome, tok = teacher_artifact
    assert all(one["interval_only"] for one in outcome.examples)
    (dev,) = [one for one in outcome.examples if one.get("split") == "dev"]
    # the kept checkpoint's dev predictions: what the restored model predicts, scoring its dev accuracy exactly
    direct = predict_logits(outcome.model, tok, split.dev, ARGS.max_length).argmax(-1)
    assert dev["prediction"] == direct.tolist() and dev["gold"] == [r["label"] for r in split.dev]
    assert np.mean(np.asarray(dev["prediction"]) == dev["gold"]) == outcome.result.best_score
    (pool,) = [one for one in outcome.examples if one.get("split") == "unlabelled"]
    assert pool["gold"] == [r["heldout_label"] for r in split.unlabelled]
    for part in ("dev", "unlabelled"):
        value, (low, high) = _interval(outcome, "accuracy", split=part)
        assert low <= value <= high and low < high, part  # 12 dev examples: a wide interval, never a point


def test_a_history_without_dev_predictions_gives_no_dev_set():
    from xlt.core.training import TrainResult
    from xlt.families.monox.evaluation import dev_examples

    dev = [{"text": "a", "label": 1}, {"text": "b", "label": 0}]
    kept = TrainResult(
        steps=4,
        best_step=2,
        best_score=0.5,
        history=[{"step": 2, "score": 0.5, "dev_prediction": [1, 1]}, {"step": 4, "score": 0.0}],
    )
    (one,) = dev_examples(kept, dev, "en")
    assert (one["prediction"], one["gold"], one["lang"], one["split"]) == ([1, 1], [1, 0], "en", "dev")
    # resumed from a checkpoint written before predictions were kept: no interval, no wrong one
    assert dev_examples(TrainResult(steps=4, best_step=4, best_score=0.0, history=kept.history), dev, "en") == []


def test_evaluation_records_give_accuracy_and_the_majority_class_share(monkeypatch):
    from xlt.families.monox import evaluation

    # gold labels 1, 1, 0, 0; en: all 4 predicted as class 1 (collapsed); xx: 0, 0, 1, 1 (balanced, all wrong)
    logits = {
        "en": np.array([[0, 1], [0, 2], [1, 3], [0, 1]], dtype=float),
        "xx": np.array([[1, 0], [2, 0], [0, 1], [0, 1]], dtype=float),
    }
    monkeypatch.setattr(
        evaluation, "predict_logits", lambda model, tok, examples, max_length: logits[examples[0]["lang"]]
    )
    by_lang = {lang: [{"lang": lang, "label": label} for label in (1, 1, 0, 0)] for lang in ("en", "xx")}
    records = {(r["metric"], r["lang"]): r["value"] for r in evaluation.evaluation_records(None, None, by_lang, 16)}
    assert records == {
        ("accuracy", "en"): 0.5,
        ("accuracy", "xx"): 0.0,
        ("accuracy", "avg"): 0.25,
        ("majority_share", "en"): 1.0,
        ("majority_share", "xx"): 0.5,
    }
    without_average = evaluation.evaluation_records(None, None, by_lang, 16, with_average=False)
    assert {(r["metric"], r["lang"]) for r in without_average} == set(records) - {("accuracy", "avg")}
    assert all(r["split"] == "test" for r in without_average)
    # the test sets' item alignment (CLS: false, XNLI: true) goes with their example sets, for the bootstrap
    for declared in (False, True):
        sets = []
        evaluation.evaluation_records(None, None, by_lang, 16, examples_out=sets, item_aligned=declared)
        assert [(one["lang"], one["item_aligned"]) for one in sets] == [("en", declared), ("xx", declared)]
    sets = []
    evaluation.evaluation_records(None, None, by_lang, 16, examples_out=sets)
    assert not any("item_aligned" in one for one in sets)  # nothing declared: the bootstrap detects it


def test_teacher_and_student_tokenize_differently(tokenizers):
    teacher_tok, student_tok = tokenizers
    text = "boring lovely film r17"
    assert teacher_tok(text)["input_ids"] != student_tok(text)["input_ids"]


def test_kd_student_trains_on_teacher_rows_of_the_same_examples(teacher_artifact, split, tokenizers, monkeypatch):
    path, _, _ = teacher_artifact
    student_tok = tokenizers[1]
    seen = []
    import xlt.families.monox.training as monox

    real_fit = monox.fit

    def spy(model, tok, examples, dev, args, temperature=None, **kwargs):
        seen.append((list(examples), temperature))
        return real_fit(model, tok, examples, dev, args, temperature, **kwargs)

    monkeypatch.setattr(monox, "fit", spy)
    outcome = run_student(
        "kd",
        lambda: tiny_classifier(student_tok, 2),
        student_tok,
        split,
        10,
        3,
        ARGS,
        teacher_logits=path,
        temperature=0.1,
    )
    ((examples, temperature),) = seen
    assert temperature == 0.1 and len(examples) == 10 + 80
    expected = load_teacher_logits(path, {"unlabelled": split.unlabelled})["unlabelled"]
    by_id = {example_id(r): r["teacher_logits"] for r in examples}
    for record, row in zip(split.unlabelled, expected):
        np.testing.assert_allclose(by_id[example_id(record)], row, rtol=1e-6)
    assert {r["metric"] for r in outcome.records} >= {"train_examples", "distill_examples", "accuracy"}


def test_pl_student_gets_gold_plus_confident_teacher_labels(teacher_artifact, split, tokenizers, monkeypatch):
    path, _, _ = teacher_artifact
    student_tok = tokenizers[1]
    probs = softmax(load_teacher_logits(path, {"unlabelled": split.unlabelled})["unlabelled"])
    threshold = float(np.median(probs.max(1)))
    seen = []
    import xlt.families.monox.training as monox

    real_fit = monox.fit
    monkeypatch.setattr(
        monox,
        "fit",
        lambda m, t, ex, dev, a, temperature=None, **kw: seen.append(list(ex)) or real_fit(m, t, ex, dev, a, **kw),
    )
    outcome = run_student(
        "pl",
        lambda: tiny_classifier(student_tok, 2),
        student_tok,
        split,
        10,
        3,
        ARGS,
        teacher_logits=path,
        threshold=threshold,
    )
    data = seen[0]
    keep = probs.max(1) >= threshold
    gold = training_set(split, 10, 3)
    assert data[:10] == gold and len(data) == 10 + int(keep.sum())
    assert [r["label"] for r in data[10:]] == probs[keep].argmax(1).tolist()
    assert all("heldout_label" not in r for r in data)  # the pool's gold labels are never trained on
    metrics = {r["metric"]: r["value"] for r in outcome.records}
    heldout = np.array([r["heldout_label"] for r in split.unlabelled])[keep]
    assert metrics["pseudo_examples"] == keep.sum()
    assert metrics["pseudo_label_accuracy"] == pytest.approx(float((probs[keep].argmax(1) == heldout).mean()))
    # the pseudo labels against the held-out gold labels: an interval-only set around that share
    (pseudo,) = [one for one in outcome.examples if one["metric"] == "pseudo_label_accuracy"]
    assert pseudo["prediction"] == probs[keep].argmax(1).tolist() and pseudo["gold"] == heldout.tolist()
    assert pseudo["interval_only"]
    value, (low, high) = _interval(outcome, "pseudo_label_accuracy")
    assert low <= value <= high and low < high


def test_student_refuses_logits_of_another_training_size(teacher_artifact, split, tokenizers):
    path, _, _ = teacher_artifact
    with pytest.raises(XltError, match="size"):
        run_student(
            "kd",
            lambda: pytest.fail("the student must not load before the logits are checked"),
            tokenizers[1],
            split,
            20,
            3,
            ARGS,
            teacher_logits=path,
        )
    with pytest.raises(XltError, match="teacher's logits"):
        run_student("pl", lambda: None, tokenizers[1], split, 10, 3, ARGS)


def test_self_train_rounds_relabel_the_pool_with_the_student(split, tokenizers):
    tok = tokenizers[1]
    loads = []
    outcome = run_student(
        "self_train", lambda: loads.append(1) or tiny_classifier(tok, 5), tok, split, "all", 3, ARGS, rounds=2
    )
    assert len(loads) == 1  # later rounds continue from the previous round's model
    assert [r["round"] for r in outcome.meta["self_training"]] == [0, 1, 2]
    assert [r["num_pseudo"] for r in outcome.meta["self_training"]] == [0, 80, 80]
    assert len(outcome.meta["round_dev_accuracy"]) == 3
    # the dev interval is the last round's kept checkpoint's, the pseudo labels the last round's too
    (dev,) = [one for one in outcome.examples if one.get("split") == "dev"]
    assert np.mean(np.asarray(dev["prediction"]) == dev["gold"]) == outcome.meta["round_dev_accuracy"][-1]
    for metric, dims in (("accuracy", {"split": "dev"}), ("pseudo_label_accuracy", {})):
        value, (low, high) = _interval(outcome, metric, **dims)
        assert low <= value <= high, metric


def test_self_training_stopped_in_round_one_resumes_to_the_uninterrupted_result(
    split, tokenizers, tmp_path, monkeypatch
):
    import os
    import signal

    import xlt.families.monox.training as monox
    from xlt.core.checkpoint import EXIT_PREEMPTED
    from xlt.core.train_inputs import LayerSchedule

    tok = tokenizers[1]
    reference = run_student("self_train", lambda: tiny_classifier(tok, 5), tok, split, "all", 3, ARGS, rounds=1)

    real_train, calls = monox.train, []

    def stopping_train(*args, **kwargs):
        calls.append(kwargs["checkpoint"].directory)
        if len(calls) == 2:  # round 1: SIGTERM before its second step, as SLURM does at the time limit
            kwargs["layers"] = LayerSchedule(
                on_step=lambda step, epoch: step == 1 and os.kill(os.getpid(), signal.SIGTERM)
            )
        return real_train(*args, **kwargs)

    monkeypatch.setattr(monox, "train", stopping_train)
    with pytest.raises(SystemExit) as stopped:
        run_student(
            "self_train",
            lambda: tiny_classifier(tok, 5),
            tok,
            split,
            "all",
            3,
            ARGS,
            rounds=1,
            checkpoint_dir=tmp_path / "ck",
        )
    assert stopped.value.code == EXIT_PREEMPTED
    assert calls == [tmp_path / "ck" / "round-0", tmp_path / "ck" / "round-1"]
    assert (tmp_path / "ck" / "round-1" / "checkpoint.pt").is_file()

    monkeypatch.setattr(monox, "train", real_train)
    resumed = run_student(
        "self_train",
        lambda: tiny_classifier(tok, 5),
        tok,
        split,
        "all",
        3,
        ARGS,
        rounds=1,
        checkpoint_dir=tmp_path / "ck",
    )
    for a, b in zip(resumed.model.state_dict().values(), reference.model.state_dict().values()):
        assert torch.equal(a, b)
    assert resumed.records == reference.records
    monox.clear_checkpoints(tmp_path / "ck")
    assert not (tmp_path / "ck").exists()


# ---------------------------------------------------------------- verbs end to end


def test_verbs_split_teacher_distill(tmp_path, tokenizers):
    from xlt.cli import main
    from xlt.core.io import read_json, write_jsonl

    teacher_tok, student_tok = tokenizers
    for name, tok, seed in (("teacher", teacher_tok, 1), ("student", student_tok, 2)):
        model = tiny_classifier(tok, seed)
        model.save_pretrained(tmp_path / name)
        tok.save_pretrained(tmp_path / name)
    write_jsonl(tmp_path / "train.jsonl", make_records(60))
    write_jsonl(tmp_path / "dev.jsonl", make_records(10, seed=5))
    write_jsonl(tmp_path / "test.jsonl", make_records(10, seed=6))
    train_flags = [
        "--max-steps",
        "2",
        "--batch-size",
        "8",
        "--max-length",
        "16",
        "--device",
        "cpu",
        "--eval-every",
        "2",
    ]
    assert (
        main(
            [
                "monox-split",
                "--train",
                str(tmp_path / "train.jsonl"),
                "--labelled-fraction",
                "0.5",
                "--dev",
                str(tmp_path / "dev.jsonl"),
                "--seed",
                "1",
                "--out",
                str(tmp_path / "split"),
            ]
        )
        == 0
    )
    assert (
        main(
            [
                "train-teacher",
                "--model",
                str(tmp_path / "teacher"),
                "--split",
                str(tmp_path / "split"),
                "--size",
                "all",
                "--num-labels",
                "2",
                "--eval-data",
                str(tmp_path / "test.jsonl"),
                "--eval-langs",
                "en",
                "--seed",
                "1",
                "--out",
                str(tmp_path / "t"),
                *train_flags,
            ]
        )
        == 0
    )
    axes = {"task": "toy", "mode": "kd", "size": "all", "temperature": 0.1, "seed": 1}
    assert (
        main(
            [
                "distill",
                "--mode",
                "kd",
                "--model",
                str(tmp_path / "student"),
                "--split",
                str(tmp_path / "split"),
                "--num-labels",
                "2",
                "--teacher-logits",
                str(tmp_path / "t" / "logits.npz"),
                "--eval-data",
                str(tmp_path / "test.jsonl"),
                str(tmp_path / "test.jsonl"),
                "--eval-langs",
                "en,xx",
                "--axes",
                json.dumps(axes),
                "--seed",
                "1",
                "--out",
                str(tmp_path / "s" / "metrics.json"),
                *train_flags,
            ]
        )
        == 0
    )
    teacher, student = read_json(tmp_path / "t" / "metrics.json"), read_json(tmp_path / "s" / "metrics.json")
    assert not (tmp_path / "t" / "checkpoint").exists() and not (tmp_path / "s" / "checkpoint").exists()
    assert teacher["meta"]["family"] == "monox" and teacher["meta"]["role"] == "teacher"
    assert {(r["lang"], r["split"]) for r in teacher["metrics"] if r["metric"] == "accuracy"} == {
        ("en", "dev"),
        ("en", "unlabelled"),
        ("en", "test"),
    }  # no average for a teacher
    assert student["meta"]["axes"] == axes
    test_acc = {r["lang"]: r["value"] for r in student["metrics"] if r["metric"] == "accuracy" and r["split"] == "test"}
    assert test_acc["avg"] == pytest.approx((test_acc["en"] + test_acc["xx"]) / 2) and test_acc["en"] == test_acc["xx"]
    shares = {r["lang"]: r["value"] for r in student["metrics"] if r["metric"] == "majority_share"}
    assert set(shares) == {"en", "xx"} and shares["en"] == shares["xx"] and 0.5 <= shares["en"] <= 1.0  # 2 labels
    # every accuracy has an interval (dev, pool and test); predictions stay out of the metrics file
    from xlt.report.aggregate import aggregate

    table = aggregate([tmp_path / "t" / "metrics.json", tmp_path / "s" / "metrics.json"], resamples=200)
    accuracy = table[table.metric == "accuracy"]
    assert len(accuracy) == 3 + 4 and accuracy.ci_low.notna().all()
    assert ((accuracy.ci_low <= accuracy.value) & (accuracy.value <= accuracy.ci_high)).all()
    assert all("dev_prediction" not in h for run in (teacher, student) for h in run["meta"]["history"])
    # a language list that does not match the files fails before any training
    assert (
        main(
            [
                "distill",
                "--mode",
                "finetune",
                "--model",
                str(tmp_path / "student"),
                "--split",
                str(tmp_path / "split"),
                "--num-labels",
                "2",
                "--eval-data",
                str(tmp_path / "test.jsonl"),
                "--eval-langs",
                "en,de",
                "--out",
                str(tmp_path / "x.json"),
            ]
        )
        == 2
    )


def test_distill_freezes_the_students_embeddings_and_trains_the_rest(tmp_path, tokenizers):
    import torch
    from transformers import AutoModelForSequenceClassification

    from xlt.cli import main
    from xlt.core.io import read_json, write_jsonl

    _, student_tok = tokenizers
    model = tiny_classifier(student_tok, 2)
    model.save_pretrained(tmp_path / "student")
    student_tok.save_pretrained(tmp_path / "student")
    write_jsonl(tmp_path / "train.jsonl", make_records(40))
    write_jsonl(tmp_path / "dev.jsonl", make_records(8, seed=5))
    assert (
        main(
            [
                "monox-split",
                "--train",
                str(tmp_path / "train.jsonl"),
                "--labelled-fraction",
                "0.5",
                "--dev",
                str(tmp_path / "dev.jsonl"),
                "--seed",
                "1",
                "--out",
                str(tmp_path / "split"),
            ]
        )
        == 0
    )
    assert (
        main(
            [
                "distill",
                "--mode",
                "finetune",
                "--model",
                str(tmp_path / "student"),
                "--split",
                str(tmp_path / "split"),
                "--num-labels",
                "2",
                "--freeze-depth",
                "0",
                "--eval-data",
                str(tmp_path / "dev.jsonl"),
                "--eval-langs",
                "en",
                "--seed",
                "1",
                "--save-model",
                str(tmp_path / "trained"),
                "--out",
                str(tmp_path / "s" / "metrics.json"),
                "--max-steps",
                "3",
                "--batch-size",
                "8",
                "--max-length",
                "16",
                "--device",
                "cpu",
                "--lr",
                "0.01",
            ]
        )
        == 0
    )
    before, after = (
        model.state_dict(),
        AutoModelForSequenceClassification.from_pretrained(tmp_path / "trained").state_dict(),
    )
    embeddings = [k for k in before if ".embeddings." in k]
    assert embeddings and all(torch.equal(before[k], after[k]) for k in embeddings)
    assert not all(torch.equal(before[k], after[k]) for k in before if ".encoder.layer.0." in k)
    assert read_json(tmp_path / "s" / "metrics.json")["meta"]["freeze_depth"] == 0
