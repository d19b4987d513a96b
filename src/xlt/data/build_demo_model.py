"""`xlt build-demo-model`: the demo's small BERT-style model and tokenizer, built offline from the demo world."""

from __future__ import annotations

from pathlib import Path

from xlt.core import monitor
from xlt.core.errors import XltError
from xlt.core.io import write_json
from xlt.data.demo_model import build_demo_model


def main(args):
    if args.tensorboard and not args.run_dir:
        raise XltError(
            "--tensorboard true writes the pretraining's curves into --run-dir; pass one "
            "(the workflow's: results/runs/demo_models/NAME) or --tensorboard false"
        )
    # its curves like every training's; the model's name is its one axis
    with monitor.run(args.tensorboard, args.run_dir or "", {"model": Path(args.out).name}, vars(args)):
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
