"""The adapt sweep: config checks and one row per job."""
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

# ---------------------------------------------------------------- adapt: target-language MLM adaptation (seed 003)
ADAPT_MULTILINGUAL = "multilingual"  # `lang` of the pooled multilingual evaluation set
ADAPT_COMPARE = "compare"  # `split` name of the fixed sentences of the native-model comparison


def _adapt_enabled(config: dict) -> dict | None:
    family = config.get("adapt")
    return family if family and family.get("enabled", True) else None


def adapt_schemes(config: dict, model: str) -> list:
    """The family's layer schemes parsed for `model`; an error names the offending key."""
    from xlt.families.adapt.layer_schemes import parse_scheme

    n = model_layers(config, model)
    parsed = []
    for i, scheme in enumerate(config["adapt"]["schemes"]):
        try:
            parsed.append(parse_scheme(scheme, n))
        except XltError as err:
            raise XltError(f"adapt.schemes[{i}] (model {model!r}, {n} layers): {err}") from None
    names = [s.name for s in parsed]
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:
        raise XltError(f"adapt.schemes lists {repeated} more than once; each scheme is one sweep value")
    return parsed


def _check_adapt(config: dict) -> None:
    family = _adapt_enabled(config)
    if family is None:
        return
    for model in family["models"]:
        _require(config, "models", model, "adapt.models")
        adapt_schemes(config, model)
    _require(config, "models", family["native"], "adapt.native")
    target, multi = family["target"], family["multilingual"]
    _require(config, "datasets", target["dataset"], "adapt.target.dataset")
    _require(config, "datasets", multi["dataset"], "adapt.multilingual.dataset")
    splits = {key: target.get(key, default) for key, default in
              (("train_split", "train"), ("eval_split", "dev"), ("test_split", "test"))}
    for key, split in splits.items():
        _require_split(config, target["dataset"], split, [target["lang"]], f"adapt.target.{key}")
    if splits["eval_split"] == splits["test_split"]:
        raise XltError(f"adapt.target: eval_split and test_split are both {splits['eval_split']!r}; the test "
                       "perplexity must come from sentences that never chose a checkpoint")
    if ADAPT_COMPARE in (splits["eval_split"], splits["test_split"]):
        raise XltError(f"adapt.target: split name {ADAPT_COMPARE!r} is reserved for the comparison sentences")
    if target["lang"] == ADAPT_MULTILINGUAL:
        raise XltError(f"adapt.target.lang: {ADAPT_MULTILINGUAL!r} names the pooled multilingual set; "
                       "use the target language's code")
    _require_split(config, multi["dataset"], multi.get("split", "dev"), multi["langs"], "adapt.multilingual")
    k = training_settings(config, "adapt").get("eval_every", 0)
    if k < 1:
        raise XltError(f"adapt.training.eval_every (K, steps between perplexity/distance checkpoints) must be "
                       f"at least 1, got {k}")
    layers = family.get("compare", {}).get("layers", "all")
    if layers != "all":
        top = min(model_layers(config, m) for m in [*family["models"], family["native"]])
        bad = [layer for layer in layers if not 0 <= layer <= top]
        if bad:
            raise XltError(f"adapt.compare.layers {bad} are outside 0..{top} (hidden-state indices; 0 = embeddings, "
                           f"{top} = the last layer both compared models have)")


def adapt_scheme_label(scheme) -> str:
    """Run-id part of a scheme: layers9-12, gradual-start4-step4-every1epochs."""
    from xlt.families.adapt.layer_schemes import RangeScheme

    return f"layers{scheme.name}" if isinstance(scheme, RangeScheme) else scheme.name


def adapt_runs(config: dict) -> list[dict]:
    """One row per adaptation job: model x layer scheme x seed."""
    family = _adapt_enabled(config)
    if family is None:
        return []
    rows = []
    for model in family["models"]:
        for spec, scheme in zip(family["schemes"], adapt_schemes(config, model)):
            for seed in family.get("seeds", [1]):
                rows.append({
                    "run_id": f"{model}-{adapt_scheme_label(scheme)}-seed{seed}",
                    "model": model, "scheme": scheme.name, "seed": seed, "scheme_spec": spec,
                })
    return rows


def adapt_references(config: dict) -> list[dict]:
    """The untouched models whose perplexities are the reference lines: the native model and
    every model that is adapted (its step-0 state)."""
    family = _adapt_enabled(config)
    if family is None:
        return []
    rows = [{"model": family["native"], "role": "native"}]
    rows += [{"model": m, "role": "transfer"} for m in family["models"] if m != family["native"]]
    return rows


def adapt_eval_sets(config: dict) -> dict[str, dict]:
    """"<lang>/<split>" -> how the fixed evaluation file is drawn (xlt sample-texts): the
    held-out target set, the test set, the multilingual set size-matched to the target set,
    and the comparison sentences (from the target's held-out split)."""
    family = _adapt_enabled(config)
    if family is None:
        return {}
    target, multi = family["target"], family["multilingual"]
    lang, eval_split = target["lang"], target.get("eval_split", "dev")
    cap = family.get("eval_sentences", 10000)
    target_key = f"{lang}/{eval_split}"
    return {
        target_key: {"sources": [(target["dataset"], lang, eval_split)], "fields": ["text"], "max_size": cap},
        f"{lang}/{target.get('test_split', 'test')}": {
            "sources": [(target["dataset"], lang, target.get("test_split", "test"))], "fields": ["text"], "max_size": cap},
        f"{ADAPT_MULTILINGUAL}/{multi.get('split', 'dev')}": {
            "sources": [(multi["dataset"], x, multi.get("split", "dev")) for x in multi["langs"]],
            "fields": multi.get("fields", ["text"]), "size_of": target_key},
        f"{lang}/{ADAPT_COMPARE}": {"sources": [(target["dataset"], lang, eval_split)], "fields": ["text"],
                                    "max_size": family.get("compare", {}).get("sentences", 256)},
    }




check = _check_adapt
runs = adapt_runs
