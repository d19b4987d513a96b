"""Which trained models outlive the sweep (the plan's disk column): a rule that saves a model keeps
it with `keep_models`, for the demo model, or when the workflow names it as a target (a model another
family analyses); the others are temp() outputs, deleted once the rules that read them have run."""

from __future__ import annotations

import functools
import json

from xlt.core import registry, settings
from xlt.core.plan import RESULTS
from xlt.report import sections

MODEL_DIR = f"{RESULTS}/runs/{{family}}/{{run_id}}/model"  # where the KEEPS_MODEL rules of a family save theirs


def keeps_model() -> tuple[str, ...]:
    """The rules whose outputs keep a trained model: the demo model's and each family's (its
    plan's KEEPS_MODEL; the others keep metrics, logits or stores only); tests/cost checks
    this against the rules' outputs."""
    return ("build_demo_model", *(rule for name in registry.names() for rule in registry.plan(name).KEEPS_MODEL))


def model_kept(config: dict, family: str, run_id: str) -> bool:
    """Whether a trained model's directory outlives the sweep: with `keep_models`, a demo model (every
    family reads it), or one the workflow names as a target (a model another family analyses); the
    others are temp() outputs, deleted once the rules that read them have run."""
    if family == "shared" or config.get("keep_models", False):
        return True

    return MODEL_DIR.format(family=family, run_id=run_id) in _workflow_targets(
        json.dumps(config, sort_keys=True, default=str)
    )


@functools.lru_cache(maxsize=4)
def _workflow_targets(config_json: str) -> frozenset[str]:
    """Every enabled family's and check's targets (what the Snakefile's `all` asks for, less the tables
    over them), once per config (a plan asks for every trained model)."""
    config = json.loads(config_json)
    names = (*settings.FAMILIES, *settings.CHECKS)
    return frozenset(
        t
        for name in names
        if settings.family(config, name) is not None
        for t in sections.plan_module(name).targets(config)
    )
