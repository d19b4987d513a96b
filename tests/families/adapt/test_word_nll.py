"""The tokenizer-independent measure (NLL per word / character, word-level PLL) by hand.

Two toy tokenizers cut the same four words into one piece (A) or two pieces (B); two toy
"models" give every word probability 1/4 (A: uniform over the four words; B: 1/2 for each of a
word's two pieces). Per piece they differ (perplexity 4 vs 2), per word they agree (log 4).
"""

import math
from types import SimpleNamespace

import pytest
import torch
from torch import nn

from xlt.families.adapt.mlm import FixedMasking, perplexity
from xlt.families.adapt.word_nll import l2r_copies, scored_words, spread_subset, word_nll, word_nll_records

SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
WORDS = ["ac", "ad", "bc", "bd"]
TEXTS = ["ac bd ad bc ac", "bd bd ac", "ad bc bc ac bd ad"]


def _tokenizer(pieces):
    from tokenizers import BertWordPieceTokenizer
    from transformers import BertTokenizerFast

    wordpiece = BertWordPieceTokenizer(vocab={t: i for i, t in enumerate(SPECIALS + pieces)}, lowercase=True)
    return BertTokenizerFast(tokenizer_object=wordpiece._tokenizer, do_lower_case=True, model_max_length=128)


@pytest.fixture
def whole():  # every word one piece
    return _tokenizer(WORDS)


@pytest.fixture
def split():  # every word two pieces: a|b + ##c|##d
    return _tokenizer(["a", "b", "##c", "##d"])


class TableMLM(nn.Module):
    """Logits from a fixed (position, vocabulary) table, whatever the input: a masked LM whose
    probabilities are known by hand."""

    def __init__(self, table: torch.Tensor):
        super().__init__()
        self.table = nn.Parameter(table, requires_grad=False)

    def forward(self, input_ids, attention_mask=None):
        return SimpleNamespace(logits=self.table[: input_ids.shape[1]].expand(input_ids.shape[0], -1, -1))


def _uniform_over(tokenizer, tokens_by_position, length=64):
    """log-probabilities uniform over tokens_by_position(position) at every position; the rest ~0."""
    table = torch.full((length, len(tokenizer)), -1e4)
    for position in range(length):
        ids = tokenizer.convert_tokens_to_ids(tokens_by_position(position))
        table[position, ids] = 0.0
    return TableMLM(table)


def _models(whole, split):
    model_a = _uniform_over(whole, lambda _: WORDS)
    # [CLS] at 0: a word's first piece sits at an odd position, its second at an even one
    model_b = _uniform_over(split, lambda pos: ["a", "b"] if pos % 2 else ["##c", "##d"])
    return model_a, model_b


def test_the_two_tokenizers_cut_the_same_words_into_different_numbers_of_pieces(whole, split):
    assert whole.tokenize("ac bd") == ["ac", "bd"]
    assert split.tokenize("ac bd") == ["a", "##c", "b", "##d"]


def test_per_piece_perplexities_differ_while_nll_per_word_follows_the_summed_nll(whole, split):
    model_a, model_b = _models(whole, split)
    # the project's fixed 80/10/10 masks: every masked piece costs log 4 (A) or log 2 (B)
    ppl_a = perplexity(model_a, FixedMasking(whole, TEXTS * 20, seed=1).batches(8)).perplexity
    ppl_b = perplexity(model_b, FixedMasking(split, TEXTS * 20, seed=1).batches(8)).perplexity
    assert ppl_a == pytest.approx(4.0, rel=1e-4) and ppl_b == pytest.approx(2.0, rel=1e-4)

    words = sum(len(t.split()) for t in TEXTS)
    chars = sum(len(w) for t in TEXTS for w in t.split())
    a, b = word_nll(model_a, whole, TEXTS), word_nll(model_b, split, TEXTS)
    assert (a.words, b.words) == (words, words) and (a.chars, b.chars) == (chars, chars)
    assert (a.pieces, b.pieces) == (words, 2 * words)
    # summed NLL by hand: every word costs log 4 under both (A: one piece at 1/4, B: two at 1/2)
    assert a.nll == pytest.approx(words * math.log(4), rel=1e-5)
    assert b.nll == pytest.approx(words * math.log(4), rel=1e-5)
    assert a.per_word == pytest.approx(a.nll / words) and b.per_word == pytest.approx(a.per_word, rel=1e-5)
    assert b.per_char == pytest.approx(math.log(4) / 2, rel=1e-5)  # every word has two characters
    assert math.exp(a.per_piece) == pytest.approx(4.0, rel=1e-4) and math.exp(b.per_piece) == pytest.approx(
        2.0, rel=1e-4
    )


def test_a_piece_is_scored_with_itself_and_the_later_pieces_of_its_word_masked(split):
    ids, word_of, words = scored_words(split, "ac bd", max_words=40, max_length=32)
    assert word_of == [None, 0, 0, 1, 1, None] and words == ["ac", "bd"]
    m = split.mask_token_id
    copies = l2r_copies(ids, word_of, m)
    assert [pos for _, pos in copies] == [1, 2, 3, 4]
    assert [copy[1:5] for copy, _ in copies] == [
        [m, m, ids[3], ids[4]],
        [ids[1], m, ids[3], ids[4]],
        [ids[1], ids[2], m, m],
        [ids[1], ids[2], ids[3], m],
    ]


def test_words_cut_by_truncation_or_beyond_max_words_are_not_scored(split):
    # max_length 6 = [CLS] + 4 pieces + [SEP]: the third word's pieces are cut off
    _, word_of, _ = scored_words(split, "ac bd ad", max_words=40, max_length=6)
    assert word_of == [None, 0, 0, 1, 1, None]
    _, word_of, _ = scored_words(split, "ac bd ad", max_words=40, max_length=5)  # bd cut in half
    assert word_of == [None, 0, 0, None, None]
    _, word_of, words = scored_words(split, "ac bd ad", max_words=1, max_length=32)
    assert word_of == [None, 0, 0, None] and words == ["ac"]


def test_the_subset_is_spread_over_the_set_and_records_are_named():
    assert spread_subset(list("abcdefgh"), 4) == list("aceg")
    assert spread_subset(list("abc"), 10) == list("abc")
    from xlt.families.adapt.word_nll import WordNll

    records = word_nll_records(WordNll(nll=12.0, words=4, chars=8, pieces=6, sentences=2), 0.01, lang="nl", split="dev")
    assert {r["metric"]: r["value"] for r in records} == {"nll_per_word": 3.0, "nll_per_char": 1.5, "pll_words": 4.0}


def test_unk_pieces_are_counted_per_language_and_a_share_above_the_limit_is_flagged(whole, split, caplog):
    """[UNK] is scored like any piece; its share per language stands beside the NLL, flagged above 1 %."""
    model_a, _ = _models(whole, split)
    texts, langs = ["ac bd ad bc", "ac zz bd", "bd ac"], ["en", "de", "en"]  # zz: no piece of the vocabulary
    result = word_nll(model_a, whole, texts, device="cpu", langs=langs)
    assert result.unk_by_lang == {"en": (0, 6), "de": (1, 3)}
    assert whole.tokenize("zz") == ["[UNK]"]
    records = word_nll_records(result, 0.01, lang="multilingual", split="dev")
    share = {(r["metric"], r["lang"]): r["value"] for r in records if r["metric"].startswith("unk")}
    assert share == {
        ("unk_share", "en"): 0.0,
        ("unk_flagged", "en"): 0.0,
        ("unk_share", "de"): pytest.approx(1 / 3),
        ("unk_flagged", "de"): 1.0,
    }
    assert "de/dev: 33.33 % of the scored pieces are the unknown token" in caplog.text
    # one language (no langs): the set's own
    alone = word_nll_records(word_nll(model_a, whole, texts[:1], device="cpu"), 0.01, lang="nl", split="dev")
    assert [(r["metric"], r["lang"], r["value"]) for r in alone if r["metric"].startswith("unk")] == [
        ("unk_share", "nl", 0.0),
        ("unk_flagged", "nl", 0.0),
    ]
