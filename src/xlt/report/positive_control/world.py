"""The demo world as the positive control reads it: languages ranked by overlap with English.

Free of pandas and torch: the plan's config check uses it too.
"""

from __future__ import annotations

from typing import Mapping

from xlt.core.errors import XltError


def overlap_ranking(world: Mapping[str, Mapping]) -> list[str]:
    """The synthetic languages by overlap with English, largest first (ties by code)."""
    if not world:
        raise XltError("the demo world has no languages (demo_world.languages)")
    return sorted(world, key=lambda lang: (-float(world[lang]["overlap"]), lang))


def high_overlap(world: Mapping[str, Mapping]) -> str:
    """The language with the largest overlap: where transfer must show first."""
    return overlap_ranking(world)[0]


def describe(world: Mapping[str, Mapping], lang: str) -> str:
    """ "qaa (overlap 0.5)": a language as the check table names it."""
    return f"{lang} (overlap {float(world[lang]['overlap']):g})"
