"""Hub data the toy family reads outside `datasets:` (a hook: `xlt prefetch` fetches it, and an
offline run checks it is in the cache before any job starts)."""

from __future__ import annotations

from xlt.core.prefetch import HubDataset

SPLIT = "train"


def hub_datasets(config: dict) -> list[HubDataset]:
    return [HubDataset("toyfam.data", config["toyfam"]["data"], None, SPLIT, None)]
