"""Tiny offline masked LMs and WordPiece tokenizers for tests (no downloads)."""
from __future__ import annotations

from pathlib import Path

import torch

SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]

DUTCH = [
    "de kat zit op de mat", "het huis is groot en mooi", "wij lopen samen naar de markt",
    "zij leest een boek in de tuin", "de kinderen spelen buiten met de bal",
    "morgen gaan we fietsen langs het kanaal", "het regent al de hele dag",
    "mijn broer werkt in een groot ziekenhuis", "de trein naar amsterdam is vertraagd",
    "koffie met melk en suiker graag",
]
ENGLISH = [
    "the cat sits on the mat", "the house is big and nice", "we walk together to the market",
    "she reads a book in the garden", "the children play outside with the ball",
    "tomorrow we cycle along the canal", "it has been raining all day",
    "my brother works in a big hospital", "the train to amsterdam is delayed",
    "coffee with milk and sugar please",
]


def wordpiece_tokenizer(corpus: list[str], vocab_size: int):
    """A trained WordPiece BertTokenizerFast (lower-cased, [CLS] x [SEP])."""
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors, trainers
    from transformers import BertTokenizerFast

    tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.train_from_iterator(corpus, trainers.WordPieceTrainer(vocab_size=vocab_size, special_tokens=SPECIALS))
    cls_id, sep_id = tok.token_to_id("[CLS]"), tok.token_to_id("[SEP]")
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", cls_id), ("[SEP]", sep_id)],
    )
    return BertTokenizerFast(tokenizer_object=tok, unk_token="[UNK]", pad_token="[PAD]",
                             cls_token="[CLS]", sep_token="[SEP]", mask_token="[MASK]")


def tiny_bert_mlm(vocab_size: int, layers: int = 2, hidden: int = 32, seed: int = 0):
    from transformers import BertConfig, BertForMaskedLM

    torch.manual_seed(seed)
    config = BertConfig(vocab_size=vocab_size, hidden_size=hidden, num_hidden_layers=layers,
                        num_attention_heads=2, intermediate_size=2 * hidden, max_position_embeddings=64)
    return BertForMaskedLM(config).eval()


def save_tiny(out_dir: Path, corpus: list[str], vocab_size: int, layers: int = 2, hidden: int = 32, seed: int = 0):
    tokenizer = wordpiece_tokenizer(corpus, vocab_size)
    model = tiny_bert_mlm(len(tokenizer), layers=layers, hidden=hidden, seed=seed)
    model.save_pretrained(out_dir)
    tokenizer.save_pretrained(out_dir)
    return model, tokenizer
