"""SBERT-style training (`xlt train-sbert`) end to end, its loss by hand, the demo sweep."""

import math

import pytest
import torch
import yaml
from conftest import REPO

from xlt.cli import main
from xlt.core.errors import XltError
from xlt.core.io import read_json, write_jsonl
from xlt.core.sentence_encoder import read_pooling
from xlt.core.settings import validate
from xlt.data import demo
from xlt.families.sbert.plan import runs
from xlt.losses.softmax_pair import SoftmaxPairLoss


def demo_config() -> dict:
    return yaml.safe_load((REPO / "config.yaml").read_text())


def test_softmax_pair_features_and_loss_by_hand():
    loss = SoftmaxPairLoss(dim=2, num_labels=3)
    u, v = torch.tensor([[1.0, -2.0]]), torch.tensor([[3.0, 1.0]])
    assert torch.equal(loss.features(u, v), torch.tensor([[1.0, -2.0, 3.0, 1.0, 2.0, 3.0]]))
    with torch.no_grad():
        loss.classifier.weight.zero_()
        loss.classifier.bias.copy_(torch.tensor([0.0, 1.0, 2.0]))
    expected = -math.log(math.exp(2.0) / (1 + math.e + math.exp(2.0)))
    assert loss(u, v, torch.tensor([2])).item() == pytest.approx(expected, rel=1e-6)
    assert SoftmaxPairLoss(2, use_product=True).features(u, v).shape == (1, 8)


def test_demo_sweep_has_baselines_and_trained_runs():
    rows = runs(validate(demo_config()))
    assert [r["run_id"] for r in rows] == [
        f"demo-mbert-{p}-L-1-{kind}" for p in ("mean", "max", "cls") for kind in ("untrained", "depthnone-seed1")
    ]
    assert all(r["freeze_depth"] == -1 and r["seed"] == 1 for r in rows if r["trained"])
    assert all(r["freeze_depth"] is None and r["seed"] is None for r in rows if not r["trained"])


@pytest.mark.parametrize(
    "mutate, message",
    [
        (
            lambda s: s.update(layers=[13]),
            r"layer 13 in sbert.layers is out of range for model 'demo-mbert' with 12 layers",
        ),
        (
            lambda s: s["eval"]["bitext"].update(dataset="demo-sts"),
            r"sbert.eval.bitext.dataset: dataset 'demo-sts' is a sts dataset; this needs a bitext dataset",
        ),
    ],
)
def test_demo_config_errors_name_the_key(mutate, message):
    config = demo_config()
    mutate(config["sbert"])
    with pytest.raises(XltError, match=message):
        validate(config)


def test_train_sbert_end_to_end(tmp_path, demo_model_dir):
    write_jsonl(tmp_path / "train.jsonl", demo.generate("nli", "en", "train", 48, seed=1))
    write_jsonl(tmp_path / "dev.jsonl", demo.generate("sts", "en", "dev", 16, seed=1))
    out = tmp_path / "run"
    code = main(
        [
            "train-sbert",
            "--model",
            str(demo_model_dir),
            "--train",
            str(tmp_path / "train.jsonl"),
            "--dev-sts",
            str(tmp_path / "dev.jsonl"),
            "--pooling",
            "max",
            "--layer",
            "-2",
            "--out",
            str(out),
            "--max-steps",
            "4",
            "--batch-size",
            "8",
            "--eval-every",
            "2",
            "--lr",
            "1e-3",
            "--device",
            "cpu",
        ]
    )
    assert code == 0
    metrics = read_json(out / "train.json")
    assert metrics["meta"]["axes"]["pooling"] == "max" and metrics["meta"]["steps"] == 4
    # the kept checkpoint is the best dev evaluation, and the saved model reproduces its score
    [dev] = metrics["metrics"]
    scores = {h["step"]: h["score"] for h in metrics["meta"]["history"] if "score" in h}
    assert sorted(scores) == [2, 4]
    assert dev["metric"] == "dev_spearman_cosine" and dev["value"] == max(scores.values())
    assert scores[metrics["meta"]["best_step"]] == dev["value"]
    from scipy.stats import spearmanr

    from xlt.core.models import load_tokenizer
    from xlt.core.sentence_encoder import SentenceEncoder, tokenize

    dev_rows = demo.generate("sts", "en", "dev", 16, seed=1)
    saved, tokenizer = SentenceEncoder.from_pretrained(str(out / "model")).eval(), load_tokenizer(str(out / "model"))
    with torch.no_grad():
        u = saved(**tokenize(tokenizer, [r["text"] for r in dev_rows], 128))
        v = saved(**tokenize(tokenizer, [r["text_pair"] for r in dev_rows], 128))
    cosine = torch.nn.functional.cosine_similarity(u, v).numpy()
    assert spearmanr(cosine, [r["score"] for r in dev_rows])[0] == pytest.approx(dev["value"], abs=1e-5)
    assert read_pooling(str(out / "model")) == {"pooling": "max", "layer": -2}
    # word embeddings are frozen by default: identical to the pretrained ones
    from xlt.core.models import load_encoder

    before, after = load_encoder(str(demo_model_dir)), load_encoder(str(out / "model"))
    assert torch.equal(before.embeddings.word_embeddings.weight, after.embeddings.word_embeddings.weight)
    # pooling the second-to-last hidden state trains the layers below it, never the top layer
    assert not torch.equal(before.encoder.layer[-2].output.dense.weight, after.encoder.layer[-2].output.dense.weight)
    assert torch.equal(before.encoder.layer[-1].output.dense.weight, after.encoder.layer[-1].output.dense.weight)


def test_train_sbert_rejects_bad_axes_before_training(tmp_path, demo_model_dir, capsys):
    write_jsonl(tmp_path / "train.jsonl", demo.generate("nli", "en", "train", 8, seed=1))
    write_jsonl(tmp_path / "dev.jsonl", demo.generate("sts", "en", "dev", 8, seed=1))
    out = tmp_path / "run"
    code = main(
        [
            "train-sbert",
            "--model",
            str(demo_model_dir),
            "--train",
            str(tmp_path / "train.jsonl"),
            "--dev-sts",
            str(tmp_path / "dev.jsonl"),
            "--out",
            str(out),
            "--max-steps",
            "2",
            "--batch-size",
            "4",
            "--device",
            "cpu",
            "--axes",
            "[1, 2]",
        ]
    )
    assert code != 0
    assert "--axes '[1, 2]' must be a JSON object" in capsys.readouterr().err
    assert not out.exists()  # nothing trained, nothing written


def test_train_sbert_trains_and_selects_with_the_models_prompt(tmp_path, demo_model_dir, monkeypatch):
    """The prompt eval-embeddings puts before every sentence goes there in training and dev
    selection too (it was evaluation only): every tokenised sentence starts with it, and the dev
    score is the saved model's with the prompt."""
    from scipy.stats import spearmanr

    from xlt.core import sentence_encoder
    from xlt.core.models import load_tokenizer
    from xlt.core.sentence_encoder import SentenceEncoder, tokenize
    from xlt.families.sbert import train_sbert

    seen, real_tokenize = [], sentence_encoder.tokenize
    for module in (sentence_encoder, train_sbert):  # the encoder's own calls (dev selection), the job's (training)
        monkeypatch.setattr(
            module, "tokenize", lambda tok, texts, n, *rest: seen.extend(texts) or real_tokenize(tok, texts, n, *rest)
        )
    write_jsonl(tmp_path / "train.jsonl", demo.generate("nli", "en", "train", 16, seed=1))
    dev_rows = demo.generate("sts", "en", "dev", 16, seed=1)
    write_jsonl(tmp_path / "dev.jsonl", dev_rows)
    out = tmp_path / "run"
    assert (
        main(
            [
                "train-sbert",
                "--model",
                str(demo_model_dir),
                "--train",
                str(tmp_path / "train.jsonl"),
                "--dev-sts",
                str(tmp_path / "dev.jsonl"),
                "--prompt",
                "query: ",
                "--out",
                str(out),
                "--max-steps",
                "2",
                "--batch-size",
                "8",
                "--eval-every",
                "2",
                "--lr",
                "1e-3",
                "--device",
                "cpu",
            ]
        )
        == 0
    )
    assert len(seen) == 2 * 2 * 8 + 2 * 16 and all(text.startswith("query: ") for text in seen)
    metrics = read_json(out / "train.json")
    assert metrics["meta"]["prompt"] == "query: "
    saved, tokenizer = SentenceEncoder.from_pretrained(str(out / "model")).eval(), load_tokenizer(str(out / "model"))
    with torch.no_grad():
        u = saved(**tokenize(tokenizer, ["query: " + r["text"] for r in dev_rows], 128))
        v = saved(**tokenize(tokenizer, ["query: " + r["text_pair"] for r in dev_rows], 128))
    cosine = torch.nn.functional.cosine_similarity(u, v).numpy()
    assert spearmanr(cosine, [r["score"] for r in dev_rows])[0] == pytest.approx(
        metrics["metrics"][0]["value"], abs=1e-5
    )
