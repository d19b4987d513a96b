"""Token lengths of a prepared dataset, sampled with a real tokenizer, for `xlt plan`.

A job pads each batch to its longest example (dynamic padding), so what it computes depends on
the data's length distribution, not on --max-length. `xlt prepare-data --tokenizer MODEL`
records a seeded sample of each split's lengths in info.json; xlt.cost.tokens turns it into
the tokens a batch is padded to. Lengths are untruncated (every job truncates at its own
--max-length) and count the tokenizer's special tokens ([CLS] ... [SEP]).

Three forms of an example, as the families feed them to the encoder:
- "pair": text and text_pair as one input (cross-encoders: NLI classifiers);
- "text", "text_pair": each field alone (siamese and dual encoders, MLM corpora).
"""

from __future__ import annotations

import random
from typing import Sequence

# percentiles a summary keeps: dense at the top, where the longest example of a batch lies
PERCENTILES = (0, 5, 10, 25, 50, 75, 90, 95, 97.5, 99, 99.5, 100)
SAMPLE_ROWS = 2000  # rows a split's sample holds, pooled over its languages
FIELDS = ("text", "text_pair")


def summarize(lengths: Sequence[int]) -> dict:
    """Mean and PERCENTILES of `lengths` (linear interpolation, numpy's default)."""
    import numpy as np  # deferred: numpy: only where arrays are made

    if not len(lengths):
        raise ValueError("no lengths to summarise")
    values = np.asarray(lengths, dtype=float)
    return {
        "n": int(values.size),
        "mean": round(float(values.mean()), 3),
        "percentiles": {str(p): round(float(np.percentile(values, p)), 3) for p in PERCENTILES},
    }


def lengths(tokenizer, records: Sequence[dict]) -> dict[str, list[int]]:
    """Untruncated token counts of every record in each form it has ("pair" only with a text_pair)."""
    texts = [r["text"] for r in records]
    out = {"text": [len(ids) for ids in tokenizer(texts)["input_ids"]]}
    if records and all(r.get("text_pair") is not None for r in records):
        pairs = [r["text_pair"] for r in records]
        out["text_pair"] = [len(ids) for ids in tokenizer(pairs)["input_ids"]]
        out["pair"] = [len(ids) for ids in tokenizer(texts, pairs)["input_ids"]]
    else:
        out["pair"] = out["text"]  # a single text is its own "pair" input
    return out


def sample(
    records_by_lang: dict[str, Sequence[dict]], tokenizer, tokenizer_name: str, rows: int = SAMPLE_ROWS, seed: int = 0
) -> dict:
    """A seeded sample of up to `rows` records, spread evenly over the languages, summarised per form."""
    rng = random.Random(seed)
    per_lang = max(1, rows // max(1, len(records_by_lang)))
    chosen = []
    for lang in sorted(records_by_lang):
        records = list(records_by_lang[lang])
        chosen += rng.sample(records, min(per_lang, len(records)))
    chosen = [r for r in chosen if isinstance(r.get("text"), str)]
    if not chosen:
        return {}
    forms = lengths(tokenizer, chosen)
    return {"tokenizer": tokenizer_name, **{form: summarize(values) for form, values in forms.items()}}
