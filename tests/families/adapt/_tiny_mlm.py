"""Tiny offline masked LMs and WordPiece tokenizers for tests (no downloads)."""

from __future__ import annotations

from pathlib import Path

import torch

DUTCH = [
    "de kat zit op de mat",
    "het huis is groot en mooi",
    "wij lopen samen naar de markt",
    "zij leest een boek in de tuin",
    "de kinderen spelen buiten met de bal",
    "morgen gaan we fietsen langs het kanaal",
    "het regent al de hele dag",
    "mijn broer werkt in een groot ziekenhuis",
    "de trein naar amsterdam is vertraagd",
    "koffie met melk en suiker graag",
]
ENGLISH = [
    "the cat sits on the mat",
    "the house is big and nice",
    "we walk together to the market",
    "she reads a book in the garden",
    "the children play outside with the ball",
    "tomorrow we cycle along the canal",
    "it has been raining all day",
    "my brother works in a big hospital",
    "the train to amsterdam is delayed",
    "coffee with milk and sugar please",
]


def wordpiece_tokenizer(corpus: list[str], vocab_size: int):
    """A lower-cased BERT WordPiece tokenizer ([CLS] x [SEP]) with a deterministic vocabulary."""
    from xlt.data.demo_model import build_tokenizer

    return build_tokenizer(corpus, vocab_size)


def tiny_bert_mlm(vocab_size: int, layers: int = 2, hidden: int = 32, seed: int = 0):
    from transformers import BertConfig, BertForMaskedLM

    torch.manual_seed(seed)
    config = BertConfig(
        vocab_size=vocab_size,
        hidden_size=hidden,
        num_hidden_layers=layers,
        num_attention_heads=2,
        intermediate_size=2 * hidden,
        max_position_embeddings=64,
    )
    return BertForMaskedLM(config).eval()


def save_tiny(out_dir: Path, corpus: list[str], vocab_size: int, layers: int = 2, hidden: int = 32, seed: int = 0):
    tokenizer = wordpiece_tokenizer(corpus, vocab_size)
    model = tiny_bert_mlm(len(tokenizer), layers=layers, hidden=hidden, seed=seed)
    model.save_pretrained(out_dir)
    tokenizer.save_pretrained(out_dir)
    return model, tokenizer
