"""Rows and bytes of a configured dataset's splits, as the plan counts them (xlt.cost.estimate):
the config's own sizes (demo `sizes`, a sentence draw's `sentences.sizes`), else what `xlt prepare-data` wrote (its info.json counts and the files'
bytes), else the hub's published sizes (KNOWN_ROWS) and an assumed BYTES_PER_ROW."""

from __future__ import annotations

import json
import re
from pathlib import Path

from xlt.core.plan import RESULTS

# rows of hub datasets per language and split (the datasets' cards); a split not listed: DEFAULT_ROWS
KNOWN_ROWS = {
    ("facebook/xnli", "train"): 392702,
    ("facebook/xnli", "dev"): 2490,
    ("facebook/xnli", "test"): 5010,
    ("sentence-transformers/all-nli", "train"): 942069,
    ("sentence-transformers/all-nli", "dev"): 19657,
    ("PhilipMay/stsb_multi_mt", "dev"): 1500,
    ("PhilipMay/stsb_multi_mt", "test"): 1379,
    ("mteb/tatoeba-bitext-mining", "test"): 1000,
    # TED talks: 15k-407k rows a language pair (the dataset viewer's subset sizes); config/paper.yaml's
    # 12 languages from en-de's 289k up, so its max_rows (200,000) binds for every one; 51.6k dev
    # rows over 53 pairs, about 1,000 each
    ("sentence-transformers/parallel-sentences-talks", "train"): 289000,
    ("sentence-transformers/parallel-sentences-talks", "dev"): 1000,
}
DEFAULT_ROWS = 2000
# a prepared JSONL row (text pair plus label) where the data are not prepared yet: assumed
BYTES_PER_ROW = 400


def prepared_rows(dataset: str, split: str) -> int | None:
    """Rows per language of a split `xlt prepare-data` has written (its info.json counts, the
    largest language's), so a plan made after the data step (the cost ledger's) plans the data the
    jobs read rather than the hub's published sizes; None before."""
    info = Path(RESULTS) / "data" / dataset / "info.json"
    if not info.is_file():
        return None
    counts = [n for key, n in json.loads(info.read_text()).get("counts", {}).items() if key.endswith(f"/{split}")]
    return max(counts) if counts else None


def rows(config: dict, dataset: str, split: str) -> int:
    spec = config["datasets"].get(dataset)
    if spec is None:
        return DEFAULT_ROWS
    if "sizes" in spec and split in spec["sizes"]:
        return int(spec["sizes"][split])
    drawn = spec.get("sentences", {}).get("sizes", {})  # a corpus drawn as sentences: exactly these
    if split in drawn:
        return int(drawn[split])
    prepared = prepared_rows(dataset, split)
    if prepared is not None:
        return prepared
    name = spec.get("split_names", {}).get(split, "")
    sliced = re.search(r"\[(\d*):(\d*)\]", name)
    if sliced:
        return int(sliced.group(2) or 0) - int(sliced.group(1) or 0)
    known = KNOWN_ROWS.get((spec.get("path"), split), DEFAULT_ROWS)
    return min(known, spec["max_rows"]) if "max_rows" in spec else known


def bytes_per_row(dataset: str) -> float:
    """Bytes of a prepared JSONL row of `dataset`: its files' size over their rows once `xlt
    prepare-data` has written them, else BYTES_PER_ROW."""
    root = Path(RESULTS) / "data" / dataset
    info = root / "info.json"
    if not info.is_file():
        return float(BYTES_PER_ROW)
    counts = json.loads(info.read_text()).get("counts", {})
    files = [(root / f"{key}.jsonl", n) for key, n in counts.items() if (root / f"{key}.jsonl").is_file()]
    written = sum(n for _, n in files)
    return sum(path.stat().st_size for path, _ in files) / written if written else float(BYTES_PER_ROW)
