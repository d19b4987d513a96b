"""`xlt train-sbert`: train an SBERT-style sentence encoder on NLI pairs (a softmax classifier over
the pair's pooled vectors), keeping the best dev checkpoint; `xlt eval-embeddings` scores it."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch

from xlt.core import monitor
from xlt.core.checkpoint import model_inputs, remove_checkpoint, run_identity
from xlt.core.errors import XltError
from xlt.core.freezing import count_parameters, freeze, freeze_word_embeddings
from xlt.core.metrics import MetricsFile, parse_axes
from xlt.core.models import config_num_layers, load_tokenizer, require_model_files
from xlt.core.padding import pad_multiple
from xlt.core.sentence_encoder import SentenceEncoder, tokenize
from xlt.core.train_args import train_args_from
from xlt.core.train_inputs import DevSelection, Objective, Resumable
from xlt.core.training import result_meta, seed_everything, train
from xlt.data.records import read_records
from xlt.evaluate.sts import sts_correlations
from xlt.losses.softmax_pair import SoftmaxPairLoss

# the dev metric by whether the dev set is STS (else NLI): the evaluation's named score, the metrics file's
DEV_METRIC = {True: "dev_spearman_cosine", False: "dev_nli_accuracy"}


def main(args):
    # every input is checked before the model loads
    targs = train_args_from(args)
    run_axes = parse_axes(args.axes)
    train_set = read_records(
        args.train, ("text", "text_pair", "label"), "--train needs an NLI dataset (records with text, text_pair, label)"
    )
    if args.dev_sts:
        dev_set = read_records(
            args.dev_sts,
            ("text", "text_pair", "score"),
            "--dev-sts needs an STS dataset (records with text, text_pair, score)",
        )
    else:
        dev_set = read_records(
            args.dev_nli,
            ("text", "text_pair", "label"),
            "--dev-nli needs an NLI dataset (records with text, text_pair, label)",
        )
    require_model_files(args.model)
    layers = config_num_layers(args.model)  # config.json only
    if not -1 <= args.freeze_depth <= layers:
        raise XltError(
            f"--freeze-depth {args.freeze_depth} is out of range for {args.model} with {layers} layers; "
            f"use -1 (nothing frozen), 0 (embeddings) .. {layers}"
        )

    tokenizer = load_tokenizer(args.model)
    encoder = SentenceEncoder.from_pretrained(args.model, args.pooling, args.layer)
    freeze(encoder.encoder, args.freeze_depth)
    if not args.train_word_embeddings:
        freeze_word_embeddings(encoder.encoder)
    seed_everything(targs.seed)  # the head's initial weights: torch seeds each process at random
    head = SoftmaxPairLoss(encoder.dim, num_labels=3, use_product=args.use_product)
    model = torch.nn.ModuleDict({"encoder": encoder, "head": head})

    multiple = pad_multiple(targs.device)

    def collate(examples):
        # training and dev selection put the model's prompt before each sentence, as eval-embeddings does
        a = tokenize(tokenizer, [args.prompt + e["text"] for e in examples], targs.max_length, multiple)
        b = tokenize(tokenizer, [args.prompt + e["text_pair"] for e in examples], targs.max_length, multiple)
        batch = {f"a_{k}": v for k, v in a.items()} | {f"b_{k}": v for k, v in b.items()}
        if "label" in examples[0]:
            batch["labels"] = torch.tensor([e["label"] for e in examples])
        return batch

    def side(batch, prefix):
        return {k[2:]: v for k, v in batch.items() if k.startswith(prefix)}

    def loss_fn(m, batch):
        return m["head"](m["encoder"](**side(batch, "a_")), m["encoder"](**side(batch, "b_")), batch["labels"])

    @torch.no_grad()
    def evaluate(m):
        m.eval()
        device = next(m.parameters()).device
        us, vs = [], []
        for start in range(0, len(dev_set), 64):
            batch = {k: v.to(device) for k, v in collate(dev_set[start : start + 64]).items()}
            us.append(m["encoder"](**side(batch, "a_")).float())
            vs.append(m["encoder"](**side(batch, "b_")).float())
        u, v = torch.cat(us), torch.cat(vs)
        if args.dev_sts:
            rho = sts_correlations(u.cpu().numpy(), v.cpu().numpy(), [e["score"] for e in dev_set], ["cosine"])
            return {"score": rho[("spearman", "cosine")], DEV_METRIC[True]: rho[("spearman", "cosine")]}
        predictions = m["head"].classifier(m["head"].features(u, v)).argmax(-1).cpu().numpy()
        accuracy = float(np.mean(predictions == np.array([e["label"] for e in dev_set])))
        return {"score": accuracy, DEV_METRIC[False]: accuracy}

    out = Path(args.out)
    checkpoint_dir = Path(args.checkpoint_dir) if args.checkpoint_dir else out / "checkpoint"
    with monitor.run(args.tensorboard, out, run_axes | _sbert_axes(args, targs), vars(args)):
        result = train(
            model,
            Objective(train_set, collate, loss_fn),
            targs,
            # (an STS dev set has no labels for the loss)
            dev=DevSelection(evaluate, loss_examples=None if args.dev_sts else dev_set),
            checkpoint=Resumable(checkpoint_dir, train_sbert_identity(args)),
        )
    encoder.save(out / "model", tokenizer)
    axes = run_axes | _sbert_axes(args, targs)
    metrics = MetricsFile("sbert", args.run_id or out.name, axes=axes)
    metrics.curve = result.curve
    metrics.meta.update(
        result_meta(result, targs)
        | count_parameters(encoder)
        | {"model": args.model, "prompt": args.prompt, "history": result.history}
    )
    metrics.add(DEV_METRIC[bool(args.dev_sts)], result.best_score, split="dev")
    metrics.write(out / "train.json")
    remove_checkpoint(checkpoint_dir)


def _sbert_axes(args, targs) -> dict:
    """A train-sbert run's own axes (beside the planned --axes)."""
    return {"pooling": args.pooling, "layer": args.layer, "freeze_depth": args.freeze_depth, "seed": targs.seed}


def train_sbert_identity(args) -> dict:
    """What a resumed train-sbert job must share with the one that wrote its checkpoint, besides the
    training settings (xlt.core.training keys those): model, pooling, freezing, head, inputs."""

    settings = {
        "family": "sbert",
        "model": args.model,
        "pooling": args.pooling,
        "layer": args.layer,
        "freeze_depth": args.freeze_depth,
        "train_word_embeddings": args.train_word_embeddings,
        "use_product": args.use_product,
        "dev": "sts" if args.dev_sts else "nli",
        "prompt": args.prompt,
    }
    return run_identity(settings, [args.train, args.dev_sts or args.dev_nli, *model_inputs(args.model)])
