"""`xlt <verb> ...`: the command line that every Snakemake rule calls.

Each verb lives in `xlt/commands/<verb>.py` and defines `HELP`, `add_arguments(parser)` and
`run(args)`. Every verb runs on its own, outside Snakemake, and prints the exact command
line first so a single job can be rerun by hand from its log.
"""
from __future__ import annotations

import argparse
import importlib
import logging
import shlex
import sys

from xlt.core.errors import XltError

# verb -> module under xlt.commands; imported lazily so `xlt --help` stays fast
COMMANDS = {
    "build-demo-model": "build_demo_model",
    "prepare-data": "prepare_data",
    "finetune": "finetune",
    "evaluate": "evaluate",
    "aggregate": "aggregate",
    "plot": "plot",
    "sweep": "sweep",
    "perplexity": "perplexity",
    "compare-layers": "compare_layers",
    "align": "align",
    "mine": "mine",
    "eval-embeddings": "eval_embeddings",
    "train-sbert": "train_sbert",
    "prefetch": "prefetch",
    "adapt-mlm": "adapt_mlm",
    "sample-texts": "sample_texts",
    "adapt-summary": "adapt_summary",
    "monox-split": "monox_split",
    "train-teacher": "train_teacher",
    "distill": "distill",
    "monox-table": "monox_table",
    "bench": "bench",
    "train-dual": "train_dual",
    "make-bucc": "make_bucc",
}


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The full parser, or with `only` just that verb's: a job then imports its own verb's
    module and not every family's (which pulled torch, transformers and seaborn into every
    `xlt aggregate` and `xlt plot` job: ~3.5 CPU-s each, BENCHMARKS.md)."""
    parser = argparse.ArgumentParser(prog="xlt", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="verb", required=True, metavar="VERB")
    for verb, module_name in COMMANDS.items():
        if only is not None and verb != only:
            continue
        module = importlib.import_module(f"xlt.commands.{module_name}")
        p = sub.add_parser(verb, help=module.HELP, description=module.HELP)
        module.add_arguments(p)
        p.set_defaults(_run=module.run)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s", stream=sys.stderr)
    args = build_parser(argv[0] if argv and argv[0] in COMMANDS else None).parse_args(argv)
    print("rerun: xlt " + shlex.join(argv), file=sys.stderr, flush=True)
    try:
        args._run(args)
    except (XltError, FileNotFoundError) as err:
        print(f"xlt {args.verb}: error: {err}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
