"""`xlt toy-train`: a few steps of a two-class classifier on the toy family's hub data, through
the shared training loop."""

from __future__ import annotations

import datasets

from xlt.core.classification import classification_loss, make_collate
from xlt.core.metrics import MetricsFile, parse_axes
from xlt.core.models import load_classifier, load_tokenizer, require_model_files
from xlt.core.train_args import train_args_from
from xlt.core.train_inputs import Objective
from xlt.core.training import result_meta, seed_everything, train


def main(args) -> None:
    targs = train_args_from(args)
    rows = datasets.load_dataset(args.data, split="train")  # the cache `xlt prefetch` or `xlt rehearse` filled
    examples = [{"text": row["text"], "label": int(row["label"])} for row in rows]
    require_model_files(args.model)
    tokenizer = load_tokenizer(args.model)
    seed_everything(targs.seed)  # the new head's initial weights
    model = load_classifier(args.model, 2)
    result = train(model, Objective(examples, make_collate(tokenizer, targs.max_length), classification_loss), targs)
    out = MetricsFile("toyfam", args.run_id, axes=parse_axes(args.axes), meta=result_meta(result, targs))
    out.add("train_loss", result.curve[-1]["loss"], split="train")
    out.curve = result.curve
    out.write(args.out)
