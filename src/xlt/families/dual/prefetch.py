"""Hub data the dual family reads outside `datasets:` (a hook: xlt.core.prefetch fetches it and
checks it offline): the BUCC mining pairs `xlt make-bucc` loads."""

from __future__ import annotations

from xlt.core.prefetch import HubDataset


def hub_datasets(config: dict) -> list[HubDataset]:
    mining = config["dual"].get("mining", {})  # optional: no mining step without it
    if mining.get("source") != "hf":
        return []
    return [
        HubDataset("dual.mining", mining["path"], pair, mining["hub_split"], mining.get("revision"))
        for pair in mining["pairs"]
    ]
