"""`xlt train-dual --objective mse_distill`: the teacher embeds each distinct English sentence
once (forward passes counted), its float16 vectors are stored in the run directory and reused,
the student learns them, and a teacher of another width gets a trained projection."""

import json

import numpy as np
import pytest

from xlt import cli
from xlt.core.sentence_encoder import SentenceEncoder
from xlt.data import demo
from xlt.families.dual import distill


def write_bitext(root, lang, split, size):
    path = root / "demo-bitext" / lang / f"{split}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in demo.generate("bitext", lang, split, size, 13)))
    return str(path)


@pytest.fixture
def counted(monkeypatch):
    """Every sentence the teacher embeds (distill.sentence_vectors is its only forward pass)."""
    seen = []

    def counting(model, tokenizer, sentences, *args):
        seen.extend(sentences)
        return sentence_vectors(model, tokenizer, sentences, *args)

    sentence_vectors = distill.sentence_vectors
    monkeypatch.setattr(distill, "sentence_vectors", counting)
    return seen


def distill_argv(tmp_path, student, teacher, out, steps=24):
    argv = [
        "train-dual",
        "--objective",
        "mse_distill",
        "--model",
        str(student),
        "--teacher",
        str(teacher),
        "--pooling",
        "mean",
        "--max-steps",
        str(steps),
        "--batch-size",
        "16",
        "--lr",
        "2e-3",
        "--eval-every",
        "8",
        "--max-length",
        "32",
        "--log-every",
        "8",
        "--device",
        "cpu",
        "--seed",
        "3",
        "--out",
        str(out),
        "--run-id",
        "tiny-distill",
    ]
    for lang in ("qaa", "qac"):
        argv += ["--train", write_bitext(tmp_path, lang, "train", 48), "--dev", write_bitext(tmp_path, lang, "dev", 16)]
    return argv


def test_teacher_embeds_each_distinct_english_sentence_once_across_epochs(tmp_path, demo_model_dir, counted):
    out = tmp_path / "run"
    # 96 pairs, 24 steps of 16: four epochs over the data, one teacher pass
    assert cli.main(distill_argv(tmp_path, demo_model_dir, demo_model_dir, out)) == 0
    english = [
        json.loads(line)["text_pair"]
        for lang in ("qaa", "qac")
        for line in open(tmp_path / "demo-bitext" / lang / "train.jsonl")
    ]
    assert len(set(english)) < len(english)  # the demo bitext is multi-way: English repeats across languages
    assert sorted(counted) == sorted(set(english))
    stored = np.load(out / distill.TEACHER_FILE)
    assert stored["vectors"].dtype == np.float16 and stored["vectors"].shape == (len(set(english)), 32)

    meta = json.loads((out / "train.json").read_text())["meta"]
    assert meta["axes"]["objective"] == "mse_distill" and meta["axes"]["margin"] is None
    loss = meta["loss"]
    assert loss["name"] == "mse_distillation" and loss["projection"] is None
    assert loss["teacher"] == str(demo_model_dir) and loss["teacher_vectors"]["computed"] is True
    assert loss["teacher_vectors"]["sentences"] == len(set(english))
    curve = [point["loss"] for point in meta["loss_curve"]]
    assert curve[-1] < curve[0]  # the student moves onto the teacher's vectors

    # a rerun in the same run directory reads the stored vectors: no teacher pass at all
    counted.clear()
    assert cli.main(distill_argv(tmp_path, demo_model_dir, demo_model_dir, out)) == 0
    assert counted == []
    assert json.loads((out / "train.json").read_text())["meta"]["loss"]["teacher_vectors"]["computed"] is False


def test_stored_vectors_of_another_teacher_are_recomputed(tmp_path, demo_model_dir, counted):
    out = tmp_path / "run"
    np.savez(out.mkdir() or out / distill.TEACHER_FILE, vectors=np.zeros((3, 32), np.float16), key=np.array("other"))
    assert cli.main(distill_argv(tmp_path, demo_model_dir, demo_model_dir, out, steps=2)) == 0
    assert counted  # the stale file was not trusted


@pytest.mark.parametrize("examples", ["pairs", "sentences"])
def test_a_teacher_of_another_width_trains_a_projection_recorded_in_the_metadata(
    tmp_path, demo_model_dir, counted, examples
):
    """Both kinds of example project the student's vectors once (the student owns the projection)."""
    from xlt.data.demo_model import build_demo_model

    teacher = tmp_path / "teacher"
    build_demo_model(
        teacher, ["mixed"], layers=1, hidden_size=16, heads=2, pretrain_steps=1, corpus_size=50, vocab_size=200
    )
    out = tmp_path / "run"
    assert (
        cli.main(distill_argv(tmp_path, demo_model_dir, teacher, out, steps=4) + ["--distill-examples", examples]) == 0
    )
    loss = json.loads((out / "train.json").read_text())["meta"]["loss"]
    assert loss["projection"] == {"from": 32, "to": 16, "file": "model/xlt_projection.safetensors", "trained": True}
    # the projection is saved with the student: it loads as the 16-wide encoder it was trained as
    student = SentenceEncoder.from_pretrained(str(out / "model"))
    assert student.dim == 16 and student.projection.weight.shape == (16, 32)


@pytest.mark.parametrize(
    "extra, message",
    [
        ([], "needs --teacher"),
        (["--teacher", "x", "--objective", "additive_margin"], "only read by --objective mse_distill"),
    ],
)
def test_bad_teacher_settings_fail_before_training(tmp_path, demo_model_dir, capsys, extra, message):
    argv = [
        "train-dual",
        "--model",
        str(demo_model_dir),
        "--train",
        write_bitext(tmp_path, "qaa", "train", 8),
        "--dev",
        write_bitext(tmp_path, "qaa", "dev", 8),
        "--out",
        str(tmp_path / "run"),
    ]
    argv += extra if extra else ["--objective", "mse_distill"]
    assert cli.main(argv) != 0
    assert message in capsys.readouterr().err


def test_length_bucketing_batches_pairs_of_similar_length(tmp_path, demo_model_dir, counted, monkeypatch):
    """config/paper.yaml buckets the distillation's batches: the examples give their lengths (the
    longer side's count; tuples alone would be refused), the loop orders every pair by them, and the
    run trains."""
    from xlt.core import bucketing

    pairs = [("ein zwei drei vier", "one two three four"), ("kurz", "short"), ("a b c d e f", "a b c d e f g")]

    def words(texts):  # a stand-in counter: the run's own is the student's tokenizer (token_counter)
        return [len(text.split()) for text in texts]

    examples = distill.distill_examples(pairs, ["one two three four", "short", "a b c d e f g"], words)
    assert examples.lengths() == [4, 1, 7] and [row for *_, row in examples] == [0, 1, 2]

    orders = []
    bucketed_order = bucketing.bucketed_order
    monkeypatch.setattr(
        "xlt.core.training.bucketed_order",
        lambda order, lengths, *a, **k: orders.append(lengths) or bucketed_order(order, lengths, *a, **k),
    )
    out = tmp_path / "run"
    assert cli.main(distill_argv(tmp_path, demo_model_dir, demo_model_dir, out) + ["--length-bucketing", "True"]) == 0
    assert orders and len(orders[0]) == 96  # every pair measured, in every epoch
    curve = [point["loss"] for point in json.loads((out / "train.json").read_text())["meta"]["loss_curve"]]
    assert curve[-1] < curve[0]


def test_a_compiled_distillation_runs_the_student_through_the_compiled_module(
    tmp_path, demo_model_dir, counted, monkeypatch
):
    """With --compile the loss calls what torch.compile returned (the student's encoder inside it),
    not the plain student beside it: a compile that is never called would cost its time for nothing."""
    import torch

    calls = []

    class Counting:  # stands in for torch.compile's module: counts its calls, runs the module eagerly
        def __init__(self, module):
            self.module = module

        def __call__(self, *args, **kwargs):
            calls.append(1)
            return self.module(*args, **kwargs)

        def __getattr__(self, name):
            return getattr(self.module, name)

    monkeypatch.setattr(torch, "compile", lambda module, **kwargs: Counting(module))
    argv = distill_argv(tmp_path, demo_model_dir, demo_model_dir, tmp_path / "run", steps=6) + ["--compile", "True"]
    assert cli.main(argv) == 0
    assert len(calls) == 6  # one call a training step


def test_sentence_examples_are_parallel_sentences_datasets():
    """make_multilingual.py (ParallelSentencesDataset.add_dataset): per language each English sentence
    and each of its distinct translations is one example labelled with the English teacher row; a
    translation equal to its English sentence counts once, and each language brings its English again."""
    from xlt.data.bitext_files import Bitext

    bitexts = [
        Bitext("de", ["hallo", "welt", "Paris"], ["hello", "world", "Paris"]),
        Bitext("fr", ["bonjour", "salut"], ["hello", "hello"]),
    ]
    examples = distill.sentence_examples(bitexts, ["hello", "world", "Paris"], lambda texts: [len(t) for t in texts])
    assert list(examples) == [
        ("hello", 0),
        ("hallo", 0),
        ("world", 1),
        ("welt", 1),
        ("Paris", 2),
        ("hello", 0),
        ("bonjour", 0),
        ("salut", 0),
    ]
    assert examples.lengths() == [5, 5, 5, 4, 5, 5, 7, 5]  # the counter's (characters here)


def test_bucketing_lengths_are_the_students_tokens_not_whitespace_words(demo_model_dir):
    """Issue 47: a Chinese or Japanese sentence is one whitespace "word"; measured in words, the
    bucketed batches gathered the CJK sentences. The count is the tokenizer's, as the collate cuts it:
    BERT's tokenizer splits CJK text into a token a character (plus [CLS] and [SEP]), and the
    max length caps it."""
    from xlt.core.sentence_encoder import load_tokenizer
    from xlt.data.bitext_files import Bitext

    count = distill.token_counter(load_tokenizer(str(demo_model_dir)), max_length=8)
    assert count(["这是一个句子", "日本語の文です", "hello world"])[:2] == [
        6 + 2,
        8,
    ]  # a token a character + 2, cut to 8
    examples = distill.sentence_examples([Bitext("zh", ["这是一个句子", "好"], ["a b", "c"])], ["a b", "c"], count)
    assert [text for text, _ in examples] == ["a b", "这是一个句子", "c", "好"]
    assert examples.lengths() == [4, 8, 3, 3] and len("这是一个句子".split()) == 1


def test_select_pairs_applies_the_scripts_filters():
    from xlt.core.errors import XltError
    from xlt.data.bitext_files import Bitext

    bitext = Bitext("de", ["a" * 5, "b" * 300, "c", "d"], ["e", "f", "g" * 251, "h"])
    kept = distill.select_pairs([bitext], max_per_language=0, max_chars=250)[0]
    assert kept.texts == ["a" * 5, "d"] and kept.english == ["e", "h"]
    assert distill.select_pairs([bitext], max_per_language=3)[0].texts == ["a" * 5, "b" * 300, "c"]
    assert distill.select_pairs([bitext])[0].texts == bitext.texts  # 0: no limit
    with pytest.raises(XltError, match="max_sentence_chars 1"):
        distill.select_pairs([bitext], max_chars=1)


def test_sentence_batches_hold_single_sentences_and_count_the_budget(tmp_path, demo_model_dir, counted, monkeypatch):
    """--distill-examples sentences: a batch of 16 is 16 sentences (not 16 pairs, 32), and the run
    records sentences_seen = steps x 16; pairs record steps x 32."""
    batches = []
    collate = distill.make_sentence_collate

    def counting_collate(*a):
        inner = collate(*a)

        def counted(chunk):
            batches.append(len(chunk))
            return inner(chunk)

        return counted

    monkeypatch.setattr(distill, "make_sentence_collate", counting_collate)
    out = tmp_path / "run"
    argv = distill_argv(tmp_path, demo_model_dir, demo_model_dir, out, steps=6)
    assert cli.main(argv + ["--distill-examples", "sentences", "--max-sentences-per-language", "40"]) == 0
    assert batches == [16] * 6
    meta = json.loads((out / "train.json").read_text())["meta"]
    assert meta["sentences_seen"] == 6 * 16
    assert meta["loss"]["examples"] == "sentences" and meta["loss"]["train_pairs_used"] == {"qaa": 40, "qac": 40}
    curve = [point["loss"] for point in meta["loss_curve"]]
    assert all(np.isfinite(curve))
    pairs_out = tmp_path / "pairs"
    assert cli.main(distill_argv(tmp_path, demo_model_dir, demo_model_dir, pairs_out, steps=2)) == 0
    assert json.loads((pairs_out / "train.json").read_text())["meta"]["sentences_seen"] == 2 * 32


def test_the_scripts_settings_are_refused_for_the_additive_margin(tmp_path, demo_model_dir, capsys):
    argv = [
        "train-dual",
        "--model",
        str(demo_model_dir),
        "--train",
        write_bitext(tmp_path, "qaa", "train", 8),
        "--dev",
        write_bitext(tmp_path, "qaa", "dev", 8),
        "--out",
        str(tmp_path / "run"),
        "--distill-examples",
        "sentences",
    ]
    assert cli.main(argv) != 0
    assert "--distill-examples: only read by --objective mse_distill" in capsys.readouterr().err
