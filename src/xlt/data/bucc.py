"""Build BUCC-layout mining splits (see xlt.data.bucc_files) from other data.

`bucc_from_bitext`: from a bitext, as a stand-in for BUCC's comparable corpora. Its
pairs are shuffled (seeded); a `gold_fraction` of them keep both sides and become the gold
pairs; of the remaining pairs, the first half contribute only their non-English sentence
and the second half only their English sentence. Those distractors are real sentences of
the same kind, but no translation of them is on the other side, so a miner has to decide
which sentences have a partner at all (BUCC's task). Pairs that repeat a sentence already
used (either side) are skipped, so every gold pair is unambiguous.

`split_bucc`: a single BUCC split (the hub copy, mteb/bucc-bitext-mining, has only one)
into a tuning part and a test part: gold pairs and unpaired sentences of each side are
divided by `tune_fraction`, so the threshold is tuned on sentences it is not scored on.
`xlt mine` puts the two parts together again as one pool (xlt.evaluate.mining_pool): the cut
decides which source sentences tune the threshold, not the pool their margins are computed in.
"""

from __future__ import annotations

import random
from typing import Sequence

from xlt.core.errors import XltError
from xlt.data.bucc_files import BuccSplit, parse_pair


def _ids(lang: str, n: int) -> list[str]:
    return [f"{lang}-{i:06d}" for i in range(n)]


def _assemble(
    src: str,
    tgt: str,
    split: str,
    gold: Sequence[tuple[str, str]],
    src_only: Sequence[str],
    tgt_only: Sequence[str],
    rng: random.Random,
) -> BuccSplit:
    """Shuffle each side (gold sentences among the distractors) and number it; ids carry no position hint."""
    src_sentences = [s for s, _ in gold] + list(src_only)
    tgt_sentences = [t for _, t in gold] + list(tgt_only)
    src_order = rng.sample(range(len(src_sentences)), len(src_sentences))
    tgt_order = rng.sample(range(len(tgt_sentences)), len(tgt_sentences))
    src_ids, tgt_ids = _ids(src, len(src_sentences)), _ids(tgt, len(tgt_sentences))
    # position p of a side holds sentence order[p]; gold pair g sits where order == g
    src_pos = {original: position for position, original in enumerate(src_order)}
    tgt_pos = {original: position for position, original in enumerate(tgt_order)}
    gold_ids = {(src_ids[src_pos[g]], tgt_ids[tgt_pos[g]]) for g in range(len(gold))}
    return BuccSplit(
        src,
        tgt,
        split,
        src_ids,
        [src_sentences[i] for i in src_order],
        tgt_ids,
        [tgt_sentences[i] for i in tgt_order],
        gold_ids,
    )


def bucc_from_bitext(
    texts: Sequence[str], english: Sequence[str], pair: str, split: str, gold_fraction: float = 0.5, seed: int = 1
) -> BuccSplit:
    """A BUCC split whose source side is `texts`' language and target side English (see module doc)."""
    src, tgt = parse_pair(pair)
    if len(texts) != len(english):
        raise XltError(f"bitext for {pair} {split}: {len(texts)} sentences but {len(english)} English sentences")
    if not 0 < gold_fraction <= 1:
        raise XltError(f"gold fraction {gold_fraction} must lie in (0, 1]")
    seen_src, seen_tgt, pairs = set(), set(), []
    for text, eng in zip(texts, english):
        if text in seen_src or eng in seen_tgt or "\t" in text + eng or "\n" in text + eng:
            continue
        seen_src.add(text)
        seen_tgt.add(eng)
        pairs.append((text, eng))
    rng = random.Random(seed)
    rng.shuffle(pairs)
    n_gold = round(gold_fraction * len(pairs))
    if n_gold < 1:
        raise XltError(
            f"bitext for {pair} {split}: {len(pairs)} distinct pairs give no gold pair at gold fraction "
            f"{gold_fraction}; use more pairs or a larger fraction"
        )
    rest = pairs[n_gold:]
    half = len(rest) // 2
    return _assemble(src, tgt, split, pairs[:n_gold], [s for s, _ in rest[:half]], [t for _, t in rest[half:]], rng)


def split_bucc(
    data: BuccSplit, tune_fraction: float, seed: int = 1, names: tuple[str, str] = ("dev", "test")
) -> tuple[BuccSplit, BuccSplit]:
    """Divide one split into (tune, test) parts; gold must be one-to-one."""
    if not 0 < tune_fraction < 1:
        raise XltError(f"tune fraction {tune_fraction} must lie strictly between 0 and 1")
    src_of = dict(zip(data.src_ids, data.src_sentences))
    tgt_of = dict(zip(data.tgt_ids, data.tgt_sentences))
    gold = sorted(data.gold)
    if len({s for s, _ in gold}) != len(gold) or len({t for _, t in gold}) != len(gold):
        raise XltError(
            f"{data.pair} {data.split}: a sentence occurs in more than one gold pair; "
            "only one-to-one gold can be split into tuning and test parts"
        )
    if len(gold) < 2:
        raise XltError(f"{data.pair} {data.split}: {len(gold)} gold pair(s); splitting needs at least 2")
    paired_src, paired_tgt = {s for s, _ in gold}, {t for _, t in gold}
    rng = random.Random(seed)
    rng.shuffle(gold)
    src_only = [s for s in data.src_ids if s not in paired_src]
    tgt_only = [t for t in data.tgt_ids if t not in paired_tgt]
    rng.shuffle(src_only)
    rng.shuffle(tgt_only)

    def cut(items: list) -> int:
        return min(max(1, round(tune_fraction * len(items))), len(items) - 1) if len(items) > 1 else len(items)

    g, s, t = cut(gold), round(tune_fraction * len(src_only)), round(tune_fraction * len(tgt_only))
    parts = []
    for name, gold_part, src_part, tgt_part in (
        (names[0], gold[:g], src_only[:s], tgt_only[:t]),
        (names[1], gold[g:], src_only[s:], tgt_only[t:]),
    ):
        parts.append(
            _assemble(
                data.src_lang,
                data.tgt_lang,
                name,
                [(src_of[a], tgt_of[b]) for a, b in gold_part],
                [src_of[i] for i in src_part],
                [tgt_of[i] for i in tgt_part],
                rng,
            )
        )
    return parts[0], parts[1]
