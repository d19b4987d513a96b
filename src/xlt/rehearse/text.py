"""Generated text for the rehearsal's stand-in data: a small invented vocabulary per language,
so every sentence tokenizes into known word pieces of the stand-in models. A sentence is a list
of word indices, rendered in any language: a translation is the same indices in another one."""

from __future__ import annotations

import random
import zlib

WORDS_PER_LANGUAGE = 60
SYLLABLES = ("ka", "lo", "mi", "ne", "ru", "so", "ta", "vi", "pe", "du", "go", "zi")


def vocabulary(lang: str) -> list[str]:
    """`lang`'s invented words, the same in every process (seeded by the code's CRC, not by hash(),
    which Python salts per process)."""
    rng = random.Random(zlib.crc32(lang.encode()))
    prefix = "".join(ch for ch in lang.lower() if ch.isalpha())[:3] or "x"
    stems = rng.sample([a + b for a in SYLLABLES for b in SYLLABLES], WORDS_PER_LANGUAGE)
    return [prefix + stem for stem in stems]


def sentence_ids(rng: random.Random, low: int = 4, high: int = 12) -> list[int]:
    return [rng.randrange(WORDS_PER_LANGUAGE) for _ in range(rng.randint(low, high))]


def render(ids: list[int], lang: str) -> str:
    words = vocabulary(lang)
    return " ".join(words[i] for i in ids)
