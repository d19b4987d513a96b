"""Tokens a job computes per example: its data's length distribution, padded as the loop pads.

Every collate pads a batch to its longest example (dynamic padding, `padding=True`), truncated
at the job's --max-length; with `length_bucketing` a batch holds examples of similar length.
So a batch of B examples costs B x (its longest example) tokens, not B x --max-length:
- random batches: E[longest of B] = integral of Q(u) B u^(B-1) du, Q the length quantiles;
- bucketed batches (xlt.core.bucketing): the mean length times BUCKETED_OVER_USEFUL, measured.
Lengths come from the prepared data's info.json (`xlt prepare-data --tokenizer`,
xlt.data.token_lengths) once the data step has run, else from KNOWN_LENGTHS, measured on
real text by benchmarks/padding.py; a dataset in neither is planned at --max-length.
On a CUDA device the loop also rounds each batch's width up to a multiple of 8 (xlt.core.padding):
about 3.5 tokens an example more (3.3 measured at XNLI-like lengths, BENCHMARKS.md 2026-11-28),
left out here: at the paper's shapes it moves a step's FLOP time by about 5 % and its time by
under 1 %, the per-step overhead being most of a step.
"""

from __future__ import annotations

import json
from pathlib import Path

from xlt.core.plan import RESULTS, data_info
from xlt.cost.constants import value

# Untruncated WordPiece lengths ([CLS] and [SEP] included) per hub dataset, for planning before
# the data exist (xlt.cost.constants says how they were measured); a dataset not listed (whole
# Wikipedia articles, the CLS reviews) is planned at --max-length.
KNOWN_LENGTHS: dict[str, dict] = value("known_lengths")
# length_bucketing sorts by a whitespace-word proxy (xlt.core.bucketing.example_length), not by
# tokens, so a bucketed batch still spreads: padded tokens over useful ones, measured
BUCKETED_OVER_USEFUL = value("bucketed_over_useful")


def quantile(summary: dict, u, max_length: int):
    """The length at quantile(s) u (0..1) of a summary (xlt.data.token_lengths.summarize),
    linearly interpolated between its percentiles and truncated at `max_length`."""
    import numpy as np  # deferred: numpy: only where arrays are made

    points = sorted((float(p) / 100, float(v)) for p, v in summary["percentiles"].items())
    return np.minimum(np.interp(u, [p for p, _ in points], [v for _, v in points]), max_length)


def padded_length(
    summary: dict | None, max_length: int, batch_size: int, bucketing: bool = False, grid: int = 4000
) -> float:
    """Tokens a batch of `batch_size` is padded to, per example: E[longest of the batch] for random
    batches, the mean length x BUCKETED_OVER_USEFUL for bucketed ones; `max_length` without a summary."""
    import numpy as np  # deferred: numpy: only where arrays are made

    if summary is None:
        return float(max_length)
    # midpoint rule over u in (0, 1) of Q(u) d(u^B), the distribution of the longest of B draws
    edges = np.linspace(0.0, 1.0, grid + 1)
    midpoints = quantile(summary, (edges[:-1] + edges[1:]) / 2, max_length)
    longest = float((midpoints * np.diff(edges ** max(int(batch_size), 1))).sum())
    if bucketing:  # never below the data's own tokens, never above unsorted batches
        return min(longest, float(midpoints.mean()) * BUCKETED_OVER_USEFUL)
    return longest


def useful_length(summary: dict | None, max_length: int) -> float:
    """Mean length after truncation at `max_length` (the tokens a padding-free store keeps)."""
    return padded_length(summary, max_length, 1)


def prepared_lengths(dataset: str, split: str, root: str | Path = ".") -> dict | None:
    """The sample `xlt prepare-data --tokenizer` recorded for a split ({form: summary}), or None."""
    info = Path(root) / data_info(dataset)
    if not info.is_file():
        return None
    return json.loads(info.read_text()).get("token_lengths", {}).get(split) or None


def length_summaries(config: dict, dataset: str, split: str) -> tuple[dict | None, str]:
    """({form: summary} or None, where it came from) of a configured dataset's split."""
    prepared = prepared_lengths(dataset, split)
    if prepared:
        return prepared, f"{RESULTS}/data/{dataset}/info.json ({prepared.get('tokenizer', '?')})"
    path = config["datasets"].get(dataset, {}).get("path")
    if path in KNOWN_LENGTHS:
        return KNOWN_LENGTHS[path], f"xlt.cost.tokens.KNOWN_LENGTHS[{path!r}]"
    return None, "--max-length (no length sample)"


def example_tokens(
    summaries: dict | None,
    forms: tuple[str, ...],
    max_length: int,
    batch_size: int,
    bucketing: bool = False,
    padded: bool = True,
) -> float:
    """Tokens the encoder runs per example: the padded lengths of its inputs (`forms`, the job's
    family says them: xlt.core.family_plan.token_forms) summed, or without `padded` their mean
    length (the padding-free part)."""
    if summaries is None:
        return float(max_length)
    forms = [f for f in forms if f in summaries] or ["pair"]
    if "pair" in forms and "pair" not in summaries:
        return float(max_length)
    if not padded:
        return sum(useful_length(summaries[f], max_length) for f in forms)
    return sum(padded_length(summaries[f], max_length, batch_size, bucketing) for f in forms)
