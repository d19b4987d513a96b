"""`xlt monox-split`: MonoX's fixed training subsets of a language's data, one per size."""

from __future__ import annotations

from xlt.core.io import read_jsonl
from xlt.families.monox.data_split import make_split, write_split


def main(args):
    split = make_split(
        read_jsonl(args.train),
        args.seed,
        labelled_fraction=args.labelled_fraction,
        unlabelled=read_jsonl(args.unlabelled) if args.unlabelled else None,
        dev=read_jsonl(args.dev) if args.dev else None,
        dev_fraction=args.dev_fraction,
        name=args.name,
    )
    write_split(split, args.out)
    print(split.meta["counts"])
