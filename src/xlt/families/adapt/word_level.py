"""The word-level pseudo-log-likelihood settings of `xlt adapt-mlm` and `xlt perplexity`
(--pll-sentences, --pll-words, --max-unk-share), checked before any model loads."""

from __future__ import annotations

from xlt.core.errors import XltError
from xlt.families.adapt.adaptation import WordNllSettings


def word_level_settings(args):
    if args.pll_sentences < 0 or args.pll_words < 1 or not 0 <= args.max_unk_share < 1:
        raise XltError(
            f"--pll-sentences must be >= 0, --pll-words >= 1 and --max-unk-share in [0, 1), got "
            f"{args.pll_sentences}, {args.pll_words} and {args.max_unk_share}"
        )
    return WordNllSettings(args.pll_sentences, args.pll_words, args.max_unk_share) if args.pll_sentences else None
