HELP = "Build the offline demo encoder (WordPiece tokenizer + small BERT pretrained with MLM)"


def add_arguments(p):
    p.add_argument("--out", required=True, help="output directory (save_pretrained layout)")
    p.add_argument("--languages", default="mixed,en,qaa,qab,qac", help="demo corpora to pretrain on; mixed = code-switched")
    p.add_argument("--layers", type=int, default=12)
    p.add_argument("--hidden-size", type=int, default=64)
    p.add_argument("--pretrain-steps", type=int, default=300)
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--vocab-size", type=int, default=1000, help="WordPiece vocabulary size; another size gives another tokenizer")


def run(args):
    from xlt.core.demo_model import build_demo_model
    from xlt.core.io import write_json

    info = build_demo_model(args.out, args.languages.split(","), layers=args.layers, hidden_size=args.hidden_size,
                            pretrain_steps=args.pretrain_steps, seed=args.seed, vocab_size=args.vocab_size)
    write_json(f"{args.out}/xlt_demo_model.json", info)
