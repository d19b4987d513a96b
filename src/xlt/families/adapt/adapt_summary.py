"""`xlt adapt-summary`: the adapt family's final-perplexity table, one row per run and language."""

from __future__ import annotations

import pandas as pd

from xlt.core.io import atomic_path
from xlt.core.tables import read_table
from xlt.families.adapt.tables import WORD_METRICS, final_perplexity_table, word_nll_table


def main(args):
    table = read_table(args.table)
    summary = final_perplexity_table(table)
    with atomic_path(args.out) as tmp:
        summary.to_csv(tmp, index=False, float_format="%.4f")
    print(summary.to_string(index=False))
    if args.word_nll_out:
        # config adapt.word_nll.sentences 0 scores none: a header-only table, not a failed job
        scored = bool(set(WORD_METRICS) & set(table.metric))
        words = (
            word_nll_table(table) if scored else pd.DataFrame(columns=["metric", "model", "role", "scheme", "seeds"])
        )
        with atomic_path(args.word_nll_out) as tmp:
            words.to_csv(tmp, index=False, float_format="%.4f")
        print(words.to_string(index=False) if scored else "no NLL per word records (--pll-sentences 0)")
