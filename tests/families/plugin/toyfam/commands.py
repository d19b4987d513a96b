"""`xlt toy-train` and `xlt toy-eval`: the toy family's verbs."""

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


def _train_arguments(p) -> None:
    from xlt.core.train_args import add_train_arguments

    add_run_arguments(p, "--run-id", "--axes")
    p.add_argument("--model", required=True, help="the model to train (a demo model's directory)")
    p.add_argument("--data", required=True, help="hub dataset of (text, label) rows, read from the cache")
    p.add_argument("--out", required=True, help="metrics JSON (its training curve is written beside it)")
    add_train_arguments(p)


def _toy_train(args) -> None:
    """A few steps of a two-class classifier on the hub data, through the shared training loop."""
    import datasets

    from xlt.core.classification import classification_loss, make_collate
    from xlt.core.metrics import MetricsFile, parse_axes
    from xlt.core.models import load_classifier, load_tokenizer, require_model_files
    from xlt.core.train_args import train_args_from
    from xlt.core.training import result_meta, seed_everything, train

    targs = train_args_from(args)
    rows = datasets.load_dataset(args.data, split="train")  # the cache `xlt prefetch` or `xlt rehearse` filled
    examples = [{"text": row["text"], "label": int(row["label"])} for row in rows]
    require_model_files(args.model)
    tokenizer = load_tokenizer(args.model)
    seed_everything(targs.seed)  # the new head's initial weights
    model = load_classifier(args.model, 2)
    result = train(model, examples, make_collate(tokenizer, targs.max_length), classification_loss, targs)
    out = MetricsFile("toyfam", args.run_id, axes=parse_axes(args.axes), meta=result_meta(result, targs))
    out.add("train_loss", result.curve[-1]["loss"], split="train")
    out.curve = result.curve
    out.write(args.out)


VERBS = {
    "toy-train": Verb("Train the demo model a few steps on the toy family's hub data", _train_arguments, _toy_train),
    "toy-eval": Verb("Call the toy family's labels with a biased coin", _arguments, _toy_eval),
}
