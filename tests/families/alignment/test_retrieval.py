"""Tatoeba-style retrieval on planted vectors with known answers, and against scipy's cdist."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.spatial.distance import cdist

from xlt.evaluate.retrieval import EN_TO_XX, XX_TO_EN, bitext_retrieval, nearest_neighbours, retrieval_records


def planted(n: int, wrong: list[int]) -> tuple[np.ndarray, np.ndarray]:
    """en_i = e_i; xx_i = e_i, except for i in `wrong`: xx_i = 0.4 e_i + 0.6 e_{i+1}.

    Such an xx_i is nearer to en_{i+1} (xx->en wrong), while every English query still finds
    its own xx_i (no xx_{i-1} leans towards e_i as long as no two wrong indices are adjacent).
    """
    en = np.eye(n, n + 1)
    xx = en.copy()
    for i in wrong:
        xx[i] = 0.4 * en[i] + 0.6 * np.eye(n + 1)[i + 1]
    return xx, en


def test_planted_errors_in_one_direction():
    n, wrong = 20, [2, 7, 11]
    xx, en = planted(n, wrong)
    texts_xx = [f"xx {i}" for i in range(n)]
    texts_en = [f"en {i}" for i in range(n)]
    result = bitext_retrieval(xx, en, texts_xx, texts_en)
    assert result.correct_xx_to_en == n - len(wrong)
    assert result.correct_en_to_xx == n
    assert result.error_xx_to_en == pytest.approx(3 / 20)
    assert result.error_en_to_xx == 0.0
    assert result.mean_error == pytest.approx(3 / 40)
    assert result.mean_accuracy == pytest.approx(1 - 3 / 40)
    # swapping the sides swaps the directions
    swapped = bitext_retrieval(en, xx, texts_en, texts_xx)
    assert (swapped.correct_xx_to_en, swapped.correct_en_to_xx) == (n, n - len(wrong))


def test_matches_brute_force_cdist():
    rng = np.random.default_rng(1)
    en = rng.normal(size=(300, 16))
    xx = en + rng.normal(scale=1.3, size=en.shape)
    expected_xx_to_en = np.sum(np.argmin(cdist(xx, en, metric="cosine"), axis=1) == np.arange(300))
    expected_en_to_xx = np.sum(np.argmin(cdist(en, xx, metric="cosine"), axis=1) == np.arange(300))
    assert 0 < expected_xx_to_en < 300 and 0 < expected_en_to_xx < 300  # a case with errors both ways
    result = bitext_retrieval(xx, en, match="index")
    assert (result.correct_xx_to_en, result.correct_en_to_xx) == (expected_xx_to_en, expected_en_to_xx)


def test_nearest_neighbours_chunks_like_one_block(monkeypatch):
    import xlt.evaluate.retrieval as retrieval

    rng = np.random.default_rng(2)
    q, c = rng.normal(size=(50, 8)), rng.normal(size=(40, 8))
    whole = nearest_neighbours(q, c)
    monkeypatch.setattr(retrieval, "_CHUNK", 7)
    np.testing.assert_array_equal(nearest_neighbours(q, c), whole)
    np.testing.assert_array_equal(whole, np.argmin(cdist(q, c, metric="cosine"), axis=1))


def test_duplicate_strings_count_as_correct_with_text_match_only():
    # en_0 and en_1 are the same string with the same vector; xx_1 finds en_0 (first index on a tie)
    en = np.array([[1.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])
    xx = np.array([[1.0, 0.1, 0.0], [1.0, 0.0, 0.0], [0.0, 0.1, 1.0]])
    texts_en = ["I see.", "I see.", "Go."]
    texts_xx = ["Ich verstehe.", "Aha.", "Geh."]
    by_text = bitext_retrieval(xx, en, texts_xx, texts_en, match="text")
    by_index = bitext_retrieval(xx, en, texts_xx, texts_en, match="index")
    assert by_text.correct_xx_to_en == 3
    assert by_index.correct_xx_to_en == 2
    # both "I see." queries score xx_1 highest (cosine 1.0), so en_0 -> xx_1 ("Aha." != "Ich verstehe.")
    # is wrong under both rules
    assert by_text.correct_en_to_xx == 2 and by_index.correct_en_to_xx == 2


def test_default_is_index_a_duplicate_string_at_another_index_is_an_error():
    # en_0 and en_1 are the same string with the same vector: xx_1's nearest is en_0 (first index on
    # the tie), the right string at the wrong index. The default (index) counts it wrong, text right.
    en = np.array([[1.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])
    xx = np.array([[1.0, 0.1, 0.0], [1.0, 0.0, 0.0], [0.0, 0.1, 1.0]])
    texts_xx, texts_en = ["Ich verstehe.", "Aha.", "Geh."], ["I see.", "I see.", "Go."]
    default = bitext_retrieval(xx, en, texts_xx, texts_en)
    assert default.correct_xx_to_en == 2 and not default.hit_xx_to_en[1] and default.found_en[1] == 0
    assert default == bitext_retrieval(xx, en)  # the texts play no part in it
    explicit_text = bitext_retrieval(xx, en, texts_xx, texts_en, match="text")
    assert explicit_text.correct_xx_to_en == 3 and explicit_text.hit_xx_to_en[1]


def test_records_directions_and_means():
    xx, en = planted(10, [3])
    records = retrieval_records(bitext_retrieval(xx, en, match="index"), lang="deu", dataset="tatoeba")
    by_key = {(r["metric"], r.get("direction")): r["value"] for r in records}
    assert by_key[("error", XX_TO_EN)] == pytest.approx(0.1)
    assert by_key[("error", EN_TO_XX)] == pytest.approx(0.0)
    assert by_key[("mean_error", None)] == pytest.approx(0.05)
    assert by_key[("accuracy@1", XX_TO_EN)] == pytest.approx(0.9)
    assert by_key[("accuracy@1", EN_TO_XX)] == pytest.approx(1.0)
    assert by_key[("mean_accuracy@1", None)] == pytest.approx(0.95)
    assert all(r["lang"] == "deu" for r in records)


def test_input_checks():
    xx, en = planted(5, [])
    with pytest.raises(ValueError, match="needs xx_texts"):
        bitext_retrieval(xx, en, match="text")
    with pytest.raises(ValueError, match="same shape"):
        bitext_retrieval(xx, en[:4], match="index")
    with pytest.raises(ValueError, match="unknown match rule"):
        bitext_retrieval(xx, en, match="fuzzy")


def test_one_normaliser_zero_rows_and_dtype():
    from xlt.evaluate.vectors import l2_normalise

    rows = np.array([[3.0, 4.0], [0.0, 0.0], [1e-13, 0.0]])
    out = l2_normalise(rows)
    np.testing.assert_allclose(out, [[0.6, 0.8], [0.0, 0.0], [0.1, 0.0]])  # norms below 1e-12 are clamped
    assert out.dtype == np.float64 and l2_normalise(rows, np.float32).dtype == np.float32
    assert l2_normalise(rows.astype(np.float32)).dtype == np.float32  # no dtype: the input's


def test_retrieval_accuracy_is_index_retrieval_in_float64():
    from xlt.evaluate.retrieval import retrieval_accuracy

    xx, en = planted(20, [2, 7, 11])
    assert retrieval_accuracy(xx, en) == 17 / 20 and retrieval_accuracy(en, xx) == 1.0
    result = bitext_retrieval(xx, en, match="index", dtype=np.float64)
    assert (result.accuracy_xx_to_en, result.accuracy_en_to_xx) == (17 / 20, 1.0)
    with pytest.raises(ValueError, match="parallel"):
        retrieval_accuracy(xx, en[:5])


def test_float64_separates_what_float32_rounds_to_a_tie():
    # candidate 1 is nearer to the query by less than float32 can resolve: float32 sees a tie
    # (first index wins), float64 finds the nearer one
    query = np.array([[1.0, 0.0]])
    candidates = np.array([[1.0, 1e-4], [1.0, 1e-5]])
    assert nearest_neighbours(query, candidates)[0] == 0
    assert nearest_neighbours(query, candidates, np.float64)[0] == 1
