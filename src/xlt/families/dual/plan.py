"""The dual sweep: config checks and one row per job."""
from __future__ import annotations

import math
from pathlib import Path

from xlt.core import settings
from xlt.core.errors import XltError
from xlt.core.settings import dataset_languages, depth_label, model_layers
from xlt.core.settings import number_label as _number
from xlt.core.settings import require as _require
from xlt.core.settings import require_split as _require_split


def training_settings(config: dict, family: str) -> dict:
    return settings.training(config, family)

# ---------------------------------------------------------------- dual: LaBSE-style dual encoder (seed 004)
DUAL_DEFAULTS = {"margins": [0.3], "scales": [10], "poolings": ["mean"], "freeze_depths": [-1], "seeds": [1],
                 "symmetric": "sum"}
DUAL_MINING_DEFAULTS = {"english": "en", "gold_fraction": 0.5, "path": "mteb/bucc-bitext-mining", "hub_split": "test",
                        "tune_fraction": 0.2, "tune_split": "dev", "test_split": "test", "k": 4, "strategy": "max",
                        "seed": 1}


def dual_settings(config: dict) -> dict | None:
    """The `dual` section with defaults filled in (dev defaults to the train dataset's dev
    split, batch sizes to training.batch_size), or None when absent or disabled."""
    family = config.get("dual")
    if not family or not family.get("enabled", True):
        return None
    out = {**DUAL_DEFAULTS, **family}
    train = {"split": "train", **family["train"]}
    out["train"] = train
    out["dev"] = {"dataset": train["dataset"], "langs": train["langs"], "split": "dev", **family.get("dev", {})}
    out["tatoeba"] = {"split": "test", "match": "text", **family["tatoeba"]}
    out.setdefault("batch_sizes", [training_settings(config, "dual").get("batch_size", 32)])
    if "mining" in family:
        out["mining"] = {**DUAL_MINING_DEFAULTS, **family["mining"]}
    return out


def dual_mining_pairs(family: dict) -> list[str]:
    """Language pairs mined, as in the BUCC file names (bitext source: LANG-english)."""
    mining = family.get("mining")
    if not mining:
        return []
    if mining["source"] == "bitext":
        return [f"{lang}-{mining['english']}" for lang in mining["langs"]]
    return list(mining["pairs"])


def _require_bitext(config: dict, dataset: str, where: str) -> None:
    _require(config, "datasets", dataset, where)
    task = config["datasets"][dataset]["task"]
    if task != "bitext":
        raise XltError(f"{where}: dataset {dataset!r} is a {task} dataset; this needs a bitext dataset "
                       f"(task: bitext, text = non-English side, text_pair = English)")


def _check_dual(config: dict) -> None:
    from xlt.evaluate.mining import parse_pair

    family = dual_settings(config)
    if family is None:
        return
    for model in family["models"]:
        _require(config, "models", model, "dual.models")
        n = model_layers(config, model)
        for d in family["freeze_depths"]:
            if not -1 <= d < n:
                raise XltError(f"freeze depth {d} in dual.freeze_depths leaves nothing to train in model {model!r} "
                               f"with {n} layers; allowed: -1 (nothing frozen), 0 (embeddings) .. {n - 1}")
    for role in ("train", "dev", "tatoeba"):
        spec = family[role]
        _require_bitext(config, spec["dataset"], f"dual.{role}.dataset")
        _require_split(config, spec["dataset"], spec["split"], spec["langs"], f"dual.{role}")
    for axis in ("margins", "scales", "poolings", "batch_sizes", "freeze_depths", "seeds"):
        values = family[axis]
        if len(set(values)) != len(values):
            raise XltError(f"dual.{axis} lists a value more than once ({values}); each value is one sweep point")
    mining = family.get("mining")
    if mining:
        if mining["tune_split"] == mining["test_split"]:
            raise XltError(f"dual.mining: tune_split and test_split are both {mining['tune_split']!r}; "
                           "the threshold must be tuned on another split than the one it is scored on")
        if mining["source"] == "bitext":
            _require_bitext(config, mining["dataset"], "dual.mining.dataset")
            for split in (mining["tune_split"], mining["test_split"]):
                _require_split(config, mining["dataset"], split, mining["langs"], "dual.mining")
        if mining["source"] == "local" and not Path(mining["dir"]).is_dir():
            raise XltError(f"dual.mining.dir: {mining['dir']} is not a directory; point it at BUCC-layout files "
                           "({src}-{tgt}.{split}.{src|tgt|gold})")
        pairs = dual_mining_pairs(family)
        for pair in pairs:
            try:
                parse_pair(pair)
            except XltError as err:
                raise XltError(f"dual.mining: {err}") from None
        if len(set(pairs)) != len(pairs):
            raise XltError(f"dual.mining lists a language pair more than once: {pairs}")




def dual_runs(config: dict) -> list[dict]:
    """One row per dual-encoder training job: model x margin x scale x pooling x batch size x freeze depth x seed."""
    family = dual_settings(config)
    if family is None:
        return []
    rows = []
    for model in family["models"]:
        for margin in family["margins"]:
            for scale in family["scales"]:
                for pooling in family["poolings"]:
                    for batch_size in family["batch_sizes"]:
                        for depth in family["freeze_depths"]:
                            for seed in family["seeds"]:
                                rows.append({
                                    "run_id": f"{model}-margin{_number(margin)}-scale{_number(scale)}-{pooling}"
                                              f"-bs{batch_size}-depth{depth_label(depth)}-seed{seed}",
                                    "model": model, "margin": margin, "scale": scale, "pooling": pooling,
                                    "batch_size": batch_size, "freeze_depth": depth, "seed": seed,
                                })
    return rows




check = _check_dual
runs = dual_runs
