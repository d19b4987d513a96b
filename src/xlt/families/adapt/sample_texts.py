"""`xlt sample-texts`: a fixed sample of evaluation sentences from JSONL files (at most N, or as
many as another file has, for size matching)."""

from __future__ import annotations

from xlt.core.errors import XltError
from xlt.core.io import read_jsonl, write_jsonl
from xlt.data.sample import sample_texts


def main(args):
    missing = [str(f) for f in args.data + ([args.size_of] if args.size_of else []) if not f.is_file()]
    if missing:
        raise XltError(f"file(s) not found: {', '.join(missing)}")
    size = len(read_jsonl(args.size_of)) if args.size_of else args.max_size
    records = sample_texts(args.data, size, args.seed, args.fields, exact=args.size_of is not None)
    n = write_jsonl(args.out, records)
    print(f"{n} sentences from {len(args.data)} file(s) -> {args.out}")
