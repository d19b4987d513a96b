HELP = "MonoX: split the source-language data into labelled / unlabelled / dev (seeded, as in the paper)"


def add_arguments(p):
    p.add_argument("--train", required=True, help="normalised JSONL of the source-language training split")
    pool = p.add_mutually_exclusive_group(required=True)
    pool.add_argument("--labelled-fraction", type=float,
                      help="XNLI-style: this fraction of --train keeps its labels, the rest is the unlabelled pool")
    pool.add_argument("--unlabelled", help="CLS-style: normalised JSONL of a separate unlabelled pool")
    dev = p.add_mutually_exclusive_group(required=True)
    dev.add_argument("--dev", help="normalised JSONL of the dev set")
    dev.add_argument("--dev-fraction", type=float, help="CLS-style: hold out this fraction of the labelled data as dev")
    p.add_argument("--seed", type=int, required=True)
    p.add_argument("--name", default="", help="the dataset's name, recorded in split.json")
    p.add_argument("--out", required=True, help="directory: labelled.jsonl, unlabelled.jsonl, dev.jsonl, split.json")


def run(args):
    from xlt.core.io import read_jsonl
    from xlt.families.monox.training import make_split, write_split

    split = make_split(
        read_jsonl(args.train), args.seed, labelled_fraction=args.labelled_fraction,
        unlabelled=read_jsonl(args.unlabelled) if args.unlabelled else None,
        dev=read_jsonl(args.dev) if args.dev else None, dev_fraction=args.dev_fraction, name=args.name)
    write_split(split, args.out)
    print(split.meta["counts"])
