"""The demo tokenizer's vocabulary depends on the corpus alone, so a rebuilt demo model is the same model."""

import json
import random
import subprocess
import sys
from collections import Counter

import pytest

from xlt.core.errors import XltError
from xlt.data import demo
from xlt.data.demo_model import SPECIAL_TOKENS, build_tokenizer, demo_corpus, merge_vocabulary

CORPUS = ["the cat sits on the mat", "the dog sits", "de kat zit op de mat", "the cat"]
VOCAB_IN_A_NEW_PROCESS = (
    "import json, sys; from xlt.data.demo_model import build_tokenizer, demo_corpus; from xlt.data import demo; "
    "print(json.dumps(sorted(build_tokenizer(demo_corpus(list(demo.LANGUAGES), 200, 1), int(sys.argv[1]))"
    ".get_vocab().items())))"
)


@pytest.mark.slow
def test_vocabulary_is_the_same_in_every_process():
    # the `tokenizers` trainer broke ties in hash order: three builds gave three vocabularies
    vocabs = [
        subprocess.run(
            [sys.executable, "-c", VOCAB_IN_A_NEW_PROCESS, "150"], capture_output=True, text=True, check=True
        ).stdout
        for _ in range(3)
    ]
    assert vocabs[0] == vocabs[1] == vocabs[2]
    assert len(json.loads(vocabs[0])) == 150


def test_merges_take_the_most_frequent_pair_first_and_break_ties_by_spelling():
    words = Counter(w for text in CORPUS for w in text.split())
    # ##a ##t: cat 2 + mat 2 + kat 1 = 5; then t ##h and ##h ##e tie at 4 ("##h" < "t");
    # then ##i ##t (sits 2 + zit 1 = 3); then ##it ##s, c ##at, m ##at, d ##e ... tie at 2
    assert merge_vocabulary(words, budget=5) == ["##at", "##he", "the", "##it", "##its"]
    assert merge_vocabulary(Counter({"ab": 1}), budget=10) == ["ab"]  # stops once every word is one token


def recounted_merges(words: Counter, budget: int) -> list[str]:
    """merge_vocabulary as first written: every pair recounted over every word at each merge."""
    pieces = {word: [word[0]] + [f"##{char}" for char in word[1:]] for word in sorted(words)}
    learned: list[str] = []
    while len(learned) < budget:
        pairs: Counter = Counter()
        for word, symbols in pieces.items():
            for pair in zip(symbols, symbols[1:]):
                pairs[pair] += words[word]
        if not pairs:
            break
        (left, right), _ = min(pairs.items(), key=lambda item: (-item[1], item[0]))
        merged = left + right[2:]
        if merged not in learned:
            learned.append(merged)
        for word, symbols in pieces.items():
            i, out = 0, []
            while i < len(symbols):
                if symbols[i : i + 2] == [left, right]:
                    out.append(merged)
                    i += 2
                else:
                    out.append(symbols[i])
                    i += 1
            pieces[word] = out
    return learned


def test_kept_pair_counts_merge_as_recounting_does():
    # small alphabets make long runs of one pair (aaaa) and many tied counts; count-0 words too
    rng = random.Random(0)
    for case in range(60):
        alphabet = "ab" if case % 3 == 0 else "abcde"
        words = Counter(
            {
                "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 9))): rng.randint(
                    0 if case % 5 == 0 else 1, 4
                )
                for _ in range(rng.randint(1, 60))
            }
        )
        budget = rng.randint(1, 80)
        assert merge_vocabulary(words, budget) == recounted_merges(words, budget), (case, words, budget)
    demo_words = Counter(w for text in demo_corpus(list(demo.LANGUAGES), 100, 1) for w in text.lower().split())
    assert merge_vocabulary(demo_words, 300) == recounted_merges(demo_words, 300)


def test_specials_then_characters_then_merges():
    tokenizer = build_tokenizer(CORPUS, vocab_size=100)
    vocab = sorted(tokenizer.get_vocab(), key=tokenizer.get_vocab().get)
    chars = sorted(set("".join(CORPUS).replace(" ", "")))
    assert vocab[:5] == SPECIAL_TOKENS
    assert vocab[5 : 5 + 2 * len(chars)] == chars + [f"##{c}" for c in chars]
    assert vocab[5 + 2 * len(chars) : 5 + 2 * len(chars) + 3] == ["##at", "##he", "the"]
    # an unseen word falls back to the learned pieces
    assert tokenizer.tokenize("The cat sat") == ["the", "cat", "s", "##at"]
    assert tokenizer("the cat")["input_ids"][0] == tokenizer.cls_token_id


def test_a_smaller_vocabulary_is_a_prefix_of_the_larger_one():
    full = build_tokenizer(CORPUS, vocab_size=1000)
    small = build_tokenizer(CORPUS, vocab_size=len(full) - 2)
    order = lambda t: sorted(t.get_vocab(), key=t.get_vocab().get)  # noqa: E731
    assert order(small) == order(full)[: len(full) - 2]
    assert small.tokenize("the cat") == ["the", "cat"]


def test_too_small_a_vocabulary_names_the_minimum():
    with pytest.raises(XltError, match=r"vocab_size 10 is too small .* need \d+; raise the model's vocab_size"):
        build_tokenizer(CORPUS, vocab_size=10)
