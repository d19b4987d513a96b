"""`xlt toy-eval`: the toy family's one verb."""

from __future__ import annotations

from xlt.core.verbs import Verb, add_run_arguments, family_group

GROUP = family_group("toyfam", "a biased coin calls the toy family's labels")


def _arguments(p) -> None:
    add_run_arguments(p, "--run-id", "--axes")
    p.add_argument("--bias", type=float, required=True, help="probability of flipping each label")
    p.add_argument("--seed", type=int, required=True)
    p.add_argument("--examples", type=int, required=True)
    p.add_argument("--out", required=True, help="metrics JSON")


def _toy_eval(args) -> None:
    import random

    from xlt.core.metrics import MetricsFile, example_set, parse_axes

    gold = [random.Random(0).randint(0, 1) for _ in range(args.examples)]  # the same labels in every run
    rng = random.Random(args.seed)
    prediction = [1 - label if rng.random() < args.bias else label for label in gold]
    accuracy = sum(p == g for p, g in zip(prediction, gold)) / len(gold)
    out = MetricsFile("toyfam", args.run_id, axes=parse_axes(args.axes), manifest=False)
    out.add("accuracy", accuracy, lang="en", split="test")
    out.examples.append(
        example_set("classification", "accuracy", prediction=prediction, gold=gold, lang="en", split="test")
    )
    out.write(args.out)


VERBS = {"toy-eval": Verb("Call the toy family's labels with a biased coin", _arguments, _toy_eval)}
