"""The training budget of a dual run, `sentences_seen`: optimiser steps x sentences a step.

The objectives are compared at equal budget (issue 35): an additive-margin step embeds 2 x batch
sentences (each pair's two sides), a distilled step 2 x batch (`pairs` examples) or batch
(`sentences` examples, make_multilingual.py's). The plan records the budget as the run's axis
`sentences_seen`, planned from the training data's declared sizes (the dataset's `sizes`, else
its `max_rows` capped by the hub's published rows): config values only, so a job's arguments do
not change once the data are prepared. A language with fewer rows than declared trains fewer
steps; train.json records what the run saw (`sentences_seen` in its meta).

`distill.match_budget` adds a distilled run trained for the additive-margin runs' budget
(`max_steps` = that budget / the distilled step's sentences), so the objectives meet at equal
budget as well as at their own recipes'.
"""

from __future__ import annotations

from xlt.core.errors import XltError
from xlt.cost.data_size import KNOWN_ROWS
from xlt.cost.formulas import optimizer_steps

AXIS = "sentences_seen"


def planned_rows(config: dict, dataset: str, split: str) -> int | None:
    """Rows per language of a split from the config alone, or None when it does not say."""
    spec = config["datasets"].get(dataset, {})
    if split in spec.get("sizes", {}):
        return int(spec["sizes"][split])
    known = KNOWN_ROWS.get((spec.get("path"), split))
    if known is not None:
        return min(known, spec["max_rows"]) if "max_rows" in spec else known
    return spec.get("max_rows")


def training_examples(config: dict, family: str, examples: str = "pairs", per_language: int = 0) -> int | None:
    """Training examples of an epoch: pairs of every language (at most `per_language` each, 0 no
    cap), twice as many with `sentences` examples (an upper bound: a language's repeated English
    sentences count once there); None when the data's sizes are not declared."""
    train = config[family]["train"]
    counts = [planned_rows(config, train["dataset"], train.get("split", "train")) for _ in train["langs"]]
    if None in counts:
        return None
    pairs = sum(min(n, per_language) if per_language else n for n in counts)
    return pairs * (2 if examples == "sentences" else 1)


def sentences_a_step(batch_size: int, examples: str = "pairs") -> int:
    return batch_size * (1 if examples == "sentences" else 2)


def sentences_seen(
    config: dict, family: str, training: dict, batch_size: int, examples: str = "pairs", per_language: int = 0
) -> int | None:
    """The planned budget of a run with these training settings, or None (sizes not declared)."""
    n = training_examples(config, family, examples, per_language)
    if n is None and not training.get("max_steps"):
        return None
    steps = optimizer_steps(n or 0, training.get("epochs", 1.0), training.get("max_steps", 0), batch_size)
    return steps * sentences_a_step(batch_size, examples)


def matched_steps(budgets: list[int | None], batch_size: int, examples: str, where: str) -> int:
    """Optimiser steps of a distilled run that sees the additive-margin runs' one budget."""
    distinct = sorted(set(budgets), key=str)
    if not distinct or None in distinct:
        raise XltError(
            f"{where}: the additive-margin runs' budget is unknown; declare the training dataset's "
            "sizes (datasets.<name>.sizes.train or max_rows), or drop match_budget"
        )
    if len(distinct) > 1:
        raise XltError(
            f"{where}: the additive-margin runs have several budgets ({', '.join(map(str, distinct))} "
            "sentences); a matched run needs one: sweep one batch size, or drop match_budget"
        )
    per_step = sentences_a_step(batch_size, examples)
    if distinct[0] % per_step:
        raise XltError(
            f"{where}: the additive-margin budget, {distinct[0]} sentences, is no whole number of "
            f"distilled steps of {per_step} sentences; pick a batch size that divides it"
        )
    return distinct[0] // per_step
