"""Shared fixtures: tiny random encoders of each supported architecture (no downloads)."""
from __future__ import annotations

import os
from pathlib import Path

import pytest
import torch

REPO = Path(__file__).resolve().parents[1]


def shared_data_dir() -> Path:
    """../shared/data beside the checkout (or $XLT_SHARED_DATA); tests skip when absent."""
    return Path(os.environ.get("XLT_SHARED_DATA", REPO.parent / "shared" / "data"))


def tiny_config(arch: str, layers: int = 4, vocab: int = 120, dropout: float = 0.1):
    from transformers import BertConfig, DistilBertConfig, XLMRobertaConfig

    if arch == "bert":
        return BertConfig(vocab_size=vocab, hidden_size=32, num_hidden_layers=layers, num_attention_heads=2,
                          intermediate_size=64, max_position_embeddings=64, hidden_dropout_prob=dropout,
                          attention_probs_dropout_prob=dropout)
    if arch == "xlmr":
        return XLMRobertaConfig(vocab_size=vocab, hidden_size=32, num_hidden_layers=layers, num_attention_heads=2,
                                intermediate_size=64, max_position_embeddings=70, pad_token_id=1,
                                hidden_dropout_prob=dropout, attention_probs_dropout_prob=dropout)
    if arch == "distilbert":
        return DistilBertConfig(vocab_size=vocab, dim=32, n_layers=layers, n_heads=2, hidden_dim=64,
                                max_position_embeddings=64, dropout=dropout, attention_dropout=dropout)
    raise ValueError(arch)


def tiny_classifier(arch: str, layers: int = 4, num_labels: int = 3, seed: int = 0, dropout: float = 0.1):
    from transformers import AutoModelForSequenceClassification

    torch.manual_seed(seed)
    config = tiny_config(arch, layers, dropout=dropout)
    config.num_labels = num_labels
    return AutoModelForSequenceClassification.from_config(config)


@pytest.fixture(params=["bert", "xlmr", "distilbert"])
def arch(request):
    return request.param


@pytest.fixture(scope="session")
def demo_model_dir(tmp_path_factory) -> Path:
    """A small demo encoder built by the project's own builder (2 layers, a few MLM steps)."""
    from xlt.core.demo_model import build_demo_model

    out = tmp_path_factory.mktemp("demo-model")
    build_demo_model(out, ["mixed"], layers=2, hidden_size=32, heads=2, pretrain_steps=5, corpus_size=200, vocab_size=300)
    return out


@pytest.fixture
def one_thread():
    """Run the test on one torch thread, then restore the previous count."""
    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(previous)


@pytest.fixture
def bag_of_words_bert(tmp_path):
    """A saved 2-layer BERT whose layer 0 is a bag of words (tests/bag_of_words.py)."""
    from bag_of_words import save_bag_of_words_bert

    return save_bag_of_words_bert(tmp_path)
