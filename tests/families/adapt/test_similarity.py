import numpy as np
import pytest
from _tiny_mlm import DUTCH, ENGLISH, tiny_bert_mlm, wordpiece_tokenizer
from scipy.stats import ortho_group

from xlt.core.errors import XltError
from xlt.families.adapt.similarity import (
    compare_models,
    encode_words,
    first_subword_positions,
    linear_cka,
    mean_euclidean_distance,
    paired_word_vectors,
)

RNG = np.random.default_rng(0)


def _cka_by_hsic(x, y):
    """Kornblith et al. eq. via centring matrix H and Gram matrices: HSIC(K,L)/sqrt(HSIC(K,K)HSIC(L,L))."""
    n = x.shape[0]
    h = np.eye(n) - np.ones((n, n)) / n
    gram_x, gram_y = x @ x.T, y @ y.T

    def hsic(a, b):
        return np.trace(a @ h @ b @ h)

    return hsic(gram_x, gram_y) / np.sqrt(hsic(gram_x, gram_x) * hsic(gram_y, gram_y))


@pytest.mark.parametrize("n, d1, d2", [(50, 6, 9), (10, 30, 20)])  # feature path and Gram path
def test_cka_matches_the_hsic_definition(n, d1, d2):
    x = RNG.normal(size=(n, d1))
    y = x[:, :1] @ RNG.normal(size=(1, d2)) + RNG.normal(size=(n, d2))
    assert linear_cka(x, y) == pytest.approx(_cka_by_hsic(x, y), rel=1e-9)


@pytest.mark.parametrize("n, d", [(60, 8), (12, 40)])
def test_cka_is_one_on_itself_and_invariant_to_rotation_scaling_and_shift(n, d):
    x = RNG.normal(size=(n, d))
    assert linear_cka(x, x) == pytest.approx(1.0)
    q = ortho_group.rvs(d, random_state=1)
    assert linear_cka(x, 3.7 * x @ q + 5.0) == pytest.approx(1.0)
    wide = np.hstack([x, np.zeros((n, 5))]) @ ortho_group.rvs(d + 5, random_state=2)  # d != d2
    assert linear_cka(x, wide) == pytest.approx(1.0)
    y = RNG.normal(size=(n, d + 3))
    assert linear_cka(x @ q * 0.2, y) == pytest.approx(linear_cka(x, y))


def test_cka_of_independent_matrices_is_small_and_not_invariant_to_anisotropic_scaling():
    x, y = RNG.normal(size=(2000, 8)), RNG.normal(size=(2000, 12))
    assert linear_cka(x, y) < 0.05
    stretched = x * np.array([10.0] + [1.0] * 7)
    assert linear_cka(x, stretched) < 0.9


def test_cka_of_constant_representation_is_nan_and_row_mismatch_raises():
    assert np.isnan(linear_cka(np.ones((5, 3)), RNG.normal(size=(5, 3))))
    with pytest.raises(ValueError, match=r"\(5, 3\)"):
        linear_cka(np.ones((5, 3)), np.ones((6, 3)))


def test_mean_euclidean_distance_by_hand_and_shape_error():
    x = np.array([[0.0, 0.0], [1.0, 1.0]])
    y = np.array([[3.0, 4.0], [1.0, 1.0]])
    assert mean_euclidean_distance(x, y) == pytest.approx(2.5)
    with pytest.raises(XltError, match=r"\(2, 2\).*\(2, 3\)"):
        mean_euclidean_distance(x, np.zeros((2, 3)))


def test_first_subword_positions():
    assert first_subword_positions([None, 0, 1, 1, 1, 2, None, None]) == {0: 1, 1: 2, 2: 5}


@pytest.fixture(scope="module")
def tokenizers_pair():
    small = wordpiece_tokenizer(DUTCH, vocab_size=60)
    large = wordpiece_tokenizer(DUTCH + ENGLISH, vocab_size=200)
    assert small.get_vocab() != large.get_vocab()
    return small, large


SENTENCES = ["De kat zit op de mat.", "morgen gaan we fietsen, langs het kanaal", "onbekende woorden xyzzy"]


def test_first_subword_alignment_gives_same_words_for_different_vocabularies(tokenizers_pair):
    small, large = tokenizers_pair
    counts = []
    for tok in tokenizers_pair:
        enc = tok([s.split() for s in SENTENCES], is_split_into_words=True)
        per_sentence = []
        for row, sentence in enumerate(SENTENCES):
            positions = first_subword_positions(enc.word_ids(row))
            tokens = enc.tokens(row)
            for word, pos in positions.items():
                assert not tokens[pos].startswith("##")  # the first piece of the word
                assert tokens[pos] == "[UNK]" or sentence.split()[word].lower().startswith(tokens[pos])
            per_sentence.append(sorted(positions))
        counts.append([len(p) for p in per_sentence])
    assert counts[0] == counts[1] == [len(s.split()) for s in SENTENCES]
    # the vocabularies really split words differently
    assert small(SENTENCES)["input_ids"] != large(SENTENCES)["input_ids"]
    assert [len(x) for x in small(SENTENCES)["input_ids"]] != [len(x) for x in large(SENTENCES)["input_ids"]]


def test_truncated_words_are_dropped_on_both_sides(tokenizers_pair):
    small, large = tokenizers_pair
    ma, mb = tiny_bert_mlm(len(small), seed=1), tiny_bert_mlm(len(large), seed=2)
    wa = encode_words(ma, small, SENTENCES, [0, 2], max_length=6)
    wb = encode_words(mb, large, SENTENCES, [0, 2], max_length=64)
    assert [len(i) for i in wb.word_indices] == [len(s.split()) for s in SENTENCES]
    assert all(len(a) <= 4 for a in wa.word_indices)
    x, y = paired_word_vectors(wa, wb, 2)
    assert x.shape == (sum(len(i) for i in wa.word_indices), 32) == y.shape


def test_compare_models_identical_model_gives_zero_distance_and_unit_cka(tokenizers_pair):
    _, tok = tokenizers_pair
    model = tiny_bert_mlm(len(tok), layers=2)
    sentences = DUTCH + ENGLISH
    records = compare_models(model, tok, model, tok, sentences, layers=[0, 1, 2])
    by_key = {(r["metric"], r["level"], r.get("layer")): r["value"] for r in records}
    assert by_key[("vectors", "sentence", None)] == len(sentences)
    assert by_key[("vectors", "word", None)] == sum(len(s.split()) for s in sentences)
    for level in ("sentence", "word"):
        for layer in (0, 1, 2):
            assert by_key[("euclidean", level, layer)] == pytest.approx(0.0, abs=1e-5)
            assert by_key[("cka", level, layer)] == pytest.approx(1.0, abs=1e-5)


def test_compare_models_across_tokenizers_and_widths(tokenizers_pair):
    small, large = tokenizers_pair
    ma = tiny_bert_mlm(len(small), layers=2, hidden=32, seed=1)
    mb = tiny_bert_mlm(len(large), layers=3, hidden=32, seed=2)
    records = compare_models(ma, small, mb, large, DUTCH, layers=[1, 2])
    euclid = [r for r in records if r["metric"] == "euclidean"]
    assert len(euclid) == 4 and all(r["value"] > 0 for r in euclid)
    ckas = [r["value"] for r in records if r["metric"] == "cka"]
    assert len(ckas) == 4 and all(0 <= v < 1 for v in ckas)

    wide = tiny_bert_mlm(len(large), layers=2, hidden=48, seed=3)
    records = compare_models(ma, small, wide, large, DUTCH, layers=[2], levels=["word"])
    assert {r["metric"] for r in records} == {"vectors", "cka"}
    with pytest.raises(XltError, match="hidden sizes"):
        compare_models(ma, small, wide, large, DUTCH, layers=[2], measures=["euclidean"])
    with pytest.raises(XltError, match=r"0\.\.2"):
        compare_models(ma, small, mb, large, DUTCH, layers=[3])


def _shared_data():
    import os
    from pathlib import Path

    env = os.environ.get("XLT_SHARED_DATA")
    return Path(env) if env else Path(__file__).resolve().parents[3] / ".." / "shared" / "data"


@pytest.mark.slow
@pytest.mark.realdata
def test_first_subword_alignment_on_real_tatoeba_sentences():
    path = _shared_data() / "tatoeba" / "tatoeba.nld-eng.nld"
    other = _shared_data() / "tatoeba" / "tatoeba.deu-eng.deu"
    if not path.is_file() or not other.is_file():
        pytest.skip(f"shared data not found at {path.parent}")
    nld = path.read_text(encoding="utf-8").splitlines()
    deu = other.read_text(encoding="utf-8").splitlines()
    tokenizers = (wordpiece_tokenizer(nld, 300), wordpiece_tokenizer(nld + deu, 800))
    for tok in tokenizers:
        enc = tok([s.split() for s in nld], is_split_into_words=True)
        counts = [len(first_subword_positions(enc.word_ids(i))) for i in range(len(nld))]
        assert counts == [len(s.split()) for s in nld]
