"""BUCC-layout mining data: one split's two sides and gold pairs, read from and written to files
(or fetched from the hub). Mining and scoring them is xlt.evaluate.mining's.

Files (BUCC layout, one directory per language pair):
  {src}-{tgt}.{split}.{src}   lines "id<TAB>sentence"  (source side)
  {src}-{tgt}.{split}.{tgt}   lines "id<TAB>sentence"  (target side)
  {src}-{tgt}.{split}.gold    lines "src_id<TAB>tgt_id" (gold pairs)
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

from xlt.core.errors import XltError
from xlt.core.io import write_text

BITEXT_SPLIT_EXAMPLE = "dev=results/data/demo-bitext/qaa/dev.jsonl"  # a SPLIT=FILE item of `xlt make-bucc --bitext`


@dataclass
class BuccSplit:
    """Both sides of one BUCC split and its gold pairs (empty when the split has no gold)."""

    src_lang: str
    tgt_lang: str
    split: str
    src_ids: list[str]
    src_sentences: list[str]
    tgt_ids: list[str]
    tgt_sentences: list[str]
    gold: set[tuple[str, str]] = field(default_factory=set)

    @property
    def pair(self) -> str:
        return f"{self.src_lang}-{self.tgt_lang}"


def parse_pair(pair: str) -> tuple[str, str]:
    match = re.fullmatch(r"([A-Za-z_]+)-([A-Za-z_]+)", pair or "")
    if not match or match.group(1) == match.group(2):
        raise XltError(f"language pair {pair!r} is not of the form SRC-TGT with two different codes; use e.g. de-en")
    return match.group(1), match.group(2)


def bucc_paths(directory: str | Path, pair: str, split: str) -> dict[str, Path]:
    src, tgt = parse_pair(pair)
    base = Path(directory) / f"{src}-{tgt}.{split}"
    return {
        "src": base.with_name(f"{base.name}.{src}"),
        "tgt": base.with_name(f"{base.name}.{tgt}"),
        "gold": base.with_name(f"{base.name}.gold"),
    }


def available_splits(directory: str | Path, pair: str) -> list[str]:
    """Splits that have a source file for `pair` in `directory`."""
    src, tgt = parse_pair(pair)
    prefix, suffix = f"{src}-{tgt}.", f".{src}"
    directory = Path(directory)
    if not directory.is_dir():
        return []
    return sorted(
        p.name[len(prefix) : -len(suffix)]
        for p in directory.iterdir()
        if p.name.startswith(prefix) and p.name.endswith(suffix) and len(p.name) > len(prefix) + len(suffix)
    )


def read_id_sentences(path: str | Path) -> tuple[list[str], list[str]]:
    """Read "id<TAB>sentence" lines; blank lines are skipped, anything else malformed is an error."""
    path = Path(path)
    ids: list[str] = []
    sentences: list[str] = []
    seen: set[str] = set()
    with open(path, encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            line = line.rstrip("\r\n")
            if not line.strip():
                continue
            sid, tab, sentence = line.partition("\t")
            sid = sid.strip()
            if not tab or not sid or not sentence.strip():
                raise XltError(
                    f"{path}:{lineno}: expected 'id<TAB>sentence' with both parts non-empty; "
                    "fix the line or regenerate the file"
                )
            if sid in seen:
                raise XltError(f"{path}:{lineno}: duplicate sentence id {sid!r}; ids must be unique within a file")
            seen.add(sid)
            ids.append(sid)
            sentences.append(sentence.strip())
    if not ids:
        raise XltError(f"{path}: no sentences; expected 'id<TAB>sentence' lines")
    return ids, sentences


def read_gold(path: str | Path, src_ids: Iterable[str], tgt_ids: Iterable[str]) -> set[tuple[str, str]]:
    """Read "src_id<TAB>tgt_id" lines and check that every id exists on its side."""
    path = Path(path)
    known_src, known_tgt = set(src_ids), set(tgt_ids)
    gold: set[tuple[str, str]] = set()
    with open(path, encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            if not line.strip():
                continue
            parts = line.strip().split("\t")
            if len(parts) != 2 or not all(parts):
                raise XltError(f"{path}:{lineno}: expected 'src_id<TAB>tgt_id', got {line.strip()!r}")
            s, t = parts
            if s not in known_src or t not in known_tgt:
                missing = s if s not in known_src else t
                raise XltError(
                    f"{path}:{lineno}: gold pair refers to id {missing!r}, "
                    "which is not in the sentence files of this split"
                )
            gold.add((s, t))
    return gold


def load_bucc_split(directory: str | Path, pair: str, split: str, require_gold: bool = True) -> BuccSplit:
    """Load one split of a BUCC-layout directory (see the module docstring)."""
    src, tgt = parse_pair(pair)
    paths = bucc_paths(directory, pair, split)
    needed = ["src", "tgt"] + (["gold"] if require_gold else [])
    missing = [str(paths[k]) for k in needed if not paths[k].is_file()]
    if missing:
        splits = available_splits(directory, pair)
        hint = f"splits present for {pair}: {', '.join(splits)}" if splits else f"no {pair} files found in {directory}"
        raise XltError(f"missing BUCC file(s) {', '.join(missing)}; {hint}")
    src_ids, src_sentences = read_id_sentences(paths["src"])
    tgt_ids, tgt_sentences = read_id_sentences(paths["tgt"])
    gold = read_gold(paths["gold"], src_ids, tgt_ids) if paths["gold"].is_file() else set()
    if require_gold and not gold:
        raise XltError(f"{paths['gold']}: no gold pairs; a split used for tuning or scoring needs at least one")
    return BuccSplit(src, tgt, split, src_ids, src_sentences, tgt_ids, tgt_sentences, gold)


def write_bucc_split(data: BuccSplit, directory: str | Path) -> dict[str, Path]:
    """Write `data` in the BUCC layout (e.g. to keep a hub download as local files)."""
    paths = bucc_paths(directory, data.pair, data.split)
    for sentence in data.src_sentences + data.tgt_sentences:
        if "\n" in sentence or "\t" in sentence:
            raise XltError(
                f"sentence {sentence[:40]!r} contains a tab or newline and cannot be stored in the BUCC layout"
            )
    write_text(paths["src"], "".join(f"{i}\t{s}\n" for i, s in zip(data.src_ids, data.src_sentences)))
    write_text(paths["tgt"], "".join(f"{i}\t{s}\n" for i, s in zip(data.tgt_ids, data.tgt_sentences)))
    write_text(paths["gold"], "".join(f"{s}\t{t}\n" for s, t in sorted(data.gold)))
    return paths


def load_bucc_from_hub(
    pair: str = "de-en", dataset: str = "mteb/bucc-bitext-mining", split: str = "test", revision: str | None = None
) -> BuccSplit:
    """BUCC 2018 from the Hugging Face hub (needs network; not exercised by the offline tests).

    mteb/bucc-bitext-mining has one config per pair ("de-en", "fr-en", "ru-en", "zh-en") and
    a single row with `sentence1` (source list), `sentence2` (target list) and `gold`
    (1-based [source, target] index pairs). Ids become "{lang}-{position:06d}". The hub
    copy has only one split, so tune the threshold on part of it or on local files.
    """
    from datasets import load_dataset  # deferred: datasets: seconds to import

    src, tgt = parse_pair(pair)
    rows = load_dataset(dataset, pair, split=split, revision=revision)
    if len(rows) != 1 or not {"sentence1", "sentence2", "gold"} <= set(rows.column_names):
        raise XltError(f"{dataset}[{pair}/{split}] is not in the expected one-row sentence1/sentence2/gold format")
    row = rows[0]
    src_ids = [f"{src}-{i:06d}" for i in range(len(row["sentence1"]))]
    tgt_ids = [f"{tgt}-{i:06d}" for i in range(len(row["sentence2"]))]
    gold = {(src_ids[i - 1], tgt_ids[j - 1]) for i, j in row["gold"]}  # the hub's gold is 1-based
    return BuccSplit(src, tgt, split, src_ids, list(row["sentence1"]), tgt_ids, list(row["sentence2"]), gold)
