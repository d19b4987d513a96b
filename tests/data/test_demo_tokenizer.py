"""The demo tokenizer's vocabulary depends on the corpus alone, so a rebuilt demo model is the same model."""

import json
import subprocess
import sys
from collections import Counter

import pytest

from xlt.core.errors import XltError
from xlt.data.demo_model import SPECIAL_TOKENS, build_tokenizer, merge_vocabulary

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
