"""`xlt perplexity`: a masked LM's perplexity on fixed-masked evaluation sets, per language (and
word-level NLL, with --pll-sentences)."""

from __future__ import annotations

import logging

from xlt.core.errors import XltError
from xlt.core.metrics import MetricsFile, parse_axes
from xlt.core.models import load_tokenizer, pick_device
from xlt.core.padding import pad_multiple
from xlt.families.adapt.mlm import (
    FixedMasking,
    load_masked_lm,
    perplexity,
    perplexity_examples,
    read_text_langs,
    read_texts,
)
from xlt.families.adapt.word_level import word_level_settings
from xlt.families.adapt.word_nll import spread_subset, word_nll, word_nll_records

log = logging.getLogger(__name__)


def _validate_perplexity(args) -> tuple[list[str], dict]:
    """(language per --data file, meta.axes), checked before any model loads."""

    missing = [str(p) for p in args.data if not p.is_file()]
    if missing:
        raise XltError(f"data file(s) not found: {', '.join(missing)}")
    if args.langs is not None and len(args.langs) != len(args.data):
        raise XltError(
            f"--langs has {len(args.langs)} entries but --data has {len(args.data)} files; "
            "give one language per file, in the same order, or omit --langs"
        )
    if args.max_sentences is not None and args.max_sentences < 1:
        raise XltError(f"--max-sentences must be at least 1, got {args.max_sentences}")
    if not 0.0 < args.mlm_probability < 1.0:
        raise XltError(f"--mlm-probability must be in (0, 1), got {args.mlm_probability}")
    word_level_settings(args)
    axes = parse_axes(args.axes)
    langs = args.langs or [p.resolve().parent.name for p in args.data]
    if len(set(zip(langs, (p.stem for p in args.data)))) != len(langs):
        raise XltError(
            f"two --data files share language and split {list(zip(langs, (p.stem for p in args.data)))}; "
            "their metrics would be indistinguishable"
        )
    return langs, axes


def main(args):
    langs, axes = _validate_perplexity(args)
    corpora = [read_texts(path, args.max_sentences) for path in args.data]
    device = pick_device(args.device)
    tokenizer = load_tokenizer(args.model)
    model = load_masked_lm(args.model).to(device)
    metrics = MetricsFile(
        family=args.family,
        run_id=args.run_id or args.out.parent.name,
        axes=axes,
        meta={
            "model": args.model,
            "mask_seed": args.mask_seed,
            "mlm_probability": args.mlm_probability,
            "max_length": args.max_length,
            "word_nll": {"sentences": args.pll_sentences, "words": args.pll_words},
            "files": {},
        },
    )
    word_level = word_level_settings(args)
    for path, lang, texts in zip(args.data, langs, corpora):
        fixed = FixedMasking(
            tokenizer, texts, seed=args.mask_seed, mlm_probability=args.mlm_probability, max_length=args.max_length
        )
        result = perplexity(model, fixed.batches(args.batch_size, pad_multiple(device)), device, per_sentence=True)
        dims = {"lang": lang, "split": path.stem}
        metrics.add("perplexity", result.perplexity, **dims)
        metrics.add("mlm_loss", result.loss, **dims)
        metrics.add("masked_tokens", result.tokens, **dims)
        if word_level is not None:  # the tokenizer-independent counterpart (word_nll)
            text_langs = read_text_langs(path, lang)[: len(texts)]
            scored = word_nll(
                model,
                tokenizer,
                spread_subset(texts, word_level.sentences),
                word_level.max_words,
                args.max_length,
                args.batch_size,
                device,
                spread_subset(text_langs, word_level.sentences),
            )
            metrics.extend(word_nll_records(scored, word_level.max_unk_share, **dims))
        metrics.examples.append(perplexity_examples(result, fixed, **dims))
        metrics.meta["files"][str(path)] = {
            "lang": lang,
            "sentences": len(texts),
            "mask_fingerprint": fixed.fingerprint,
        }
        log.info("%s (%s): perplexity %.4f over %d masked tokens", path, lang, result.perplexity, result.tokens)
    metrics.write(args.out)
