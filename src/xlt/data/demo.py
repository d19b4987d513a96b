"""A seeded, offline generator of small multilingual data sets for the demo run.

The demo needs no network, so it invents its own small "world": one concept lexicon
rendered in English and in synthetic languages. Each language spells a declared share of
every word class as English does (`Language.overlap`, config `demo_world`: the anchors
through which multilingual encoders transfer) and has its own word order. Language codes come
from ISO 639's range reserved for local use (qaa..qtz), so
nobody mistakes them for real languages. Every task the families need is generated from
the same sentence structures, so the data is parallel across languages by construction:

  nli        premise/hypothesis/label (entailment 0, neutral 1, contradiction 2, XNLI order)
  sentiment  short reviews in three domains (books, dvd, music), label negative 0 / positive 1
  sts        sentence pairs with a 0..5 similarity score, row-aligned across languages
  bitext     translation pairs, text = the language's sentence, text_pair = English
  corpus     clauses and, one in three, reviews; the "mixed" language code-switches between all languages

Demo numbers are about this world only; docs/demo-world.md says what it must show and why
it is built as it is.
"""

from __future__ import annotations

import functools
import random
import zlib
from dataclasses import dataclass, replace

SYNTHETIC_LANGUAGES = ("qaa", "qab", "qac")
LANGUAGES = ("en",) + SYNTHETIC_LANGUAGES
MIXED = "mixed"  # code-switched corpus used to pretrain the demo multilingual model
TASKS = ("nli", "sentiment", "sts", "bitext", "corpus")
NLI_LABELS = ("entailment", "neutral", "contradiction")
SENTIMENT_LABELS = ("negative", "positive")
DOMAINS = {
    "books": ("book", "novel", "story", "author", "poem"),
    "dvd": ("film", "movie", "actor", "scene", "series"),
    "music": ("song", "album", "band", "singer", "concert"),
}

NOUNS = (
    "dog",
    "cat",
    "bird",
    "horse",
    "child",
    "teacher",
    "doctor",
    "farmer",
    "king",
    "queen",
    "man",
    "woman",
    "boy",
    "girl",
    "fish",
    "cow",
    "student",
    "artist",
    "baker",
    "sailor",
)
ADJECTIVE_PAIRS = (
    ("big", "small"),
    ("old", "young"),
    ("happy", "sad"),
    ("fast", "slow"),
    ("tall", "short"),
    ("rich", "poor"),
)
VERB_PAIRS = (("likes", "hates"), ("helps", "hurts"), ("finds", "loses"), ("praises", "blames"))
NEUTRAL_VERBS = ("sees", "calls", "follows", "meets")
NEGATORS = ("never", "hardly", "seldom", "rarely")  # content words: NLI's contradictions turn on them
POSITIVE = ("good", "great", "excellent", "wonderful", "lovely")
NEGATIVE = ("bad", "awful", "terrible", "boring", "poor")
FUNCTION_WORDS = ("the", "does", "not", "very", "and", "is", "this")

ADJECTIVES = tuple(a for pair in ADJECTIVE_PAIRS for a in pair)
VERBS = tuple(v for pair in VERB_PAIRS for v in pair) + NEUTRAL_VERBS
# each class shares the same share of its words with English, so a language's overlap is
# the same for every task (NLI turns on adjectives and negators, sentiment on the polarity words)
WORD_CLASSES = {
    "nouns": NOUNS,
    "adjectives": ADJECTIVES,
    "verbs": VERBS,
    "negators": NEGATORS,
    "polarity": tuple(dict.fromkeys(POSITIVE + NEGATIVE)),
    "domain_nouns": tuple(n for d in DOMAINS.values() for n in d),
    "function": FUNCTION_WORDS,
}
ALL_WORDS = tuple(dict.fromkeys(w for words in WORD_CLASSES.values() for w in words))


@dataclass(frozen=True)
class Language:
    """How a synthetic language relates to English: the share of every word class it spells as
    English does (the anchors through which multilingual models transfer), and its word order."""

    overlap: float = 0.0
    order: str = "SVO"  # SVO or SOV (the verb after the object)
    adjectives: str = "pre"  # pre or post (adjectives after the noun)


# the default world: graded overlap, the none-overlap language (qac) is the negative control
WORLD = {
    "qaa": Language(overlap=0.5, order="SVO", adjectives="pre"),
    "qab": Language(overlap=0.2, order="SVO", adjectives="post"),
    "qac": Language(overlap=0.0, order="SOV", adjectives="post"),
}
ENGLISH = Language(overlap=1.0, order="SVO", adjectives="pre")
_SOUNDS = {  # consonants, vowels: each synthetic language sounds different
    "qaa": ("bdgklmnprstv", "aeiou"),
    "qab": ("fhjkmnprswz", "aeiouy"),
    "qac": ("bcdghklmnqrt", "aiou"),
}


def _stable_seed(*parts: object) -> int:
    return zlib.crc32("/".join(map(str, parts)).encode())


def language(lang: str, world: dict | None = None) -> Language:
    if lang == "en":
        return ENGLISH
    spec = (world or WORLD).get(lang)
    if spec is None:
        raise ValueError(f"unknown demo language {lang!r}; demo languages are en, {', '.join(world or WORLD)}")
    return spec if isinstance(spec, Language) else Language(**spec)


def describe(langs: list[str], world: dict | None = None) -> dict:
    """lang -> its settings and how many of its words it shares with English (for info files and reports)."""
    return {
        lang: {**vars(language(lang, world)), "shared_words": len(shared_words(lang, world)), "words": len(ALL_WORDS)}
        for lang in langs
    }


def shared_words(lang: str, world: dict | None = None) -> tuple[str, ...]:
    """The words `lang` spells as English does: round(overlap x size) of every word class, a seeded sample."""
    overlap = language(lang, world).overlap
    if lang == "en":
        return ALL_WORDS
    rng = random.Random(_stable_seed("shared", lang))
    shared = set()
    for words in WORD_CLASSES.values():
        own = [w for w in words if w not in shared]  # "poor" is an adjective and a polarity word
        shared.update(rng.sample(own, round(overlap * len(own))))
    return tuple(sorted(shared))


def lexicon(lang: str, world: dict | None = None) -> dict[str, str]:
    """English word -> word of `lang` (identity for English and for the shared words); unique within a language."""
    if lang == "en":
        return {w: w for w in ALL_WORDS}
    if lang not in _SOUNDS:
        raise ValueError(f"demo language {lang!r} has no sound inventory; use one of {', '.join(_SOUNDS)}")
    return dict(_lexicon(lang, shared_words(lang, world)))


@functools.lru_cache(maxsize=None)
def _lexicon(lang: str, shared: tuple[str, ...]) -> tuple[tuple[str, str], ...]:
    consonants, vowels = _SOUNDS[lang]
    rng = random.Random(_stable_seed("lexicon", lang))
    words: dict[str, str] = {}
    used: set[str] = set()
    for english in ALL_WORDS:
        # draw for every word, shared or not, so one language's own words do not change with its overlap
        while True:
            syllables = rng.choice((1, 2, 2, 3)) if english not in FUNCTION_WORDS else 1
            word = "".join(rng.choice(consonants) + rng.choice(vowels) for _ in range(syllables))
            if word not in used and word not in ALL_WORDS:
                break
        used.add(word)
        words[english] = english if english in shared else word
    return tuple(words.items())


@dataclass(frozen=True)
class Phrase:
    noun: str
    adjectives: tuple[str, ...] = ()


@dataclass(frozen=True)
class Clause:
    subject: Phrase
    verb: str
    obj: Phrase
    negator: str = ""  # never, hardly, ... before the verb; "" = not negated


def render(clause: Clause, lang: str, world: dict | None = None) -> str:
    lex = lexicon(lang, world)
    spec = language(lang, world)
    syntax, adj_pos = spec.order, spec.adjectives

    def phrase(p: Phrase) -> list[str]:
        adjectives = [lex[a] for a in p.adjectives]
        noun = [lex[p.noun]]
        return [lex["the"]] + (adjectives + noun if adj_pos == "pre" else noun + adjectives)

    verb = ([lex[clause.negator]] if clause.negator else []) + [lex[clause.verb]]
    subj, obj = phrase(clause.subject), phrase(clause.obj)
    words = subj + verb + obj if syntax == "SVO" else subj + obj + verb
    return " ".join(words)


def _random_phrase(rng: random.Random, max_adjectives: int = 2) -> Phrase:
    n = rng.randint(0, max_adjectives)
    pairs = rng.sample(ADJECTIVE_PAIRS, n)  # never both members of an antonym pair
    return Phrase(rng.choice(NOUNS), tuple(rng.choice(p) for p in pairs))


def _random_clause(rng: random.Random) -> Clause:
    subject = _random_phrase(rng)
    obj = _random_phrase(rng)
    while obj.noun == subject.noun:
        obj = _random_phrase(rng)
    return Clause(subject, rng.choice(VERBS), obj, negator=rng.choice(NEGATORS) if rng.random() < 0.15 else "")


# ---------------------------------------------------------------- NLI
# A hypothesis drops an adjective (entailment), adds one (neutral) or adds or removes the
# negator (contradiction). Neutral and contradiction both add a word (or, with a negated
# premise, drop one, as entailment does): which label it is depends on what that word is,
# an adjective or a negator. So the task transfers to a language as far as a model knows its
# words, through the words it shares with English or what pretraining aligned.
def _entailed(rng, c: Clause) -> Clause | None:
    slots = [s for s in ("subject", "obj") if getattr(c, s).adjectives]
    if not slots:
        return None
    slot = rng.choice(slots)
    p = getattr(c, slot)
    dropped = rng.choice(p.adjectives)
    return replace(c, **{slot: replace(p, adjectives=tuple(a for a in p.adjectives if a != dropped))})


def _neutral(rng, c: Clause) -> Clause:
    slot = rng.choice(("subject", "obj"))
    p = getattr(c, slot)
    free = [pair for pair in ADJECTIVE_PAIRS if not set(pair) & set(p.adjectives)]
    return replace(c, **{slot: replace(p, adjectives=p.adjectives + (rng.choice(rng.choice(free)),))})


def _contradicted(rng, c: Clause) -> Clause:
    return replace(c, negator="" if c.negator else rng.choice(NEGATORS))


def nli_examples(n: int, seed: int) -> list[tuple[Clause, Clause, int]]:
    """Balanced labels: entailment 0, neutral 1, contradiction 2 (XNLI's order)."""
    rng = random.Random(seed)
    out = []
    while len(out) < n:
        premise = _random_clause(rng)
        label = len(out) % 3
        hypothesis = (_entailed(rng, premise), _neutral(rng, premise), _contradicted(rng, premise))[label]
        if hypothesis is not None:
            out.append((premise, hypothesis, label))
    rng.shuffle(out)
    return out


# ---------------------------------------------------------------- sentiment
def _review(rng: random.Random, domain: str, positive: bool) -> list[tuple[str, bool, bool, bool]]:
    """Clauses (noun, very, negated, positive_word), each carrying the review's polarity: a
    positive word, or a negated negative one, in a positive review. The label still turns on
    the polarity words and on negation, but not on summing several clauses, which a small
    model does not learn from a few hundred examples (docs/demo-world.md)."""
    clauses = []
    for _ in range(rng.randint(1, 3)):
        negated = rng.random() < 0.3
        clauses.append((rng.choice(DOMAINS[domain]), rng.random() < 0.3, negated, positive != negated))
    return clauses


def render_review(clauses, lang: str, world: dict | None = None) -> str:
    lex = lexicon(lang, world)
    rng = random.Random(_stable_seed(clauses))
    parts = []
    for noun, very, negated, positive in clauses:
        word = rng.choice(POSITIVE if positive else NEGATIVE)
        words = (
            [lex["this"], lex[noun], lex["is"]]
            + ([lex["not"]] if negated else [])
            + ([lex["very"]] if very else [])
            + [lex[word]]
        )
        if language(lang, world).order == "SOV":  # copula last
            words = [lex["this"], lex[noun]] + words[3:] + [lex["is"]]
        parts.append(" ".join(words))
    return f" {lex['and']} ".join(parts)


# ---------------------------------------------------------------- STS
def _similarity(a: Clause, b: Clause) -> float:
    """0..5 by construction: how many of the meaning slots agree (every negator negates alike)."""
    score = 0.0
    score += 1.5 * (a.subject.noun == b.subject.noun)
    score += 1.5 * (a.obj.noun == b.obj.noun)
    score += 1.0 * (a.verb == b.verb and bool(a.negator) == bool(b.negator))
    adj_a, adj_b = set(a.subject.adjectives + a.obj.adjectives), set(b.subject.adjectives + b.obj.adjectives)
    score += 1.0 * (len(adj_a & adj_b) / len(adj_a | adj_b) if adj_a | adj_b else 1.0)
    return round(score, 3)


def _sts_pairs(n: int, seed: int) -> list[tuple[Clause, Clause, float]]:
    rng = random.Random(seed)
    out = []
    for i in range(n):
        a = _random_clause(rng)
        # mix near-paraphrases and unrelated pairs so scores cover the whole range
        b = _random_clause(rng)
        for _ in range(i % 4):
            b = replace(
                b, **rng.choice([{"subject": a.subject}, {"obj": a.obj}, {"verb": a.verb, "negator": a.negator}])
            )
        out.append((a, b, _similarity(a, b)))
    return out


# ---------------------------------------------------------------- public entry point


def generate(
    task: str, lang: str, split: str, size: int, seed: int, domain: str | None = None, world: dict | None = None
) -> list[dict]:
    """Normalised records for one (task, language, split). Parallel across languages:
    the same seed and split give the same meanings in every language."""
    if task not in TASKS:
        raise ValueError(f"unknown demo task {task!r}; demo tasks are {', '.join(TASKS)}")
    if lang not in LANGUAGES + (MIXED,) or (lang == MIXED and task != "corpus"):
        raise ValueError(f"unknown demo language {lang!r} for task {task}; use {', '.join(LANGUAGES)}")
    split_seed = _stable_seed(seed, task, split, domain or "")
    if task == "nli":
        return [
            {"text": render(p, lang, world), "text_pair": render(h, lang, world), "label": label}
            for p, h, label in nli_examples(size, split_seed)
        ]
    if task == "sentiment":
        rng = random.Random(split_seed)
        domains = [domain] if domain else list(DOMAINS)
        records = []
        for i in range(size):
            positive = i % 2 == 0
            clauses = _review(rng, domains[i % len(domains)], positive)
            records.append({"text": render_review(tuple(clauses), lang, world), "label": int(positive)})
        return records
    if task == "sts":
        return [
            {"text": render(a, lang, world), "text_pair": render(b, lang, world), "score": s}
            for a, b, s in _sts_pairs(size, split_seed)
        ]
    rng = random.Random(split_seed)
    clauses = [_random_clause(rng) for _ in range(size)]
    if task == "bitext":
        return [{"text": render(c, lang, world), "text_pair": render(c, "en")} for c in clauses]
    # corpus: clauses and, every third sentence, a review, so that pretraining sees every
    # task's words (a model that never met "good" or "not" cannot transfer sentiment)
    texts = []
    for i, clause in enumerate(clauses):
        base = rng.choice(("en",) + tuple(world or WORLD)) if lang == MIXED else lang
        if i % 3 == 2:
            review = _review(rng, rng.choice(list(DOMAINS)), rng.random() < 0.5)
            text = render_review(tuple(review), base, world)
        else:
            text = render(clause, base, world)
        texts.append({"text": _code_switched(text, base, rng, world) if lang == MIXED else text})
    return texts


def _code_switched(text: str, base: str, rng: random.Random, world: dict | None = None) -> str:
    """A sentence whose words come from several languages: the shared context that lets a
    tiny demo model align its languages, as shared sub-words do for mBERT."""
    languages = ("en",) + tuple(world or WORLD)
    inverse = {v: k for k, v in lexicon(base, world).items()}
    out = []
    for w in text.split():
        other = rng.choice(languages)
        out.append(lexicon(other, world)[inverse[w]] if rng.random() < 0.3 else w)
    return " ".join(out)
