"""What a family's plan asks about the frozen-prefix cache and its shared store (xlt.frozen_prefix):
the checks of its settings, whether its depths share one store per model, the depths a store
holds and the settings every store job shares (freeze_depth's `xlt prefix-states`, dual's
`xlt dual-prefix-states`). Torch-free: plans import it."""

from __future__ import annotations

from xlt.core import settings
from xlt.core.errors import XltError


def check_prefix_states(config: dict, family_name: str, depths: list[int], depths_setting: str) -> None:
    """A shared prefix store is the cache shared across the sweep: it needs the cache on. And a
    cached sweep whose `depths` (the family's freeze depths, `depths_setting`) include -1 mixes
    cached and uncached runs: refused unless the family's allow_mixed_caching says so."""
    family = config[family_name]
    if family["prefix_states"]["shared"] and not family["cache_frozen_prefix"]:
        raise XltError(
            f"{family_name}.prefix_states.shared: true shares the frozen-prefix cache across the sweep; "
            f"it needs {family_name}.cache_frozen_prefix: true (or set shared: false)"
        )
    uncached = sorted({d for d in depths if d < 0})
    if family["cache_frozen_prefix"] and uncached and not family["allow_mixed_caching"]:
        raise XltError(
            f"{family_name}.cache_frozen_prefix: true runs the frozen layers of every depth >= 0 once, in eval mode "
            f"(no dropout below the boundary), but {depths_setting} also has depth {uncached[0]}, which freezes "
            "nothing and trains uncached (dropout in every layer): the sweep would compare cached with uncached "
            f"runs, which differ in more than the depth. Set {family_name}.allow_mixed_caching: true to run it "
            "anyway (the tables' cache_frozen_prefix column marks the cached runs), take -1 out of "
            f"{depths_setting}, or set {family_name}.cache_frozen_prefix: false"
        )


def shared_prefix(config: dict, family_name: str) -> bool:
    """Whether a family's frozen depths read one shared prefix store per model (its
    cache_frozen_prefix and prefix_states.shared both on)."""
    family = settings.family(config, family_name)
    return bool(family and family["cache_frozen_prefix"] and family["prefix_states"]["shared"])


def stored_depths(rows: list[dict], models: list[str]) -> list[tuple[str, list[int]]]:
    """(model, the freeze depths >= 0 of its runs) for every model that has some: one shared
    prefix store per such model holds those depths (-1 has no prefix)."""
    by_model = [
        (model, sorted({row["freeze_depth"] for row in rows if row["model"] == model and row["freeze_depth"] >= 0}))
        for model in models
    ]
    return [(model, depths) for model, depths in by_model if depths]


def store_settings(depths: list[int], training: dict, batch_size: int, store: dict, out: str) -> list[tuple]:
    """The settings every prefix-store job shares (xlt prefix-states, xlt dual-prefix-states)."""
    return [
        ("depths", ",".join(map(str, depths))),
        ("max_length", training["max_length"]),
        ("batch_size", batch_size),
        ("storage_dtype", store["storage_dtype"]),
        ("max_gib", store["max_gib"]),
        ("precision", training["precision"]),
        ("device", training["device"]),
        ("out", out),
    ]
