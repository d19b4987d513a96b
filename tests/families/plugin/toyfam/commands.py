"""`xlt toy-train` and `xlt toy-eval`: the toy family's verbs, run by toy_train.py and toy_eval.py."""

from __future__ import annotations

from xlt.core.train_args import add_train_arguments
from xlt.core.verbs import Verb, add_run_arguments, family_group

GROUP = family_group("toyfam", "a biased coin calls the toy family's labels")


def _arguments(p) -> None:
    add_run_arguments(p, "--run-id", "--axes")
    p.add_argument("--bias", type=float, required=True, help="probability of flipping each label")
    p.add_argument("--seed", type=int, required=True)
    p.add_argument("--examples", type=int, required=True)
    p.add_argument("--out", required=True, help="metrics JSON")


def _train_arguments(p) -> None:
    add_run_arguments(p, "--run-id", "--axes")
    p.add_argument("--model", required=True, help="the model to train (a demo model's directory)")
    p.add_argument("--data", required=True, help="hub dataset of (text, label) rows, read from the cache")
    p.add_argument("--out", required=True, help="metrics JSON (its training curve is written beside it)")
    add_train_arguments(p)


VERBS = {
    "toy-train": Verb(
        "xlt.families.toyfam.toy_train:main",
        "Train the demo model a few steps on the toy family's hub data",
        _train_arguments,
    ),
    "toy-eval": Verb(
        "xlt.families.toyfam.toy_eval:main", "Call the toy family's labels with a biased coin", _arguments
    ),
}
