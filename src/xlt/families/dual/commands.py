"""`xlt train-dual` and `xlt dual-prefix-states` (and, from mining_commands, `make-bucc` and `mine`):
the dual-encoder family's jobs.

train-dual: each --train / --dev file is normalised bitext JSONL (text = non-English side,
text_pair = English); its language is the file's parent directory name
(results/data/{dataset}/{lang}/{split}.jsonl) unless --train-langs / --dev-langs name them.
With --freeze-depth N >= 0, --cache-frozen-prefix runs the frozen layers once per distinct
training sentence and --prefix-states reads them from the store `xlt dual-prefix-states`
writes once for every depth of a sweep (xlt.families.dual.prefix: semantics and checks).

make-bucc and mine live in xlt.families.dual.mining_commands.
"""

from __future__ import annotations

import logging

from xlt.core.choices import DEFAULT_MATCH, MATCH_RULES, POOLING_MODES
from xlt.core.train_args import (
    add_frozen_prefix_arguments,
    add_run_dir_arguments,
    add_store_arguments,
    add_train_arguments,
)
from xlt.core.verbs import Verb, add_model_argument, family_group
from xlt.families.dual.choices import DUAL_OBJECTIVES, DUAL_SYMMETRIC
from xlt.families.dual.mining_commands import VERBS as MINING_VERBS

GROUP = family_group("dual", "train a LaBSE-style dual encoder; mine parallel sentences BUCC-style")

log = logging.getLogger(__name__)


# ---------------------------------------------------------------- train-dual


def _train_dual_arguments(p) -> None:
    add_model_argument(p, "of the encoder to start from")
    p.add_argument(
        "--train", action="append", required=True, metavar="FILE.jsonl", help="bitext for training; repeat per language"
    )
    p.add_argument(
        "--dev",
        action="append",
        required=True,
        metavar="FILE.jsonl",
        help="bitext for best-checkpoint selection (retrieval accuracy); repeat per language",
    )
    p.add_argument(
        "--match",
        choices=MATCH_RULES,
        default=DEFAULT_MATCH,
        help="dev retrieval correctness, the Tatoeba test's rule (`xlt eval-embeddings --match`): "
        "index = the retrieved sentence is the gold one (default); text = an equal string at "
        "another index counts",
    )
    p.add_argument("--train-langs", help="comma-separated codes, one per --train (default: parent directory names)")
    p.add_argument("--dev-langs", help="comma-separated codes, one per --dev (default: parent directory names)")
    p.add_argument(
        "--objective",
        choices=DUAL_OBJECTIVES,
        default=DUAL_OBJECTIVES[0],
        help="additive_margin: LaBSE's in-batch softmax (default); mse_distill: the student's vectors of "
        "both sides regress onto a fixed --teacher's vector of the English side (Reimers & Gurevych "
        "2020; --margin, --scale and --symmetric do not apply)",
    )
    p.add_argument(
        "--teacher",
        default=None,
        help="mse_distill: hub id or local directory of the teacher sentence "
        "encoder (e.g. an sbert run's model directory); it embeds each distinct English sentence once",
    )
    p.add_argument(
        "--teacher-pooling",
        default=None,
        choices=POOLING_MODES,
        help="mse_distill: the teacher's pooling (default: what its directory recorded, else mean)",
    )
    p.add_argument(
        "--teacher-layer",
        type=int,
        default=None,
        help="mse_distill: the teacher's pooled hidden state (default: what its directory recorded, else -1)",
    )
    p.add_argument(
        "--distill-examples",
        choices=("pairs", "sentences"),
        default="pairs",
        help="mse_distill: an example is a translation pair (both sides, default) or one sentence, "
        "as make_multilingual.py's ParallelSentencesDataset (the English one and each translation)",
    )
    p.add_argument(
        "--max-sentences-per-language",
        type=int,
        default=0,
        help="mse_distill: the first N training pairs of each language (after --max-sentence-chars); 0 = all",
    )
    p.add_argument(
        "--max-sentence-chars",
        type=int,
        default=0,
        help="mse_distill: skip a training pair with a side longer than N characters; 0 = no limit",
    )
    p.add_argument(
        "--margin", type=float, default=0.3, help="additive margin taken off the positive pairs' cosine (LaBSE 0.3)"
    )
    p.add_argument("--scale", type=float, default=10.0, help="cosine scale before the softmax (LaBSE 10)")
    p.add_argument(
        "--pooling", default="mean", choices=POOLING_MODES, help="sentence vector from the last layer (default mean)"
    )
    p.add_argument(
        "--prompt",
        default="",
        help="text put before every sentence in training, dev selection and the "
        "dev records, e.g. 'query: ' for E5 (the config's models.<name>.prompt, which its evaluation jobs get "
        "too; default none)",
    )
    p.add_argument(
        "--symmetric",
        default="sum",
        choices=DUAL_SYMMETRIC,
        help="combine the two directions' cross-entropies: sum (LaBSE) or mean (default sum)",
    )
    add_frozen_prefix_arguments(
        p,
        cache_help="run the frozen layers once per distinct training sentence (eval mode: no dropout below the "
        "boundary; at the training's --precision) and train only the layers above; needs "
        "--freeze-depth >= 0",
        store_help="read the frozen layers' output from this store (`xlt dual-prefix-states`, one pass for the "
        "whole sweep) instead of computing it; --cache-frozen-prefix's semantics",
    )
    add_run_dir_arguments(p)
    add_train_arguments(p)


# ---------------------------------------------------------------- dual-prefix-states


def _dual_prefix_states_arguments(p) -> None:
    add_model_argument(p, "(the sweep's pretrained encoder)")
    p.add_argument(
        "--train",
        action="append",
        required=True,
        metavar="FILE.jsonl",
        help="the train-dual jobs' --train files, in their order; repeat per language",
    )
    p.add_argument("--prompt", default="", help="the train-dual jobs' --prompt: text put before every sentence")
    add_store_arguments(p, "train-dual", "dual.prefix_states")


VERBS = {
    "train-dual": Verb(
        "xlt.families.dual.train_dual:main",
        "Train a dual encoder (shared encoder, additive-margin softmax over in-batch negatives); "
        "keep the best dev retrieval checkpoint",
        _train_dual_arguments,
    ),
    "dual-prefix-states": Verb(
        "xlt.families.dual.prefix_states:main",
        "Store the frozen-prefix hidden states of the dual training sentences at every freeze "
        "depth of the sweep in one pass (frozen layers in eval mode, under the train-dual "
        "jobs' autocast)",
        _dual_prefix_states_arguments,
    ),
    **MINING_VERBS,
}
