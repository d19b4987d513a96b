"""`xlt make-bucc`: write BUCC-layout mining files ({src}-{tgt}.{split}.{src|tgt|gold}).

Two sources (see xlt.data.bucc):
  --bitext SPLIT=FILE   one split per bitext JSONL file: gold pairs plus unpaired
                        distractor sentences taken from the file's other pairs (offline demo)
  --hub-dataset ID      BUCC from the Hugging Face hub (mteb/bucc-bitext-mining, one split),
                        divided into a tuning and a test split
`xlt mine --bucc-dir OUT --pair PAIR` reads the result.
"""
from __future__ import annotations

import zlib
from pathlib import Path

from xlt.core.errors import XltError

HELP = "Write BUCC-layout mining files from bitext (gold pairs + non-parallel distractors) or from the hub's BUCC"


def add_arguments(p) -> None:
    p.add_argument("--pair", required=True, help="SRC-TGT as in the file names, e.g. qaa-en or de-en")
    p.add_argument("--out", required=True, help="directory for the BUCC-layout files")
    source = p.add_mutually_exclusive_group(required=True)
    source.add_argument("--bitext", action="append", metavar="SPLIT=FILE.jsonl",
                        help="build split SPLIT from this normalised bitext (text = SRC side, text_pair = TGT side); repeatable")
    source.add_argument("--hub-dataset", help="hub dataset in mteb/bucc-bitext-mining's format (config = pair)")
    p.add_argument("--gold-fraction", type=float, default=0.5,
                   help="bitext: share of pairs kept as gold pairs; the rest become one-sided distractors (default 0.5)")
    p.add_argument("--hub-split", default="test", help="hub: the dataset split to read (default test)")
    p.add_argument("--revision", default=None, help="hub: dataset revision")
    p.add_argument("--tune-fraction", type=float, default=0.2, help="hub: share of the data in the tuning split (default 0.2)")
    p.add_argument("--split-names", default="dev,test", help="hub: names of the tuning and test splits written (default dev,test)")
    p.add_argument("--seed", type=int, default=1)


def parse_bitext_args(values: list[str]) -> list[tuple[str, str]]:
    out = []
    for value in values:
        split, eq, path = value.partition("=")
        if not eq or not split or not path or "." in split or "/" in split:
            raise XltError(f"--bitext {value!r}: expected SPLIT=FILE.jsonl, e.g. dev=results/data/demo-bitext/qaa/dev.jsonl")
        if not Path(path).is_file():
            raise XltError(f"--bitext {value!r}: file {path} does not exist; write it with `xlt prepare-data`")
        out.append((split, path))
    splits = [s for s, _ in out]
    if len(set(splits)) != len(splits):
        raise XltError(f"--bitext names a split twice: {', '.join(splits)}")
    return out


def run(args) -> None:
    from xlt.data.bucc import bucc_from_bitext, split_bucc
    from xlt.evaluate.mining import parse_pair, write_bucc_split

    parse_pair(args.pair)
    if args.bitext:
        from xlt.evaluate.alignment import bitexts_from_records
        from xlt.core.io import read_jsonl

        splits = []
        for split, path in parse_bitext_args(args.bitext):
            bitext = bitexts_from_records(args.pair, read_jsonl(path), origin=path)
            seed = zlib.crc32(f"{args.seed}/{split}".encode())
            splits.append(bucc_from_bitext(bitext.texts, bitext.english, args.pair, split, args.gold_fraction, seed))
    else:
        from xlt.evaluate.mining import load_bucc_from_hub

        names = tuple(n.strip() for n in args.split_names.split(","))
        if len(names) != 2 or not all(names) or names[0] == names[1]:
            raise XltError(f"--split-names {args.split_names!r}: give two different names, e.g. dev,test")
        data = load_bucc_from_hub(args.pair, dataset=args.hub_dataset, split=args.hub_split, revision=args.revision)
        splits = list(split_bucc(data, args.tune_fraction, args.seed, names))
    for data in splits:
        write_bucc_split(data, args.out)
        print(f"{data.pair} {data.split}: {len(data.src_ids)} {data.src_lang}, {len(data.tgt_ids)} {data.tgt_lang}, "
              f"{len(data.gold)} gold pairs")
