"""`xlt toy-eval`: a biased coin calls the toy family's labels."""

from __future__ import annotations

import random

from xlt.core.metrics import MetricsFile, example_set, parse_axes


def main(args) -> None:
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
