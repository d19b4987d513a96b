"""Read STS pair files: original STS-b, stsb_multi_mt csv, and xlt's normalised JSONL.

Every loader returns `StsPairs(sentences1, sentences2, scores)`: three plain, equally long
lists. Scores are returned as written (STS-b: 0..5); the correlations do not depend on scale.

Formats:

- ``stsbenchmark``: the original sts-{train,dev,test}.csv, tab-separated with fields
  genre, file, year, id, score, sentence1, sentence2 and, on some lines, two trailing source
  fields. Quotes are ordinary characters there (read with ``csv.QUOTE_NONE``): a line such as
  ``"Let's go," he said.`` must not be parsed as a quoted field.
- ``stsb_multi_mt``: PhilipMay/stsb-multi-mt's stsb-{lang}-{split}.csv: comma-separated,
  standard csv quoting, three fields sentence1, sentence2, score, no header (a first row whose
  score field is not a number is taken as a header and skipped).
- ``jsonl``: records with ``text``, ``text_pair`` and ``score`` (written by `xlt prepare-data`).
"""

from __future__ import annotations

import csv
import math
import re
from pathlib import Path
from typing import NamedTuple

from xlt.core.errors import XltError
from xlt.core.io import numbered_jsonl

STS_FORMATS = ("stsbenchmark", "stsb_multi_mt", "jsonl")


class StsPairs(NamedTuple):
    sentences1: list[str]
    sentences2: list[str]
    scores: list[float]


class StsSource(NamedTuple):
    """Where an STS file's records belong: the `dataset`, `lang` and `split` record dimensions."""

    dataset: str
    lang: str | None
    split: str | None


def detect_sts_format(path: str | Path) -> str:
    """stsbenchmark / stsb_multi_mt / jsonl, from the suffix and the first line."""
    path = _check_file(path)
    if path.suffix == ".jsonl":
        return "jsonl"
    first_line = _first_line(path)
    if first_line.count("\t") >= 6:
        return "stsbenchmark"
    return "stsb_multi_mt"


def describe_sts_file(path: str | Path, fmt: str | None = None) -> StsSource:
    """dataset/lang/split from the file's name, by the naming each format ships with.

    sts-test.csv -> (stsbenchmark, en, test); stsb-de-test.csv -> (stsb_multi_mt, de, test);
    results/data/{dataset}/{lang}/{split}.jsonl -> (dataset, lang, split).
    """
    path = Path(path)
    fmt = fmt or detect_sts_format(path)
    if fmt == "jsonl":
        parts = path.resolve().parts
        dataset = parts[-3] if len(parts) >= 3 else "sts"
        lang = parts[-2] if len(parts) >= 2 else None
        return StsSource(dataset, lang, path.stem)
    split = next(
        (s for s in ("train", "dev", "test", "validation") if re.search(rf"(^|[-_.]){s}([-_.]|$)", path.stem)), None
    )
    if fmt == "stsbenchmark":
        return StsSource("stsbenchmark", "en", split)
    m = re.match(r"^stsb-([A-Za-z_]+)-", path.stem)
    return StsSource("stsb_multi_mt", m.group(1) if m else None, split)


def load_sts(path: str | Path, fmt: str | None = None) -> StsPairs:
    """Load any supported STS file (`fmt` None = detect it)."""
    fmt = fmt or detect_sts_format(path)
    loaders = {"stsbenchmark": load_stsbenchmark, "stsb_multi_mt": load_stsb_multi_mt, "jsonl": load_sts_jsonl}
    if fmt not in loaders:
        raise XltError(f"unknown STS format {fmt!r} for {path}; choose one of {STS_FORMATS}")
    return loaders[fmt](path)


def load_stsbenchmark(path: str | Path) -> StsPairs:
    path = _check_file(path)
    rows = []
    with open(path, encoding="utf-8", newline="") as f:
        for number, fields in enumerate(csv.reader(f, delimiter="\t", quoting=csv.QUOTE_NONE), start=1):
            if not fields:
                continue
            if len(fields) < 7:
                raise XltError(
                    f"{path} line {number}: {len(fields)} tab-separated fields, expected at least 7 "
                    "(genre, file, year, id, score, sentence1, sentence2) as in the original STS-b"
                )
            rows.append((fields[5], fields[6], _score(fields[4], path, number)))
    return _pairs(rows, path)


def load_stsb_multi_mt(path: str | Path) -> StsPairs:
    path = _check_file(path)
    rows = []
    with open(path, encoding="utf-8", newline="") as f:
        for number, fields in enumerate(csv.reader(f), start=1):
            if not fields:
                continue
            if len(fields) != 3:
                raise XltError(
                    f"{path} row {number}: {len(fields)} comma-separated fields, expected 3 "
                    "(sentence1, sentence2, score; fields with commas must be quoted)"
                )
            if number == 1 and not _is_number(fields[2]):
                continue  # header row
            rows.append((fields[0], fields[1], _score(fields[2], path, number)))
    return _pairs(rows, path)


def load_sts_jsonl(path: str | Path) -> StsPairs:
    path = _check_file(path)
    rows = []
    for number, obj in numbered_jsonl(path):
        missing = [k for k in ("text", "text_pair", "score") if k not in obj]
        if missing:
            raise XltError(f"{path} line {number} lacks {missing}; STS records need text, text_pair and score")
        rows.append((str(obj["text"]), str(obj["text_pair"]), _score(obj["score"], path, number)))
    return _pairs(rows, path)


def _pairs(rows: list[tuple[str, str, float]], path: Path) -> StsPairs:
    if not rows:
        raise XltError(f"{path} holds no sentence pairs; expected one scored pair per line")
    if len(rows) < 2:
        raise XltError(f"{path} holds only one sentence pair; correlations need at least 2")
    s1, s2, scores = (list(column) for column in zip(*rows))
    return StsPairs(s1, s2, scores)


def _score(raw, path: Path, number: int) -> float:
    try:
        value = float(raw)
    except (TypeError, ValueError):
        raise XltError(f"{path} line {number}: score {raw!r} is not a number") from None
    if not math.isfinite(value):
        raise XltError(f"{path} line {number}: score {raw!r} is not finite")
    return value


def _is_number(raw: str) -> bool:
    try:
        float(raw)
    except ValueError:
        return False
    return True


def _first_line(path: Path) -> str:
    with open(path, encoding="utf-8") as f:
        return f.readline()


def _check_file(path: str | Path) -> Path:
    path = Path(path)
    if not path.is_file():
        raise XltError(f"STS file {path} does not exist")
    if path.stat().st_size == 0:
        raise XltError(f"STS file {path} is empty; expected one scored sentence pair per line")
    return path
