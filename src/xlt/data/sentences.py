"""A corpus of documents (Wikipedia articles) cut into sentences, and the seeded draw of disjoint
sentence splits from it.

Seed 003 trains on 80,000 Dutch Wikipedia *sentences* and holds out 10,000 each for validation
and test. A dataset declares this with `sentences` (core schema): its rows are documents, read
once from `sentences.pool`; every document is split into sentences, each distinct sentence kept
once, and the splits are consecutive, disjoint slices of one seeded shuffle of them.

The segmenter is syntok (segtok's successor): pure Python, and it does not end a sentence at an
abbreviation followed by a lower-case word or a number (Dutch "o.a.", "d.w.z.", "ca.", "jan.
1920"), where pysbd 0.3.4's Dutch rules and sentencex 1.0.32 do. It still cuts at a title before
an initial ("Prof. dr. | A. de Vries") and at "blz." before a page number: rare in running text,
and each such piece is a fragment, not another article's text. A line break always ends a
sentence: Wikipedia's text puts headings and paragraphs on lines of their own.
"""

from __future__ import annotations

import hashlib
import random
from importlib import metadata

from xlt.core.errors import XltError

SEGMENTER = "syntok"


def segmenter_version() -> str:
    return f"{SEGMENTER} {metadata.version(SEGMENTER)}"


def split_sentences(document: str) -> list[str]:
    """The sentences of one document, in order, each with its original spacing inside."""
    import syntok.segmenter as segmenter  # deferred: syntok: only when segmenting

    sentences = []
    for line in document.split("\n"):
        if not line.strip():
            continue
        for paragraph in segmenter.process(line):
            for sentence in paragraph:
                text = "".join(token.spacing + token.value for token in sentence).strip()
                if text:
                    sentences.append(text)
    return sentences


def corpus_sentences(documents: list[str], min_words: int) -> list[str]:
    """Every distinct sentence of `documents` with at least `min_words` whitespace words (a heading
    or a list fragment is no sentence), in document order."""
    seen: dict[str, None] = {}
    for document in documents:
        for sentence in split_sentences(document):
            if len(sentence.split()) >= min_words:
                seen.setdefault(sentence, None)
    return list(seen)


def draw_splits(sentences: list[str], sizes: dict[str, int], seed: int, name: str = "corpus") -> dict[str, list[str]]:
    """`sizes[split]` sentences per split, disjoint: consecutive slices, in the order of `sizes`, of
    one shuffle seeded by `seed`; a split's sentences keep their shuffled order."""
    needed = sum(sizes.values())
    if len(sentences) < needed:
        raise XltError(
            f"dataset {name}: its documents hold {len(sentences)} distinct sentences, the splits need "
            f"{needed} ({', '.join(f'{s} {n}' for s, n in sizes.items())}); read more documents "
            f"(datasets.{name}.sentences.pool) or lower datasets.{name}.sentences.sizes"
        )
    order = list(range(len(sentences)))
    random.Random(seed).shuffle(order)
    out, start = {}, 0
    for split, size in sizes.items():
        out[split] = [sentences[i] for i in order[start : start + size]]
        start += size
    return out


def digest(sentences: list[str]) -> str:
    """sha256 of the sentences, one a line: the manifest's fingerprint of a split."""
    return hashlib.sha256("".join(s + "\n" for s in sentences).encode("utf-8")).hexdigest()


def text_unit(spec: dict) -> str:
    """What one record of a corpus dataset is: "sentence" where it is drawn as sentences
    (`sentences`) or read from a txt file (one sentence a line), else "document" (a row as the
    source holds it: a Wikipedia row is a whole article). Published numbers of a study that
    trained on sentences are matched only by runs on sentences (adapt's `text_unit` axis)."""
    if "sentences" in spec or (spec["source"] == "local" and spec.get("format") == "txt"):
        return "sentence"
    return "document"
