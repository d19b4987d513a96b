"""The dual family's part of `xlt rehearse` (a hook, xlt.rehearse): its distilled runs' training
capped, and stand-ins of the BUCC mining data it reads from the hub outside `datasets:`."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from xlt.core import settings

FAMILY = "dual"


def derive(section: dict, paper: dict, cap: Callable[[dict], None], steps: int) -> None:
    """The distilled runs' own training settings override the family's: capped as well."""
    if "training" in section.get("distill", {}):
        cap(section["distill"]["training"])


def _hub_mining(config: dict) -> dict:
    mining = (settings.family(config, FAMILY) or {}).get("mining") or {}
    return mining if mining.get("source") == "hf" else {}


def languages(config: dict) -> set[str]:
    """The mining pairs' languages, which no declared dataset may read."""
    return {
        lang
        for pair in ((settings.family(config, FAMILY) or {}).get("mining") or {}).get("pairs", [])
        for lang in pair.split("-")
    }


def write_stand_ins(config: dict, datasets_cache: Path, stand_ins: Any) -> str | None:
    """BUCC-shaped stand-ins of the hub mining data (`stand_ins`: xlt.rehearse.datasets' writers)."""
    mining = _hub_mining(config)
    return f"{stand_ins.write_bucc(mining, datasets_cache)} BUCC pairs" if mining else None
