"""`xlt build-demo-model`: the demo's small BERT-style model and tokenizer, built offline from the demo world."""

from __future__ import annotations

from xlt.core.io import write_json
from xlt.data.demo_model import build_demo_model


def main(args):
    info = build_demo_model(
        args.out,
        args.languages.split(","),
        layers=args.layers,
        hidden_size=args.hidden_size,
        pretrain_steps=args.pretrain_steps,
        seed=args.seed,
        vocab_size=args.vocab_size,
        world=args.world,
    )
    write_json(f"{args.out}/xlt_demo_model.json", info)
