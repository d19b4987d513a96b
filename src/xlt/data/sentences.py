"""A corpus of documents (Wikipedia articles) cut into sentences, and the seeded draw of disjoint
sentence splits from it.

Seed 003 trains on 80,000 Dutch Wikipedia *sentences* and holds out 10,000 each for validation
and test. A dataset declares this with `sentences` (core schema): its rows are documents, read
once from `sentences.pool`; every document is split into sentences, each distinct sentence kept
once, and the splits are consecutive, disjoint slices of one seeded shuffle of them.

The segmenter is syntok (segtok's successor): pure Python, and it does not end a sentence at an
abbreviation followed by a lower-case word (Dutch "o.a.", "d.w.z.") or at a month before a year
("jan. 1920"), where pysbd 0.3.4's Dutch rules and sentencex 1.0.32 do. Its abbreviation list is
English, German and Spanish: in Dutch it ended sentences inside "Ca. | 900.000 inwoners", "op blz.
| 12 van zijn boek", "Prof. dr. | A. de Vries", and joined two at Dutch words it lists ("Het gras
is nat. Hij ..." : "nat", "vol", "dom", "mag", "zit"). For a language with a list of its own
(xlt.data.abbreviations) syntok reads that list instead of its own, and a sentence that still ends
in one of its abbreviations (syntok splits before a word it takes for a sentence start: "De",
"A") is joined to the next. A line break always ends a sentence: Wikipedia's text puts headings
and paragraphs on lines of their own.
"""

from __future__ import annotations

import contextlib
import hashlib
import random
from importlib import metadata

from xlt.core.errors import XltError
from xlt.data.abbreviations import never_final

SEGMENTER = "syntok"


def segmenter_version() -> str:
    return f"{SEGMENTER} {metadata.version(SEGMENTER)}"


def abbreviation_list(lang: str) -> str:
    """The abbreviation list the segmenter joins at in `lang`, as the manifest records it (its size
    and the sha256 of its sorted words): a change of the list changes the draw."""
    words = sorted(never_final(lang))
    if not words:
        return "none"
    return f"{len(words)} words, sha256 {hashlib.sha256(' '.join(words).encode('utf-8')).hexdigest()[:12]}"


def split_sentences(document: str, lang: str) -> list[str]:
    """The sentences of one document in language `lang`, in order, each with its original spacing
    inside."""
    import syntok.segmenter as segmenter  # deferred: syntok: only when segmenting

    # as listed, or capitalised where it opens a sentence or is a title ("Ca.", "Prof."); not in
    # capitals: "VS" (Verenigde Staten) is no "vs." (versus)
    abbreviations = frozenset(word for listed in never_final(lang) for word in (listed, listed.capitalize()))
    sentences = []
    with _syntok_abbreviations(abbreviations):
        for line in document.split("\n"):
            if not line.strip():
                continue
            joined: list[list] = []
            for paragraph in segmenter.process(line):
                for sentence in paragraph:
                    if joined and _ends_in(joined[-1], abbreviations):
                        joined[-1] = joined[-1] + sentence
                    else:
                        joined.append(list(sentence))
            for tokens in joined:
                text = "".join(token.spacing + token.value for token in tokens).strip()
                if text:
                    sentences.append(text)
    return sentences


@contextlib.contextmanager
def _syntok_abbreviations(words: frozenset[str]):
    """syntok reads `words` as its abbreviations meanwhile; none: its own."""
    from syntok._segmentation_states import State

    if not words:
        yield
        return
    if not isinstance(getattr(State, "abbreviations", None), frozenset):
        raise XltError(
            f"{segmenter_version()} keeps no abbreviation list in State.abbreviations, which "
            f"xlt.data.sentences replaces per language; install syntok 1.4.4 (pip install syntok==1.4.4)"
        )
    own = State.abbreviations
    State.abbreviations = words
    try:
        yield
    finally:
        State.abbreviations = own


def _ends_in(tokens: list, abbreviations: frozenset[str]) -> bool:
    """The sentence's last tokens are one of `abbreviations` and its full stop."""
    return len(tokens) >= 2 and tokens[-1].value == "." and tokens[-2].value in abbreviations


def corpus_sentences(documents: list[str], min_words: int, lang: str) -> list[str]:
    """Every distinct sentence of `documents` (in language `lang`) with at least `min_words`
    whitespace words (a heading or a list fragment is no sentence), in document order."""
    seen: dict[str, None] = {}
    for document in documents:
        for sentence in split_sentences(document, lang):
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
