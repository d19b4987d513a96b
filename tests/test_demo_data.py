from collections import Counter

import pytest

from xlt.data import demo


def test_deterministic_and_parallel_across_languages():
    a = demo.generate("bitext", "qab", "test", 50, seed=3)
    b = demo.generate("bitext", "qab", "test", 50, seed=3)
    assert a == b
    en = demo.generate("nli", "en", "test", 60, seed=3)
    qac = demo.generate("nli", "qac", "test", 60, seed=3)
    assert [r["label"] for r in en] == [r["label"] for r in qac]  # same meanings, other words
    assert en[0]["text"] != qac[0]["text"]
    assert demo.generate("nli", "en", "train", 60, seed=3) != en  # splits differ


def test_nli_labels_balanced_and_follow_the_construction():
    records = demo.generate("nli", "en", "train", 300, seed=1)
    assert Counter(r["label"] for r in records) == {0: 100, 1: 100, 2: 100}
    for r in records:
        p, h = Counter(r["text"].split()), Counter(r["text_pair"].split())
        if r["label"] == 0:  # entailment drops an adjective: the hypothesis says strictly less
            assert h < p
        else:  # neutral adds or swaps a word, contradiction flips one or (un)negates
            assert h != p


def test_synthetic_languages_share_the_declared_share_of_content_words_with_english():
    for lang, spec in demo.WORLD.items():
        words = demo.lexicon(lang)
        assert len(set(words.values())) == len(words)  # unique within the language
        shared = {english for english, word in words.items() if word == english}
        assert shared == set(demo.shared_words(lang))
        assert len(shared) == round(spec.overlap * len(demo.CONTENT_WORDS))
        assert not shared & set(demo.FUNCTION_WORDS)  # function words are always a language's own
    assert len(demo.shared_words("qaa")) > len(demo.shared_words("qab")) > len(demo.shared_words("qac")) == 0


def test_a_languages_own_words_do_not_change_with_its_overlap():
    low, high = demo.lexicon("qab", {"qab": {"overlap": 0.0}}), demo.lexicon("qab", {"qab": {"overlap": 0.5}})
    own = {english for english, word in high.items() if word != english}
    assert own and all(high[w] == low[w] for w in own)


def test_sts_scores_cover_the_range_and_sentiment_is_balanced():
    scores = [r["score"] for r in demo.generate("sts", "en", "test", 200, seed=2)]
    assert min(scores) < 1.5 and max(scores) > 4.0
    labels = [r["label"] for r in demo.generate("sentiment", "qaa", "train", 100, seed=2, domain="music")]
    assert Counter(labels) == {0: 50, 1: 50}


def test_unknown_language_and_task():
    with pytest.raises(ValueError, match="unknown demo language 'de'"):
        demo.generate("nli", "de", "test", 5, seed=1)
    with pytest.raises(ValueError, match="unknown demo task"):
        demo.generate("qa", "en", "test", 5, seed=1)
