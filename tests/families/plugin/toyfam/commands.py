"""`xlt toy-eval`: the toy family's one verb, run by toy_eval.py."""

from __future__ import annotations

from xlt.core.verbs import Verb, add_run_arguments, family_group

GROUP = family_group("toyfam", "a biased coin calls the toy family's labels")


def _arguments(p) -> None:
    add_run_arguments(p, "--run-id", "--axes")
    p.add_argument("--bias", type=float, required=True, help="probability of flipping each label")
    p.add_argument("--seed", type=int, required=True)
    p.add_argument("--examples", type=int, required=True)
    p.add_argument("--out", required=True, help="metrics JSON")


VERBS = {
    "toy-eval": Verb("xlt.families.toyfam.toy_eval:main", "Call the toy family's labels with a biased coin", _arguments)
}
