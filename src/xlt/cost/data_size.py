"""Rows and bytes of a configured dataset's splits, as the plan counts them (xlt.cost.estimate):
the config's own sizes (demo `sizes`, a sentence draw's `sentences.sizes`), else what `xlt
prepare-data` wrote (its info.json counts and the files' bytes), else the hub's published sizes
(KNOWN_ROWS) and an assumed BYTES_PER_ROW."""

from __future__ import annotations

import json
import re
from pathlib import Path

from xlt.core.plan import RESULTS
from xlt.cost.constants import value

# rows of hub datasets per language and split; a split not listed: DEFAULT_ROWS; a prepared JSONL
# row where the data are not prepared yet: BYTES_PER_ROW (sources: xlt.cost.constants)
KNOWN_ROWS = value("known_rows")
DEFAULT_ROWS = value("default_rows")
BYTES_PER_ROW = value("bytes_per_row")


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
