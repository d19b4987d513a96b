from types import SimpleNamespace

import numpy as np
import pytest
import torch
from torch import nn

from xlt.core.errors import XltError
from xlt.data.bitext_files import Bitext, bitexts_from_records
from xlt.evaluate.alignment import (
    EncodedBitext,
    alignment_records,
    center,
    layer_alignment,
    only_layers,
    parse_layers,
    project_2d,
    project_layers,
)
from xlt.evaluate.retrieval import retrieval_accuracy

N_WORDS = 10
DIM = 16
SPECIAL = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
VOCAB = SPECIAL + [f"a{i}" for i in range(N_WORDS)] + [f"b{i}" for i in range(N_WORDS)]
# 12 two-word sentences with distinct word sets (mean pooling ignores order)
PAIRS = [(0, 1), (2, 3), (4, 5), (6, 7), (8, 9), (0, 2), (1, 3), (4, 6), (5, 7), (8, 0), (9, 1), (3, 6)]


class PlantedHiddenStates(nn.Module):
    """Stand-in encoder: hidden state l of token t is the fixed vector table[l, t].

    Lets a test plant exactly how each layer relates the two languages while the real
    tokenizer / encode_layers / pooling path runs unchanged.
    """

    def __init__(self, table: torch.Tensor):
        super().__init__()
        self.table = nn.Parameter(table, requires_grad=False)
        self.config = SimpleNamespace(num_hidden_layers=table.shape[0] - 1)

    def forward(self, input_ids, attention_mask=None, token_type_ids=None, output_hidden_states=False):
        return SimpleNamespace(
            hidden_states=tuple(self.table[layer][input_ids] for layer in range(self.table.shape[0]))
        )


def planted_table(seed: int = 0) -> np.ndarray:
    """Layer 0: unrelated random vectors per token (no alignment).
    Layer 1: a_i = m_i + o_xx, b_i = m_i + o_en with large language offsets (aligned only after centring).
    Layer 2: a_i = b_i = m_i (perfectly aligned)."""
    rng = np.random.default_rng(seed)
    meaning = rng.normal(size=(N_WORDS, DIM))
    table = rng.normal(size=(3, len(VOCAB), DIM))
    a = [VOCAB.index(f"a{i}") for i in range(N_WORDS)]
    b = [VOCAB.index(f"b{i}") for i in range(N_WORDS)]
    offset_xx, offset_en = 8 * rng.normal(size=DIM), 8 * rng.normal(size=DIM)
    table[1, a] = meaning + offset_xx
    table[1, b] = meaning + offset_en
    table[2, a] = meaning
    table[2, b] = meaning
    return table


def tokenizer():
    from transformers import BertTokenizer

    return BertTokenizer(vocab={w: i for i, w in enumerate(VOCAB)})


def planted_bitext() -> Bitext:
    return Bitext("xx", [f"a{i} a{j}" for i, j in PAIRS], [f"b{i} b{j}" for i, j in PAIRS])


def expected_accuracy(table: np.ndarray, layer: int, centred: bool) -> tuple[float, float]:
    """Independent computation: mean over [CLS] w1 w2 [SEP] rows, centre, cosine, argmax."""

    def pooled(prefix):
        rows = [
            [VOCAB.index("[CLS]"), VOCAB.index(f"{prefix}{i}"), VOCAB.index(f"{prefix}{j}"), VOCAB.index("[SEP]")]
            for i, j in PAIRS
        ]
        v = np.array([table[layer, r].mean(axis=0) for r in rows])
        return v - v.mean(axis=0) if centred else v

    src, eng = pooled("a"), pooled("b")
    src /= np.linalg.norm(src, axis=1, keepdims=True)
    eng /= np.linalg.norm(eng, axis=1, keepdims=True)
    sim = src @ eng.T
    n = len(PAIRS)
    return (sum(sim[i].argmax() == i for i in range(n)) / n, sum(sim[:, j].argmax() == j for j in range(n)) / n)


def test_retrieval_accuracy_and_centering_by_hand():
    q = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    assert retrieval_accuracy(q, q) == 1.0
    assert retrieval_accuracy(q, q[[1, 0, 2]]) == pytest.approx(1 / 3)
    assert np.allclose(center(np.array([[1.0, 2.0], [3.0, 6.0]])), [[-1.0, -2.0], [1.0, 2.0]])


def test_per_layer_retrieval_on_planted_alignment():
    table = planted_table()
    model = PlantedHiddenStates(torch.tensor(table, dtype=torch.float32))
    raw = layer_alignment(model, tokenizer(), [planted_bitext()], layers="all", batch_size=5)
    centred = layer_alignment(model, tokenizer(), [planted_bitext()], layers=[1, 2], center_languages=True)
    acc = {(r["metric"], r["layer"], r["direction"]): r["value"] for r in raw + centred}
    assert {r["lang"] for r in raw} == {"xx"}
    for layer in range(3):
        fwd, bwd = expected_accuracy(table, layer, centred=False)
        assert acc["bitext_retrieval_acc", layer, "xx->en"] == pytest.approx(fwd)
        assert acc["bitext_retrieval_acc", layer, "en->xx"] == pytest.approx(bwd)
    assert acc["bitext_retrieval_acc", 2, "xx->en"] == acc["bitext_retrieval_acc", 2, "en->xx"] == 1.0
    assert acc["bitext_retrieval_acc", 0, "xx->en"] < 0.5
    # the planted language offset wrecks layer 1; centring each language removes it
    assert acc["bitext_retrieval_acc", 1, "xx->en"] < 0.5
    assert acc["bitext_retrieval_acc_centered", 1, "xx->en"] == acc["bitext_retrieval_acc_centered", 1, "en->xx"] == 1.0
    assert expected_accuracy(table, 1, centred=True) == (1.0, 1.0)


def test_centering_fixes_a_planted_offset_on_synthetic_vectors():
    rng = np.random.default_rng(3)
    meaning = rng.normal(size=(30, 8))
    encoded = [EncodedBitext("de", {0: meaning + 20 * rng.normal(size=8)}, {0: meaning + 20 * rng.normal(size=8)})]
    raw = alignment_records(encoded)
    fixed = alignment_records(encoded, center_languages=True)
    assert all(r["value"] < 0.5 for r in raw)
    assert all(r["value"] == 1.0 and r["metric"] == "bitext_retrieval_acc_centered" for r in fixed)


def test_only_layers_keeps_the_table_layers_of_both_sides():
    encoded = EncodedBitext(
        "de",
        {layer: np.full((2, 3), layer) for layer in (0, 2, 6)},
        {layer: np.full((2, 3), -layer) for layer in (0, 2, 6)},
    )
    kept = only_layers(encoded, [0, 6])
    assert kept.lang == "de" and sorted(kept.texts) == sorted(kept.english) == [0, 6]
    assert kept.texts[6] is encoded.texts[6] and kept.english[6] is encoded.english[6]


def test_parse_layers():
    assert parse_layers("all", 4) == [0, 1, 2, 3, 4]
    assert parse_layers("4,0, 2", 4) == [0, 2, 4]
    with pytest.raises(XltError, match="between 0"):
        parse_layers("0,5", 4)
    with pytest.raises(XltError, match="comma-separated"):
        parse_layers("first", 4)


def test_projections_are_seeded_and_fall_back_to_pca():
    rng = np.random.default_rng(0)
    encoded = [
        EncodedBitext(
            "deu",
            {layer: rng.normal(size=(12, 6)) for layer in (0, 2)},
            {layer: rng.normal(size=(12, 6)) for layer in (0, 2)},
        )
    ]
    projections = project_layers(encoded, [0, 2], sample=5, method="pca", seed=1, english="eng")
    assert [p.layer for p in projections] == [0, 2] and projections[0].coords.shape == (10, 2)
    assert projections[0].langs == ["deu"] * 5 + ["eng"] * 5
    assert list(projections[0].pair[:5]) == list(projections[0].pair[5:])  # same sampled pairs on both sides
    points = rng.normal(size=(10, 6))
    first, used = project_2d(points, method="tsne", seed=3)
    again, _ = project_2d(points, method="tsne", seed=3)
    assert used == "tsne" and first.shape == (10, 2) and np.allclose(first, again)
    coords, used = project_2d(rng.normal(size=(3, 6)), method="tsne")
    assert used == "pca" and coords.shape == (3, 2)
    # PCA = projection of the centred unit vectors on the top-2 right singular vectors
    points = rng.normal(size=(8, 5))
    coords, used = project_2d(points, method="pca")
    unit = points / np.linalg.norm(points, axis=1, keepdims=True)
    unit -= unit.mean(axis=0)
    expected = unit @ np.linalg.svd(unit)[2][:2].T
    assert used == "pca" and np.allclose(np.abs(coords), np.abs(expected), atol=1e-6)


def test_bitext_validation():
    with pytest.raises(XltError, match="text_pair"):
        bitexts_from_records("de", [{"text": "Hallo"}, {"text": "a", "text_pair": "b"}])
    with pytest.raises(XltError, match="at least 2"):
        bitexts_from_records("de", [{"text": "Hallo", "text_pair": "Hello"}])
    bitext = bitexts_from_records(
        "de", [{"text": "Hallo", "text_pair": "Hello"}, {"text": "Welt", "text_pair": "World"}]
    )
    assert bitext.texts == ["Hallo", "Welt"] and bitext.english == ["Hello", "World"]
