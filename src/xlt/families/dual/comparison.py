"""The objective comparison's runs (`dual.comparison`): which additive-margin settings the distilled
students are compared with, from which starts, and at which seeds.

A distilled student learns from a teacher trained on NLI (the sbert AllNLI run); a margin run from
the plain pretrained model has no NLI supervision, so a difference between the two mixes the
objective with the teacher's training. Margin runs started from the teacher's own checkpoint
(start `teacher`) carry the same NLI training: distillation against them compares the objectives
from the same knowledge. Every run's row names its start (axis `start`).

Seeds: one training seed leaves run-to-run variance unmeasured, so every run the comparison reads
(the compared margin settings at every start, the distilled students and their budget-matched
twins) trains at `comparison.seeds`; the sweep's other runs keep `dual.seeds` (cost: `xlt plan`).
"""

from __future__ import annotations

from xlt.core import settings
from xlt.core.errors import XltError
from xlt.families.dual import budget

AXIS = "start"
PRETRAINED = "pretrained"  # the model of dual.models, as the sweep's runs start
TEACHER = "teacher"  # the distillation teacher's checkpoint (dual.distill.teacher)


def spec(config: dict, family: str) -> dict:
    """The comparison's margins, scales, seeds and starts; unset ones are the sweep's."""
    section = config[family]
    own = section.get("comparison", {})
    return {
        "margins": own.get("margins", section["margins"]),
        "scales": own.get("scales", section["scales"]),
        "seeds": own.get("seeds", section["seeds"]),
        "starts": own.get("starts", [PRETRAINED]),
    }


def margin_points(config: dict, family: str) -> list[tuple]:
    """(margin, scale, start, seed) of every compared additive-margin run (the sweep's runs are
    (margin, scale, pretrained, seed) over dual.seeds; the plan keeps one run of each id)."""
    compared = spec(config, family)
    return [
        (margin, scale, start, seed)
        for start in compared["starts"]
        for margin in compared["margins"]
        for scale in compared["scales"]
        for seed in compared["seeds"]
    ]


def margin_row(config, family, model, margin, scale, pooling, batch_size, depth, seed, start) -> dict:
    """An additive-margin run's row; one started from the teacher's checkpoint says so in its id."""
    number = settings.number_label
    started = "" if start == PRETRAINED else f"-from{start}"
    return {
        "run_id": f"{model}{started}-margin{number(margin)}-scale{number(scale)}-{pooling}"
        f"-bs{batch_size}-depth{settings.depth_label(depth)}-seed{seed}",
        "model": model,
        "objective": "additive_margin",
        "margin": margin,
        "scale": scale,
        "pooling": pooling,
        "batch_size": batch_size,
        "freeze_depth": depth,
        "seed": seed,
        budget.AXIS: budget.sentences_seen(config, family, settings.training(config, family), batch_size),
        AXIS: start,
    }


def check(config: dict, family: str, distilling: bool) -> None:
    """A teacher start needs a teacher; each list names a value once."""
    section, compared = config[family], spec(config, family)
    if TEACHER in compared["starts"] and not distilling:
        raise XltError(
            f"{family}.comparison.starts has {TEACHER}: that is the distillation teacher's checkpoint; add "
            f"mse_distill to {family}.objectives with {family}.distill.teacher, or drop {TEACHER}"
        )
    for key, values in section.get("comparison", {}).items():  # the sweep's own lists are checked as its axes
        if len(set(values)) != len(values):
            raise XltError(f"{family}.comparison.{key} lists a value more than once ({values})")


def check_lengths(family: str, margin_length: int, distill_length: int, scoring_length: int) -> None:
    """The equal-budget comparison (distill.match_budget) compares like with like: the margin runs
    and the distilled ones train, select their checkpoint (dev retrieval at the training length) and
    are scored (evaluation.max_length) at one length."""
    lengths = {
        f"{family}.training.max_length": margin_length,
        f"{family}.distill.training.max_length": distill_length,
        "evaluation.max_length": scoring_length,
    }
    if len(set(lengths.values())) > 1:
        said = ", ".join(f"{key} {value}" for key, value in lengths.items())
        raise XltError(
            f"{family}.distill.match_budget compares the objectives at one length, but {said}: set them equal"
        )
