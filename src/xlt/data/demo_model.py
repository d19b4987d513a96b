"""Build the demo's small "multilingual BERT" offline: a WordPiece tokenizer whose vocabulary
is built from the demo corpora and a 12-layer BERT pretrained briefly with MLM on monolingual and
code-switched text, plus translation pairs (XLM's TLM objective: MLM over a sentence and
its translation side by side). Transfer from English then follows the words a language shares
with English (config demo_world); at the demo's 1,000 steps the layers above the embeddings do
not yet align the languages any further (docs/demo-world.md).

It stands in for mBERT so the whole DAG runs without a network; pretrained on one
language only, the same builder gives the demo's "native monolingual" reference model.
"""

from __future__ import annotations

import heapq
import logging
from collections import Counter
from pathlib import Path

from xlt.core.errors import XltError
from xlt.core.train_args import TrainArgs
from xlt.core.train_inputs import Objective
from xlt.data import demo

log = logging.getLogger("xlt.data.demo_model")


def demo_corpus(languages: list[str], size: int, seed: int, world: dict | None = None) -> list[str]:
    texts = []
    for lang in languages:
        texts += [r["text"] for r in demo.generate("corpus", lang, "train", size, seed, world=world)]
    return texts


SPECIAL_TOKENS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]


def merge_vocabulary(words: Counter, budget: int) -> list[str]:
    """WordPiece tokens learned by byte-pair merges over the word types in `words` (word ->
    count): the most frequent adjacent pair first, ties broken by the pair's spelling, at most
    `budget` new tokens. A word starts as its first character and `##`-prefixed continuations.

    The pair counts are kept up to date instead of recounted over every word at each merge: a
    merge recounts only the words that hold the merged pair, and a heap of (-count, pair) gives
    the next pair (an entry whose count has since changed is dropped when it comes up). Same
    tokens in the same order as recounting; a vocabulary of 800 from 2,000 sentences took 44 s
    recounted."""
    pieces = {word: [word[0]] + [f"##{char}" for char in word[1:]] for word in sorted(words)}
    counts: Counter = Counter()  # pair -> sum over its occurrences of the word's count
    occurrences: Counter = Counter()  # pair -> how often it occurs (a pair of a count-0 word still counts)
    holders: dict[tuple[str, str], set[str]] = {}  # pair -> the words it occurs in (or once did)
    heap: list[tuple[int, tuple[str, str]]] = []

    def tally(word: str, sign: int) -> set[tuple[str, str]]:
        """Add (sign 1) or take away (-1) the pairs of `word`'s current pieces; the pairs it touched."""
        symbols = pieces[word]
        touched = set(zip(symbols, symbols[1:]))
        for pair in zip(symbols, symbols[1:]):
            counts[pair] += sign * words[word]
            occurrences[pair] += sign
            if sign > 0:
                holders.setdefault(pair, set()).add(word)
            elif not occurrences[pair]:
                del counts[pair], occurrences[pair]
        return touched

    def push(pairs: set[tuple[str, str]]) -> None:
        for pair in pairs:
            if pair in occurrences:
                heapq.heappush(heap, (-counts[pair], pair))

    for word in pieces:
        tally(word, 1)
    push(set(occurrences))
    learned: list[str] = []
    known: set[str] = set()
    while len(learned) < budget:
        while heap and (heap[0][1] not in occurrences or -heap[0][0] != counts[heap[0][1]]):
            heapq.heappop(heap)
        if not heap:
            break  # every word is a single token
        left, right = heapq.heappop(heap)[1]
        merged = left + right[2:]  # right always carries the ## prefix
        if merged not in known:
            known.add(merged)
            learned.append(merged)
        touched = set()
        for word in holders.pop((left, right)):
            symbols = pieces[word]
            touched |= tally(word, -1)
            i, out = 0, []
            while i < len(symbols):
                if i + 1 < len(symbols) and symbols[i] == left and symbols[i + 1] == right:
                    out.append(merged)
                    i += 2
                else:
                    out.append(symbols[i])
                    i += 1
            pieces[word] = out
            touched |= tally(word, 1)
        push(touched)
    return learned


def build_tokenizer(texts: list[str], vocab_size: int):
    """A lower-cased BERT WordPiece tokenizer whose vocabulary is a function of `texts` alone:
    the special tokens, every character (word-initial and `##` continuation), then the tokens
    of `merge_vocabulary` up to `vocab_size`.

    Not the `tokenizers` trainer: it breaks ties between equally frequent merges in hash order,
    so two builds from the same corpus gave different vocabularies, hence different models.
    Sub-word merges, not whole words only: the synthetic languages share syllables, and pieces
    shared across languages are what the demo encoder's fine-tuning needs (a whole-word
    vocabulary left the MonoX students predicting one class)."""
    from tokenizers import BertWordPieceTokenizer  # deferred: with transformers
    from transformers import BertTokenizerFast  # deferred: imports torch

    splitter = BertWordPieceTokenizer(vocab={token: i for i, token in enumerate(SPECIAL_TOKENS)}, lowercase=True)
    normalizer, pre_tokenizer = splitter.normalizer, splitter.pre_tokenizer
    words = Counter(
        word for text in texts for word, _ in pre_tokenizer.pre_tokenize_str(normalizer.normalize_str(text))
    )
    chars = sorted({char for word in words for char in word})
    vocab = SPECIAL_TOKENS + chars + [f"##{char}" for char in chars]
    if vocab_size < len(vocab):
        raise XltError(
            f"vocab_size {vocab_size} is too small for this corpus: its {len(chars)} characters and the "
            f"special tokens need {len(vocab)}; raise the model's vocab_size to at least that"
        )
    taken = set(vocab)
    vocab += [token for token in merge_vocabulary(words, vocab_size - len(vocab)) if token not in taken]
    wordpiece = BertWordPieceTokenizer(vocab={token: i for i, token in enumerate(vocab)}, lowercase=True)
    return BertTokenizerFast(tokenizer_object=wordpiece._tokenizer, do_lower_case=True, model_max_length=128)


def build_demo_model(
    out_dir: str | Path,
    languages: list[str],
    layers: int = 12,
    hidden_size: int = 64,
    heads: int = 4,
    pretrain_steps: int = 300,
    corpus_size: int = 3000,
    vocab_size: int = 1000,
    seed: int = 7,
    world: dict | None = None,
) -> dict:
    import torch  # deferred: imports torch
    from transformers import BertConfig, BertForMaskedLM, DataCollatorForLanguageModeling  # deferred: imports torch

    from xlt.core.models import save_model  # deferred: imports torch
    from xlt.core.training import train  # deferred: imports torch

    torch.manual_seed(seed)
    # the tokenizer always sees every demo language so all demo models share one vocabulary
    every_language = ["en", *(world or demo.WORLD)]
    tokenizer = build_tokenizer(demo_corpus(every_language, corpus_size // 4, seed, world), vocab_size)
    config = BertConfig(
        vocab_size=len(tokenizer),
        hidden_size=hidden_size,
        num_hidden_layers=layers,
        num_attention_heads=heads,
        intermediate_size=hidden_size * 4,
        max_position_embeddings=128,
    )
    model = BertForMaskedLM(config)
    texts = demo_corpus(languages, corpus_size, seed + 1, world)
    examples = [tokenizer(t, truncation=True, max_length=64) for t in texts]
    if len(languages) > 1:  # a multilingual model also sees translation pairs (TLM)
        for lang in every_language[1:]:
            for pair in demo.generate("bitext", lang, "pretrain", corpus_size // 2, seed + 2, world=world):
                examples.append(tokenizer(pair["text"], pair["text_pair"], truncation=True, max_length=64))
    collator = DataCollatorForLanguageModeling(tokenizer, mlm_probability=0.15)
    args = TrainArgs(
        max_steps=pretrain_steps, batch_size=32, lr=1e-3, warmup_ratio=0.1, seed=seed, log_every=50, device="cpu"
    )
    result = train(model, Objective(examples, collator, lambda m, b: m(**b).loss), args)
    save_model(model, tokenizer, out_dir)
    log.info("demo model with %d layers saved to %s after %d MLM steps", layers, out_dir, result.steps)
    return {
        "layers": layers,
        "hidden_size": hidden_size,
        "pretrain_steps": result.steps,
        "languages": languages,
        "pretrain_wall_s": round(result.wall_s, 2),
        "world": demo.describe(every_language[1:], world),
    }
