"""A tiny BERT whose layer 0 is a bag of words, and sentences that share no word: retrieval
and mining tests know exactly which pairs must match."""

import torch

WORDS = [f"w{i}" for i in range(240)]


def save_bag_of_words_bert(tmp_path):
    """Random 2-layer BERT whose layer 0 is a bag of words: position and token-type
    embeddings are zeroed, so mean-pooled layer-0 vectors of sentences without common
    words are far apart, while identical sentences coincide."""
    from transformers import BertConfig, BertModel, BertTokenizer

    from xlt.core.models import save_model

    torch.manual_seed(0)
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + WORDS
    config = BertConfig(
        vocab_size=len(vocab),
        hidden_size=64,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=32,
        initializer_range=0.5,
    )
    model = BertModel(config)
    with torch.no_grad():
        model.embeddings.position_embeddings.weight.zero_()
        model.embeddings.token_type_embeddings.weight.zero_()
    model_dir = tmp_path / "tiny-bert"
    save_model(model, BertTokenizer(vocab={w: i for i, w in enumerate(vocab)}), model_dir)
    return model_dir


def sentence(i: int) -> str:
    """Sentence i uses its own four words, so different sentences share no word."""
    return " ".join(WORDS[4 * i + j] for j in range(4))
