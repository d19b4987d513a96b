"""`xlt make-bucc`: BUCC-layout mining files ({src}-{tgt}.{split}.{src|tgt|gold}) from bitext JSONL
splits (gold pairs plus distractors from the file's other pairs) or from the hub's BUCC."""

from __future__ import annotations

import zlib
from pathlib import Path

from xlt.core.errors import XltError
from xlt.core.io import read_jsonl
from xlt.data.bitext_files import bitexts_from_records
from xlt.data.bucc import bucc_from_bitext, split_bucc
from xlt.data.bucc_files import BITEXT_SPLIT_EXAMPLE, load_bucc_from_hub, parse_pair, write_bucc_split


def _check_bitext_args(out: list[tuple[str, str]]) -> list[tuple[str, str]]:
    for split, path in out:
        if "." in split or "/" in split:  # the split names the mining files ({pair}.{split}.src)
            raise XltError(f"--bitext {split}={path}: give SPLIT=FILE.jsonl, e.g. {BITEXT_SPLIT_EXAMPLE}")
        if not Path(path).is_file():
            raise XltError(f"--bitext {split}={path}: file {path} does not exist; write it with `xlt prepare-data`")
    splits = [s for s, _ in out]
    if len(set(splits)) != len(splits):
        raise XltError(f"--bitext names a split twice: {', '.join(splits)}")
    return out


def main(args) -> None:
    parse_pair(args.pair)
    if args.bitext:
        splits = []
        for split, path in _check_bitext_args(args.bitext):
            bitext = bitexts_from_records(args.pair, read_jsonl(path), origin=path)
            seed = zlib.crc32(f"{args.seed}/{split}".encode())
            splits.append(bucc_from_bitext(bitext.texts, bitext.english, args.pair, split, args.gold_fraction, seed))
    else:
        names = tuple(n.strip() for n in args.split_names.split(","))
        if len(names) != 2 or not all(names) or names[0] == names[1]:
            raise XltError(f"--split-names {args.split_names!r}: give two different names, e.g. dev,test")
        data = load_bucc_from_hub(args.pair, dataset=args.hub_dataset, split=args.hub_split, revision=args.revision)
        splits = list(split_bucc(data, args.tune_fraction, args.seed, names))
    for data in splits:
        write_bucc_split(data, args.out)
        print(
            f"{data.pair} {data.split}: {len(data.src_ids)} {data.src_lang}, {len(data.tgt_ids)} {data.tgt_lang}, "
            f"{len(data.gold)} gold pairs"
        )
