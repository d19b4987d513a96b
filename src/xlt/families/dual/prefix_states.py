"""`xlt dual-prefix-states`: the frozen-prefix hidden states of every training sentence at every
depth of a dual sweep, stored in one pass (the train-dual jobs then train only the top)."""

from __future__ import annotations

from xlt.core.errors import XltError
from xlt.core.manifest import sha256
from xlt.core.models import config_hidden_size, config_num_layers, load_encoder, load_tokenizer, pick_device
from xlt.core.train_args import precision_label
from xlt.core.training import autocast_dtype
from xlt.data.bitext_files import load_bitexts, resolve_langs
from xlt.families.dual.dual_encoder import pairs_from_bitexts, with_prompt
from xlt.families.dual.prefix import STORE_SETTINGS, distinct_sentences, sentence_collate, store_expected
from xlt.frozen_prefix.prefix_store import checked_token_lengths, parse_depths, write_prefix_store


def main(args) -> None:
    depths = parse_depths(args.depths)
    bitexts = with_prompt(load_bitexts(args.train, resolve_langs(args.train, None)), args.prompt)
    layers = config_num_layers(args.model)
    if depths[-1] >= layers:
        raise XltError(
            f"--depths {args.depths!r}: depth {depths[-1]} leaves nothing to train in a model with {layers} "
            f"layers; train-dual takes 0 .. {layers - 1}"
        )
    sentences, _ = distinct_sentences(pairs_from_bitexts(bitexts))
    tokenizer = load_tokenizer(args.model)
    collate = sentence_collate(tokenizer, args.max_length)
    hidden_size = config_hidden_size(args.model)
    lengths = checked_token_lengths(
        sentences, collate, depths, hidden_size, args, settings=STORE_SETTINGS, depths_setting="dual.freeze_depths"
    )
    device = pick_device(args.device)
    amp_dtype = autocast_dtype(args.precision, device)[0]  # the train-dual jobs' autocast
    model = load_encoder(args.model).to(device)
    meta = write_prefix_store(
        model,
        depths,
        sentences,
        collate,
        args.batch_size,
        lengths,
        args.out,
        device,
        args.storage_dtype,
        settings=STORE_SETTINGS,
        amp_dtype=amp_dtype,
        meta={
            **store_expected(args.model, args.max_length, sentences, precision_label(amp_dtype)),
            "family": "dual",
            "train": args.train,
            "train_sha256": [sha256(f) for f in args.train],
        },
    )
    print(
        f"stored depths {meta['depths']} of {meta['examples']} distinct sentences ({meta['tokens']} tokens, "
        f"{meta['precision']} compute, {meta['storage_dtype']}): {meta['nbytes'] / 2**30:.3f} GiB "
        f"in {meta['compute_s']:.1f} s"
    )
