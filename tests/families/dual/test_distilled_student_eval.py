"""Issue 35, item 3: a student distilled from a teacher of another width is saved and scored as
trained, its projection included, by dev selection and by every evaluator (`eval-embeddings`:
Tatoeba and STS; `mine`: BUCC; `align`: one more index, the projected sentence vector)."""

import json

import numpy as np
import pytest
from test_dual_distill import distill_argv, write_bitext

from xlt import cli
from xlt.core.io import read_json
from xlt.core.models import load_tokenizer
from xlt.core.sentence_encoder import SentenceEncoder
from xlt.data import demo
from xlt.data.sts_files import load_sts
from xlt.evaluate.retrieval import bitext_retrieval
from xlt.evaluate.sts import sts_records
from xlt.families.dual.dual_encoder import sentence_vectors

MAX_LENGTH = 32


@pytest.fixture(scope="module")
def student(tmp_path_factory, demo_model_dir):
    """A demo student (32 wide) distilled for a few steps from a 16-wide teacher: (its model dir, bitext root)."""
    from xlt.data.demo_model import build_demo_model

    root = tmp_path_factory.mktemp("distilled")
    teacher = root / "teacher"
    build_demo_model(
        teacher, ["mixed"], layers=1, hidden_size=16, heads=2, pretrain_steps=1, corpus_size=50, vocab_size=200
    )
    assert cli.main(distill_argv(root, demo_model_dir, teacher, root / "run", steps=4)) == 0
    return root / "run" / "model", root


def projected_and_raw(model_dir, sentences):
    """The student's vectors as trained (through its projection) and its bare pooled vectors."""
    encoder = SentenceEncoder.from_pretrained(str(model_dir)).eval()
    tokenizer = load_tokenizer(str(model_dir))
    projected = sentence_vectors(encoder, tokenizer, sentences, MAX_LENGTH)
    encoder.projection = None
    return projected, sentence_vectors(encoder, tokenizer, sentences, MAX_LENGTH)


def test_dev_selection_scores_the_projected_student(student):
    model_dir, root = student
    dev = read_json(model_dir.parent / "train.json")
    records = {(r["lang"], r["direction"]): r["value"] for r in dev["metrics"] if r["metric"] == "dev_retrieval_acc"}
    bitext = [json.loads(line) for line in (root / "demo-bitext" / "qaa" / "dev.jsonl").read_text().splitlines()]
    texts, english = [r["text"] for r in bitext], [r["text_pair"] for r in bitext]
    (xx, _), (en, _) = projected_and_raw(model_dir, texts), projected_and_raw(model_dir, english)
    assert xx.shape[1] == 16
    result = bitext_retrieval(xx, en, texts, english, match="index")
    assert records[("qaa", "xx->en")] == pytest.approx(result.accuracy_xx_to_en)


def test_eval_embeddings_scores_the_projected_vectors(student, tmp_path):
    model_dir, root = student
    sts = tmp_path / "sts" / "qaa" / "test.jsonl"
    sts.parent.mkdir(parents=True)
    sts.write_text("".join(json.dumps(r) + "\n" for r in demo.generate("sts", "qaa", "test", 40, 5)))
    out = tmp_path / "eval.json"
    assert (
        cli.main(
            [
                "eval-embeddings",
                "--model",
                str(model_dir),
                "--pooling",
                "mean",
                "--sts",
                str(sts),
                "--bitext",
                write_bitext(tmp_path, "qaa", "test", 30),
                "--max-length",
                str(MAX_LENGTH),
                "--device",
                "cpu",
                "--family",
                "dual",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    metrics = read_json(out)
    assert metrics["meta"]["projection"] == [32, 16]
    scored = {r["similarity"]: r["value"] for r in metrics["metrics"] if r["metric"] == "spearman"}
    pairs = load_sts(sts)
    (a, raw_a), (b, raw_b) = (
        projected_and_raw(model_dir, pairs.sentences1),
        projected_and_raw(model_dir, pairs.sentences2),
    )
    expected = {r["similarity"]: r["value"] for r in sts_records(a, b, pairs.scores) if r["metric"] == "spearman"}
    unprojected = {
        r["similarity"]: r["value"] for r in sts_records(raw_a, raw_b, pairs.scores) if r["metric"] == "spearman"
    }
    assert scored == pytest.approx(expected, abs=1e-6)
    assert scored["dot"] != pytest.approx(unprojected["dot"], abs=1e-6)  # the projection changed what is scored


def test_a_pooling_the_projection_never_saw_is_refused(student, tmp_path, capsys):
    model_dir, _ = student
    assert (
        cli.main(
            [
                "eval-embeddings",
                "--model",
                str(model_dir),
                "--pooling",
                "cls",
                "--bitext",
                write_bitext(tmp_path, "qaa", "test", 10),
                "--family",
                "dual",
                "--out",
                str(tmp_path / "e.json"),
            ]
        )
        != 0
    )
    assert "trained on its mean-pooled layer -1" in capsys.readouterr().err


def test_mining_and_alignment_score_the_projected_vectors(student, tmp_path):
    model_dir, root = student
    bucc = tmp_path / "bucc"
    assert (
        cli.main(
            [
                "make-bucc",
                "--pair",
                "qaa-en",
                "--out",
                str(bucc),
                "--bitext",
                f"dev={write_bitext(tmp_path, 'qaa', 'dev', 30)}",
                "--bitext",
                f"test={write_bitext(tmp_path, 'qaa', 'test', 30)}",
                "--seed",
                "1",
            ]
        )
        == 0
    )
    mined = tmp_path / "mine.json"
    assert (
        cli.main(
            [
                "mine",
                "--model",
                str(model_dir),
                "--bucc-dir",
                str(bucc),
                "--pair",
                "qaa-en",
                "--max-length",
                str(MAX_LENGTH),
                "--device",
                "cpu",
                "--out-metrics",
                str(mined),
            ]
        )
        == 0
    )
    assert read_json(mined)["meta"]["projection"] == [32, 16]

    aligned = tmp_path / "align.json"
    bitext = write_bitext(tmp_path, "qab", "test", 30)
    assert (
        cli.main(
            [
                "align",
                "--model",
                str(model_dir),
                "--bitext",
                bitext,
                "--max-length",
                str(MAX_LENGTH),
                "--device",
                "cpu",
                "--out-metrics",
                str(aligned),
            ]
        )
        == 0
    )
    metrics = read_json(aligned)
    assert metrics["meta"]["projection"] == {
        "index": 3,
        "layer": 2,
        "shape": [32, 16],
    }  # 2 layers: index 3 is the output
    records = {
        (r["layer"], r["direction"]): r["value"] for r in metrics["metrics"] if r["metric"] == "bitext_retrieval_acc"
    }
    assert {layer for layer, _ in records} == {0, 1, 2, 3}
    pairs = [json.loads(line) for line in open(bitext)]
    (xx, _), (en, _) = (projected_and_raw(model_dir, [p[k] for p in pairs]) for k in ("text", "text_pair"))
    result = bitext_retrieval(xx.astype(np.float64), en.astype(np.float64), match="index", dtype=np.float64)
    assert records[(3, "xx->en")] == pytest.approx(result.accuracy_xx_to_en)
    assert records[(3, "en->xx")] == pytest.approx(result.accuracy_en_to_xx)
