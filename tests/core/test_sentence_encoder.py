import torch
from conftest import tiny_config

from xlt.core.embeddings import encode
from xlt.core.sentence_encoder import SentenceEncoder, read_pooling, tokenize


def test_matches_encode_and_round_trips_pooling(tmp_path, demo_model_dir):
    from xlt.core.models import load_tokenizer

    model = SentenceEncoder.from_pretrained(str(demo_model_dir), pooling="max", layer=-2).eval()
    tokenizer = load_tokenizer(str(demo_model_dir))
    sentences = ["the dog sees the cat", "wi ry", "the big old king"]
    with torch.no_grad():
        vectors = model(**tokenize(tokenizer, sentences, 32)).numpy()
    expected = encode(model.encoder, tokenizer, sentences, pooling="max", layer=-2, max_length=32)
    assert vectors.shape == (3, model.dim)
    assert abs(vectors - expected).max() < 1e-5
    model.save(tmp_path / "saved", tokenizer)
    assert read_pooling(str(tmp_path / "saved")) == {"pooling": "max", "layer": -2}
    reloaded = SentenceEncoder.from_pretrained(str(tmp_path / "saved"))
    assert (reloaded.pooling.mode, reloaded.pooling.layer) == ("max", -2)


def test_distilbert_has_a_dimension():
    from transformers import AutoModel

    model = SentenceEncoder(AutoModel.from_config(tiny_config("distilbert")), "cls")
    assert model.dim == 32
