HELP = "Draw a fixed evaluation sentence set (seeded, balanced across files) into one JSONL file"


def add_arguments(p):
    from pathlib import Path

    from xlt.data.sample import TEXT_FIELDS

    p.add_argument("--data", required=True, nargs="+", type=Path, help="normalised JSONL files (e.g. one per language)")
    p.add_argument("--fields", nargs="+", default=["text"], choices=TEXT_FIELDS,
                   help="record fields that hold sentences (XNLI: text = premise, text_pair = hypothesis)")
    size = p.add_mutually_exclusive_group(required=True)
    size.add_argument("--max-size", type=int, help="at most this many sentences (all of them when fewer)")
    size.add_argument("--size-of", type=Path, help="exactly as many sentences as this JSONL file has (size matching)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--out", required=True, type=Path)


def run(args):
    from xlt.data.sample import sample_texts
    from xlt.core.errors import XltError
    from xlt.core.io import read_jsonl, write_jsonl

    missing = [str(f) for f in args.data + ([args.size_of] if args.size_of else []) if not f.is_file()]
    if missing:
        raise XltError(f"file(s) not found: {', '.join(missing)}")
    size = len(read_jsonl(args.size_of)) if args.size_of else args.max_size
    records = sample_texts(args.data, size, args.seed, args.fields, exact=args.size_of is not None)
    n = write_jsonl(args.out, records)
    print(f"{n} sentences from {len(args.data)} file(s) -> {args.out}")
