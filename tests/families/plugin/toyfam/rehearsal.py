"""The toy family's part of `xlt rehearse` (a hook): a stand-in of its hub data, written where
`load_dataset` finds it offline. Its `training` is capped by the rehearsal itself."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

ROWS = 64
WORDS = ("heads", "tails", "edge", "coin", "toss", "lands", "spins", "falls")


def write_stand_ins(config: dict, datasets_cache: Path, stand_ins: Any) -> str:
    """`ROWS` labelled texts (label: whether the text says heads) in its data's hub id's place."""
    import datasets

    rng = random.Random(0)
    rows = []
    for _ in range(ROWS):
        text = " ".join(rng.choice(WORDS) for _ in range(6))
        rows.append({"text": text, "label": int("heads" in text.split())})
    features = datasets.Features({"text": datasets.Value("string"), "label": datasets.ClassLabel(names=["no", "yes"])})
    hub_id = config["toyfam"]["data"]
    stand_ins.write_cached(datasets_cache, hub_id, None, {"train": rows}, features)
    return f"toyfam: {ROWS} stand-in rows of {hub_id}"
