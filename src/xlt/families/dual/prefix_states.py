"""`xlt dual-prefix-states`: the frozen-prefix hidden states of every training sentence at every
depth of a dual sweep, stored in one pass (the train-dual jobs then train only the top)."""

from __future__ import annotations

from xlt.core.errors import XltError
from xlt.core.manifest import sha256
from xlt.core.models import config_hidden_size, config_num_layers, load_encoder, load_tokenizer
from xlt.core.train_args import precision_label
from xlt.data.bitext_files import load_bitexts, resolve_langs
from xlt.families.dual.dual_encoder import pairs_from_bitexts, with_prompt
from xlt.families.dual.prefix import STORE_SETTINGS, distinct_sentences, sentence_collate, store_expected
from xlt.frozen_prefix.prefix_store import checked_token_lengths, parse_depths
from xlt.frozen_prefix.store_verb import pass_device, write_store


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
    device, amp_dtype = pass_device(args)  # the train-dual jobs' autocast
    model = load_encoder(args.model).to(device)
    meta = {
        **store_expected(args.model, args.max_length, sentences, precision_label(amp_dtype)),
        "family": "dual",
        "train": args.train,
        "train_sha256": [sha256(f) for f in args.train],
    }
    write_store(
        model,
        depths,
        sentences,
        collate,
        lengths,
        args,
        device,
        amp_dtype,
        settings=STORE_SETTINGS,
        meta=meta,
        unit="distinct sentences",
    )
