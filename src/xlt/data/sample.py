"""Fixed evaluation sentence sets drawn from normalised files, balanced across files.

Seed 003 evaluates on 10,000 Dutch validation sentences and on 10,000 sentences "randomly
picked from the original XNLI validation set", the multilingual set reduced "to match our
Dutch dataset". `sample_texts` draws such a set once (seeded), so every run and every
reference model reads the very same sentences from one file.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Sequence

from xlt.core.errors import XltError
from xlt.core.io import read_jsonl

TEXT_FIELDS = ("text", "text_pair")


def distinct_texts(path: str | Path, fields: Sequence[str] = ("text",)) -> list[str]:
    """Non-empty values of `fields` in file order, each sentence once (XNLI repeats every premise
    for its three hypotheses)."""
    bad = [f for f in fields if f not in TEXT_FIELDS]
    if bad or not fields:
        raise XltError(f"text fields {bad or list(fields)} are not allowed; choose from {TEXT_FIELDS}")
    seen: dict[str, None] = {}
    for line_no, rec in enumerate(read_jsonl(path), start=1):
        for f in fields:
            value = rec.get(f)
            if value is None and f == "text":
                raise XltError(
                    f"{path}: record {line_no} has no 'text'; expected normalised records (xlt prepare-data)"
                )
            if isinstance(value, str) and value.strip():
                seen.setdefault(value.strip(), None)
    return list(seen)


def balanced_quotas(total: int, parts: int) -> list[int]:
    """`total` split over `parts` as evenly as possible, the remainder to the first parts."""
    return [total // parts + (1 if i < total % parts else 0) for i in range(parts)]


def sample_texts(
    files: Sequence[str | Path], size: int, seed: int, fields: Sequence[str] = ("text",), exact: bool = False
) -> list[dict]:
    """`size` sentences, an equal share from every file, each share a seeded random sample kept
    in file order. A file with fewer distinct sentences than its share gives all of them, or
    with `exact` raises (a size-matched set must really match). Records: {text, lang}, lang
    being the file's directory name (results/data/<dataset>/<lang>/<split>.jsonl)."""
    if size < 1:
        raise XltError(f"sample size must be at least 1, got {size}")
    if not files:
        raise XltError("no input files to sample sentences from")
    pools = [distinct_texts(f, fields) for f in files]
    out = []
    for index, (path, pool, quota) in enumerate(zip(files, pools, balanced_quotas(size, len(files)))):
        if len(pool) < quota and exact:
            raise XltError(
                f"{path} has {len(pool)} distinct sentences but the size-matched set needs {quota} "
                f"from it ({size} over {len(files)} files); use fewer evaluation sentences"
            )
        if len(pool) <= quota:
            chosen = range(len(pool))
        else:  # one generator per file, so a file's sample does not depend on the others
            chosen = sorted(random.Random(f"{seed}/{index}").sample(range(len(pool)), quota))
        lang = Path(path).resolve().parent.name
        out.extend({"text": pool[i], "lang": lang} for i in chosen)
    return out
