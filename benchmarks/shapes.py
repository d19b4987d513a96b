"""Model shapes the benchmarks use: random-init BERT classifiers, from tiny to mBERT's size."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Shape:
    layers: int
    hidden: int
    heads: int
    vocab: int
    intermediate: int = 0  # 0 = 4 * hidden, as in BERT

    def describe(self) -> str:
        return f"L{self.layers} H{self.hidden} A{self.heads} V{self.vocab}"


SHAPES = {
    "tiny": Shape(layers=2, hidden=32, heads=2, vocab=200),
    # the demo config's encoder (config.yaml: 12 layers, hidden 64, 4 heads, ~1000 word pieces)
    "demo": Shape(layers=12, hidden=64, heads=4, vocab=1000),
    "small": Shape(layers=4, hidden=256, heads=4, vocab=10000),
    # bert-base-multilingual-cased
    "mbert": Shape(layers=12, hidden=768, heads=12, vocab=119547, intermediate=3072),
}


def bert_config(shape: Shape, num_labels: int = 3, max_position: int = 512, dropout: float = 0.1):
    from transformers import BertConfig

    return BertConfig(
        vocab_size=shape.vocab,
        hidden_size=shape.hidden,
        num_hidden_layers=shape.layers,
        num_attention_heads=shape.heads,
        intermediate_size=shape.intermediate or 4 * shape.hidden,
        max_position_embeddings=max_position,
        type_vocab_size=2,
        num_labels=num_labels,
        hidden_dropout_prob=dropout,
        attention_probs_dropout_prob=dropout,
    )


def random_classifier(shape: Shape, seed: int, num_labels: int = 3, dropout: float = 0.1):
    import torch
    from transformers import BertForSequenceClassification

    torch.manual_seed(seed)
    return BertForSequenceClassification(bert_config(shape, num_labels, dropout=dropout))
