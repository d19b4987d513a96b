"""The shape of a job's model, (vocab, hidden, layers): from the config, the model's config.json in
the hub cache, or a table of known hub models; and the hub cache the sweep downloads."""

from __future__ import annotations

import json
import os

from xlt.core.model_files import split_revision
from xlt.core.plan import RESULTS, model_ref
from xlt.core.prefetch import cache_dir
from xlt.cost import formulas
from xlt.cost.constants import value as constant
from xlt.cost.work import costs

# hub models: (vocab, hidden, layers); an unknown hub id is planned as DEFAULT_SHAPE (bert-base) and
# says so (sources: xlt.cost.constants)
KNOWN_MODELS = constant("known_models")
DEFAULT_SHAPE = constant("default_shape")


def model_shape(config: dict, ref: str) -> tuple[int, int, int]:
    """(vocab, hidden, layers) of a --model argument: a config model, a run's output or a hub id
    (pinned to a revision or not)."""
    ref, revision = split_revision(ref)
    for spec in config["models"].values():
        if spec.get("path") == ref:
            cached = cached_shape(ref, revision) if spec["source"] == "hub" else None
            return cached or KNOWN_MODELS.get(
                ref, (DEFAULT_SHAPE[0], DEFAULT_SHAPE[1], spec.get("layers", DEFAULT_SHAPE[2]))
            )
    if ref.startswith(f"{RESULTS}/models/"):
        spec = config["models"][ref.split("/")[2]]
        return spec.get("vocab_size", 1000), spec.get("hidden_size", 64), spec["layers"]
    if ref.startswith(f"{RESULTS}/runs/"):  # a fine-tuned model: the shape of the model its family starts from
        family = ref.split("/")[2]
        names = costs(family).trained_models(config[family])
        if names:
            return model_shape(config, model_ref(config, names[0]))
    return KNOWN_MODELS.get(ref, DEFAULT_SHAPE)


def cached_shape(hub_id: str, revision: str | None = None) -> tuple[int, int, int] | None:
    """(vocab, hidden, layers) from the model's config.json in the hub cache the jobs read (after
    `xlt prefetch`, or the rehearsal's stand-ins), read without network; None when not cached."""
    from huggingface_hub import try_to_load_from_cache  # deferred: huggingface_hub: slow to import

    hub_cache = os.environ.get("HF_HUB_CACHE") or str(cache_dir() / "hub")
    path = try_to_load_from_cache(hub_id, "config.json", cache_dir=hub_cache, revision=revision)
    if not isinstance(path, str):
        return None
    with open(path) as f:
        config = json.load(f)
    try:
        return config["vocab_size"], config["hidden_size"], config["num_hidden_layers"]
    except KeyError:
        return None


def hub_cache_gib(config: dict) -> float:
    """Hub weights downloaded once per model (fp32 safetensors)."""
    total = 0
    for spec in config["models"].values():
        if spec["source"] == "hub":
            vocab, hidden, layers = model_shape(config, spec["path"])
            total += constant("weight_bytes") * (formulas.encoder_params(hidden, layers) + vocab * hidden)
    return total / 2**30
