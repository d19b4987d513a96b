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
        added, dropped = list((h - p).elements()), list((p - h).elements())
        if r["label"] == 0:  # entailment drops one adjective
            assert not added and len(dropped) == 1 and dropped[0] in demo.ADJECTIVES
        elif r["label"] == 1:  # neutral adds one
            assert not dropped and len(added) == 1 and added[0] in demo.ADJECTIVES
        else:  # contradiction adds or removes the negator: only the word tells it from the other two
            assert len(added + dropped) == 1 and (added + dropped)[0] in demo.NEGATORS


def test_nli_labels_transfer_only_through_known_words():
    """In a language sharing no word with English, no word of a hypothesis gives its label away:
    every adjective and negator is the language's own."""
    lex = demo.lexicon("qac")
    assert not {lex[w] for w in demo.ADJECTIVES + demo.NEGATORS} & set(demo.ALL_WORDS)


def test_synthetic_languages_share_the_declared_share_of_every_word_class_with_english():
    for lang, spec in demo.WORLD.items():
        words = demo.lexicon(lang)
        assert len(set(words.values())) == len(words)  # unique within the language
        shared = {english for english, word in words.items() if word == english}
        assert shared == set(demo.shared_words(lang))
        for name, members in demo.WORD_CLASSES.items():
            assert abs(len(shared & set(members)) - spec.overlap * len(members)) <= 1, (lang, name)
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


def test_a_prepared_demo_dataset_records_its_world(tmp_path):
    from xlt.core.io import read_json, read_jsonl
    from xlt.data.prepare import prepare

    world = {"qaa": {"overlap": 0.25, "order": "SOV", "adjectives": "post"}}
    spec = {"source": "demo", "task": "nli", "languages": ["en", "qaa"], "splits": ["test"], "sizes": {"test": 6}}
    info = prepare("d", spec, tmp_path, world=world)
    assert read_json(tmp_path / "info.json") == info
    assert info["world"] == {
        "qaa": {
            "overlap": 0.25,
            "order": "SOV",
            "adjectives": "post",
            "shared_words": len(demo.shared_words("qaa", world)),
            "words": len(demo.ALL_WORDS),
        }
    }
    first = read_jsonl(tmp_path / "qaa" / "test.jsonl")[0]["text"]
    assert first == demo.generate("nli", "qaa", "test", 6, 13, world=world)[0]["text"]
    assert first != demo.generate("nli", "qaa", "test", 6, 13)[0]["text"]  # the world, not the default, was rendered


def test_every_review_clause_carries_the_label():
    """A clause's polarity is its word's, flipped by "not"; each agrees with the review's label."""
    for r in demo.generate("sentiment", "en", "test", 200, seed=5):
        for clause in r["text"].split(" and "):
            words = clause.split()
            positive = any(w in demo.POSITIVE for w in words[2:])
            assert (positive != ("not" in words)) == bool(r["label"]), r


def test_pretraining_text_covers_every_tasks_words():
    """Reviews in the corpus: a demo model that never met "good" or "not" could not transfer
    sentiment."""
    corpus = {w for r in demo.generate("corpus", "en", "train", 300, seed=2) for w in r["text"].split()}
    tasks = {
        w
        for task in ("nli", "sentiment", "sts")
        for r in demo.generate(task, "en", "test", 300, seed=3)
        for w in (r["text"] + " " + r.get("text_pair", "")).split()
    }
    assert set(demo.POSITIVE + demo.NEGATIVE) <= tasks <= corpus
