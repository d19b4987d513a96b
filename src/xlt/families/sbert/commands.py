"""`xlt train-sbert`: siamese NLI training of a sentence encoder (SBERT-style).

Both sentences of an NLI pair go through the same encoder; their pooled vectors u, v feed
a softmax classifier over (u, v, |u-v|). Word embeddings stay frozen by default (the seed
experiment's setting: the vocabulary of languages never seen in training keeps its
pretrained vectors); `--freeze-depth` freezes more. The checkpoint with the best dev score
is kept: Spearman of cosine similarity on an STS dev set when given, else NLI dev accuracy.
The family's runs are scored by the shared `xlt eval-embeddings` (xlt.evaluate.commands).
"""

from __future__ import annotations

from xlt.core.choices import POOLING_MODES
from xlt.core.train_args import add_freeze_depth_argument, add_train_arguments
from xlt.core.verbs import Verb, add_model_argument, add_run_arguments, family_group

GROUP = family_group("sbert", "train an SBERT-style sentence encoder on NLI (`eval-embeddings` scores it)")


def _train_sbert_arguments(p):
    add_model_argument(p)
    p.add_argument("--train", required=True, help="normalised NLI JSONL (text, text_pair, label)")
    dev = p.add_mutually_exclusive_group(required=True)
    dev.add_argument("--dev-sts", help="normalised STS JSONL (text, text_pair, score): selects by cosine Spearman")
    dev.add_argument("--dev-nli", help="normalised NLI JSONL: selects by classifier accuracy")
    p.add_argument(
        "--pooling", choices=POOLING_MODES, default="mean", help="how token vectors become one sentence vector"
    )
    p.add_argument("--layer", type=int, default=-1, help="hidden-state index to pool (-1 last, -2 second-to-last)")
    p.add_argument(
        "--prompt",
        default="",
        help="text put before every sentence in training, dev selection and the "
        "dev score, e.g. 'query: ' for E5 (the config's models.<name>.prompt, which its evaluation jobs get "
        "too; default none)",
    )
    add_freeze_depth_argument(p)
    p.add_argument("--train-word-embeddings", action="store_true", help="train the word embeddings (frozen by default)")
    p.add_argument("--use-product", action="store_true", help="add u*v to the classifier features")
    p.add_argument("--out", required=True, help="run directory: model/ and train.json are written there")
    p.add_argument(
        "--checkpoint-dir",
        default=None,
        help="resumable training state (default: OUT/checkpoint, not an output); removed once the outputs exist",
    )
    add_run_arguments(p, "--run-id", "--axes", run_id_default="the --out directory's name")
    add_train_arguments(p)


VERBS = {
    "train-sbert": Verb(
        "xlt.families.sbert.train_sbert:main",
        "Siamese NLI training of a sentence encoder (softmax over u, v, |u-v|), SBERT-style",
        _train_sbert_arguments,
    )
}
