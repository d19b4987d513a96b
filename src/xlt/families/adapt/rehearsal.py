"""The adapt family's part of `xlt rehearse` (a hook: xlt.rehearse.derive calls derive() on its
config section): the curve runs train to the last published checkpoint, its other runs a few steps."""

from __future__ import annotations

from typing import Callable

from xlt.core.errors import XltError
from xlt.report.paper_steps import published_steps

FAMILY = "adapt"


def derive(section: dict, paper: dict, cap: Callable[[dict], None], steps: int) -> None:
    """Cap the curve runs' own training (the rehearsal caps `training` itself) and checkpoint the
    other schemes every `steps` (scheme_eval; less often than the curve runs, as in the paper);
    then extend the curve runs to the last published checkpoint (`paper`: the raw paper config)."""
    if "training" in section.get("curve", {}):
        cap(section["curve"]["training"])
    if isinstance(section.get("scheme_eval"), dict) and section["scheme_eval"].get("eval_every"):
        section["scheme_eval"]["eval_every"] = steps
    own = paper.get(FAMILY)
    if isinstance(own, dict) and own.get("enabled", True):
        _curve_training(
            section,
            {**paper.get("training", {}), **own.get("training", {}), **own.get("curve", {}).get("training", {})},
        )


def _curve_training(section: dict, paper_training: dict) -> None:
    """The curve runs (adapt.curve.schemes) train to the family's last published checkpoint and
    evaluate every eval_every steps of the paper's curve runs (`paper_training`: the paper config's
    shared, adapt and adapt.curve training), so every published step is one of their checkpoints
    and its published row is matched. Set in adapt.curve.training, the setting of the curve runs
    alone: the other adapt runs keep the cap."""
    published = published_steps(FAMILY)
    every = paper_training.get("eval_every") or 0
    if not published or max(published) < 1 or every < 1:
        return
    off_schedule = [step for step in published if step % every]
    if off_schedule:
        raise XltError(
            f"{FAMILY}'s published steps {off_schedule} (ours) are no checkpoints of the paper's "
            f"eval_every {every}: the rehearsal cannot evaluate them as the paper config would"
        )
    training = section.setdefault("curve", {}).setdefault("training", {})
    training.update(max_steps=max(published), eval_every=every, log_every=every)
    if "checkpoint_every" in paper_training:  # one resumable save half way, as the capped jobs make one
        training["checkpoint_every"] = max(published) // 2
