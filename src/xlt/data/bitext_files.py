"""Read bitext test sets: Tatoeba in LASER's layout, and xlt's normalised bitext JSONL.

LASER layout: ``tatoeba.{xxx}-eng.{xxx}`` and ``tatoeba.{xxx}-eng.eng``. Both files of a pair
hold one sentence per line, line i of one being the translation of line i of the other
(LASER's data/tatoeba/v1, 1000 pairs per language). ``xxx`` is LASER's
three-letter code (deu, fra, cmn ...). Lines are split on "\\n" only (a stray "\\r" before it
is dropped), so a sentence that contains another Unicode line separator stays one sentence.

JSONL (``xlt prepare-data`` output, results/data/{dataset}/{lang}/{split}.jsonl): one record
per pair, ``text`` = the non-English side, ``text_pair`` = English.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, NamedTuple, Sequence

from xlt.core.errors import XltError
from xlt.core.io import numbered_jsonl, read_jsonl

_XX_FILE = re.compile(r"^tatoeba\.([^.]+)-eng\.\1$")


def tatoeba_paths(directory: str | Path, lang: str) -> tuple[Path, Path]:
    """(non-English file, English file) for `lang`; neither is checked here."""
    directory = Path(directory)
    return directory / f"tatoeba.{lang}-eng.{lang}", directory / f"tatoeba.{lang}-eng.eng"


def available_tatoeba_langs(directory: str | Path) -> list[str]:
    """Sorted codes xxx for which ``tatoeba.xxx-eng.xxx`` exists in `directory`."""
    directory = _check_directory(directory)
    return sorted(m.group(1) for p in directory.iterdir() if (m := _XX_FILE.match(p.name)))


def load_tatoeba(directory: str | Path, lang: str) -> tuple[list[str], list[str]]:
    """(non-English sentences, English sentences), line-aligned, for one language code.

    Raises XltError naming the file for: a missing directory, an unknown code (listing the
    codes that are there), a missing English side, an empty file, an empty line, or line
    counts that differ between the two sides.
    """
    directory = _check_directory(directory)
    xx_path, en_path = tatoeba_paths(directory, lang)
    if not xx_path.is_file():
        available = available_tatoeba_langs(directory)
        listing = ", ".join(available) or "none (expected files tatoeba.xxx-eng.xxx and tatoeba.xxx-eng.eng)"
        raise XltError(
            f"no Tatoeba file {xx_path} for language code {lang!r}; codes available in {directory}: {listing}"
        )
    if not en_path.is_file():
        raise XltError(f"missing Tatoeba English side {en_path} for {xx_path.name}; both files of the pair are needed")
    xx_lines = read_sentence_lines(xx_path)
    en_lines = read_sentence_lines(en_path)
    if len(xx_lines) != len(en_lines):
        raise XltError(
            f"Tatoeba pair {lang}-eng is not line-aligned: {xx_path} has {len(xx_lines)} lines but "
            f"{en_path} has {len(en_lines)}; both sides need one sentence per line, in the same order"
        )
    return xx_lines, en_lines


def read_sentence_lines(path: str | Path) -> list[str]:
    """One sentence per line (UTF-8); empty files and empty lines raise XltError naming the file."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as err:
        raise XltError(f"{path} is not UTF-8 text ({err}); re-encode it as UTF-8") from None
    if text.startswith("\ufeff"):
        text = text[1:]
    lines = text.split("\n")
    if lines and lines[-1] == "":  # the final newline ends the last line; it does not start a new one
        lines.pop()
    lines = [line[:-1] if line.endswith("\r") else line for line in lines]
    if not lines:
        raise XltError(f"{path} is empty; expected one sentence per line")
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            raise XltError(
                f"{path} line {number} is empty; every line must hold one sentence (an empty line shifts the alignment)"
            )
    return lines


class BitextSource(NamedTuple):
    """Where a bitext file's records belong: the `dataset`, `lang` and `split` record dimensions."""

    dataset: str
    lang: str | None
    split: str | None


def describe_bitext_jsonl(path: str | Path) -> BitextSource:
    """results/data/{dataset}/{lang}/{split}.jsonl -> (dataset, lang, split)."""
    parts = Path(path).resolve().parts
    return BitextSource(
        parts[-3] if len(parts) >= 3 else "bitext", parts[-2] if len(parts) >= 2 else None, Path(path).stem
    )


def load_bitext_jsonl(path: str | Path) -> tuple[list[str], list[str]]:
    """(non-English sentences, English sentences) from records with ``text`` and ``text_pair``."""
    path = Path(path)
    if not path.is_file():
        raise XltError(f"bitext file {path} does not exist")
    xx, en = [], []
    for number, obj in numbered_jsonl(path):
        if (
            not isinstance(obj, dict)
            or not str(obj.get("text", "")).strip()
            or not str(obj.get("text_pair", "")).strip()
        ):
            raise XltError(f"{path} line {number} needs non-empty 'text' (non-English) and 'text_pair' (English)")
        xx.append(str(obj["text"]))
        en.append(str(obj["text_pair"]))
    if not xx:
        raise XltError(f"{path} is empty; expected one JSON record per line with text and text_pair")
    return xx, en


def _check_directory(directory: str | Path) -> Path:
    directory = Path(directory)
    if not directory.is_dir():
        raise XltError(f"Tatoeba directory {directory} does not exist; pass the folder holding tatoeba.xxx-eng.* files")
    return directory


def resolve_langs(files: list[str], langs: str | None) -> list[str]:
    """Language code per bitext file, from --langs or the parent directory names; unique."""
    if langs:
        codes = [code.strip() for code in langs.split(",") if code.strip()]
        if len(codes) != len(files):
            raise XltError(
                f"--langs names {len(codes)} language(s) but {len(files)} --bitext file(s) were given; "
                "give one code per file"
            )
    else:
        codes = [Path(f).resolve().parent.name for f in files]
    duplicates = sorted({c for c in codes if codes.count(c) > 1})
    if duplicates:
        raise XltError(
            f"language code(s) {', '.join(duplicates)} used for more than one --bitext file; name them with --langs"
        )
    return codes


def load_bitexts(files: list[str], codes: list[str]):

    bitexts = []
    for path, code in zip(files, codes):
        if not Path(path).is_file():
            raise XltError(
                f"bitext file {path} does not exist; write it with `xlt prepare-data` or pass an existing file"
            )
        try:
            records = read_jsonl(path)
        except ValueError as err:
            raise XltError(f"{path}: not valid JSONL ({err}); one JSON object per line") from None
        bitexts.append(bitexts_from_records(code, records, origin=str(path)))
    return bitexts


@dataclass
class Bitext:
    """Parallel sentences for one language: texts[i] translates english[i]."""

    lang: str
    texts: list[str]
    english: list[str]

    def __post_init__(self) -> None:
        if len(self.texts) != len(self.english):
            raise XltError(
                f"bitext {self.lang}: {len(self.texts)} sentences but {len(self.english)} English sentences; "
                "both sides must have the same length"
            )
        if len(self.texts) < 2:
            raise XltError(f"bitext {self.lang}: needs at least 2 sentence pairs for retrieval, got {len(self.texts)}")


def bitexts_from_records(lang: str, records: Sequence[Mapping], origin: str = "") -> Bitext:
    """Bitext from normalised JSONL records (text = non-English side, text_pair = English)."""
    texts, english = [], []
    for i, rec in enumerate(records, 1):
        text, pair = rec.get("text"), rec.get("text_pair")
        if not isinstance(text, str) or not isinstance(pair, str) or not text.strip() or not pair.strip():
            raise XltError(
                f"{origin or lang} record {i}: needs non-empty string fields 'text' (non-English) "
                "and 'text_pair' (English)"
            )
        texts.append(text)
        english.append(pair)
    return Bitext(lang, texts, english)
