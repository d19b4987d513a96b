"""`xlt make-bucc` and `xlt mine`: the dual-encoder family's BUCC-style mining jobs.

make-bucc writes BUCC-layout mining files ({src}-{tgt}.{split}.{src|tgt|gold}) from one of
two sources (see xlt.data.bucc):
  --bitext SPLIT=FILE   one split per bitext JSONL file: gold pairs plus unpaired
                        distractor sentences taken from the file's other pairs (offline demo)
  --hub-dataset ID      BUCC from the Hugging Face hub (mteb/bucc-bitext-mining, one split),
                        divided into a tuning and a test split

mine reads such a directory (see xlt.evaluate.mining), embeds both sides of the tuning and
the test split, mines candidates with the ratio margin, tunes the threshold for F1 on the
tuning split and scores the test split with it.
"""

from __future__ import annotations

import logging

from xlt.core.choices import MINING_DEFAULT_K as DEFAULT_K
from xlt.core.choices import MINING_STRATEGIES as STRATEGIES
from xlt.core.choices import POOLING_MODES
from xlt.core.verbs import Verb, add_model_argument, add_run_arguments, key_value
from xlt.data.bucc_files import BITEXT_SPLIT_EXAMPLE
from xlt.evaluate.commands import add_prompt_argument

log = logging.getLogger(__name__)


# ---------------------------------------------------------------- make-bucc


def _make_bucc_arguments(p) -> None:
    p.add_argument("--pair", required=True, help="SRC-TGT as in the file names, e.g. qaa-en or de-en")
    p.add_argument("--out", required=True, help="directory for the BUCC-layout files")
    source = p.add_mutually_exclusive_group(required=True)
    source.add_argument(
        "--bitext",
        action="append",
        metavar="SPLIT=FILE.jsonl",
        type=key_value("SPLIT=FILE.jsonl", BITEXT_SPLIT_EXAMPLE),
        help="build split SPLIT from this normalised bitext (text = SRC side, text_pair = TGT side); repeatable",
    )
    source.add_argument("--hub-dataset", help="hub dataset in mteb/bucc-bitext-mining's format (config = pair)")
    p.add_argument(
        "--gold-fraction",
        type=float,
        default=0.5,
        help="bitext: share of pairs kept as gold pairs; the rest become one-sided distractors (default 0.5)",
    )
    p.add_argument("--hub-split", default="test", help="hub: the dataset split to read (default test)")
    p.add_argument("--revision", default=None, help="hub: dataset revision")
    p.add_argument(
        "--tune-fraction",
        type=float,
        default=0.2,
        help="hub: share of the gold pairs and unpaired sentences "
        "written to the tuning split, whose sources tune the threshold (`mine` pools both splits; default 0.2)",
    )
    p.add_argument(
        "--split-names", default="dev,test", help="hub: names of the tuning and test splits written (default dev,test)"
    )
    p.add_argument(
        "--seed",
        type=int,
        default=1,
        help="seed of the gold/distractor choice (bitext, mixed with the split name) or of the tuning/test split (hub)",
    )


# ---------------------------------------------------------------- mine


def _mine_arguments(parser) -> None:
    add_model_argument(parser)
    parser.add_argument("--bucc-dir", required=True, help="directory with {src}-{tgt}.{split}.{src|tgt|gold} files")
    parser.add_argument("--pair", required=True, help="language pair as in the file names, e.g. de-en")
    parser.add_argument(
        "--tune-split",
        default="dev",
        help="split with gold pairs whose source sentences' candidates "
        "tune the threshold (default dev); both splits are mined as one pool",
    )
    parser.add_argument(
        "--test-split",
        default="test",
        help="split whose source sentences' candidates are scored with the tuned threshold (default test)",
    )
    parser.add_argument("--layer", type=int, default=-1, help="hidden-state index to pool (default -1 = last layer)")
    parser.add_argument(
        "--pooling", default="mean", choices=POOLING_MODES, help="sentence vector from the hidden states (default mean)"
    )
    add_prompt_argument(parser)
    parser.add_argument(
        "--k", type=int, default=DEFAULT_K, help=f"neighbourhood size of the ratio margin (default {DEFAULT_K})"
    )
    parser.add_argument("--strategy", default="max", choices=STRATEGIES, help="candidate extraction (default max)")
    parser.add_argument("--batch-size", type=int, default=64, help="sentences per encoder forward pass (default 64)")
    parser.add_argument(
        "--max-length", type=int, default=128, help="tokens per sentence after truncation (default 128)"
    )
    add_run_arguments(
        parser, "--device", "--run-id", "--axes", "--out-metrics", run_id_default="the --model directory's name"
    )
    parser.add_argument(
        "--out-pairs",
        help="TSV of the test-split pairs predicted parallel: src_id, tgt_id, margin "
        "(a target of the tuning split as '{split}:{id}')",
    )


VERBS = {
    "make-bucc": Verb(
        "xlt.families.dual.make_bucc:main",
        "Write BUCC-layout mining files from bitext (gold pairs + non-parallel distractors) or from the hub's BUCC",
        _make_bucc_arguments,
    ),
    "mine": Verb(
        "xlt.families.dual.mine:main",
        "BUCC-style parallel sentence mining (ratio margin over the pooled splits, threshold F1-tuned on "
        "the tuning split's sources): precision/recall/F1",
        _mine_arguments,
    ),
}
