"""`xlt prefix-states`: the frozen-prefix hidden states of every depth of a freeze-depth sweep,
stored in one pass over the training set (the finetune jobs then train only the top)."""

from __future__ import annotations

from xlt.core.classification import make_collate
from xlt.core.errors import XltError
from xlt.core.manifest import sha256
from xlt.core.models import config_hidden_size, load_classifier, load_tokenizer, pick_device, require_model_files
from xlt.core.training import autocast_dtype
from xlt.data.records import read_records
from xlt.families.freeze_depth.inputs import CLASSIFICATION_FIELDS, CLASSIFICATION_NEEDS, check_freeze_depth
from xlt.families.freeze_depth.store_names import STORE_SETTINGS
from xlt.frozen_prefix.cached_top import task_head
from xlt.frozen_prefix.prefix_store import checked_token_lengths, parse_depths, write_prefix_store


def main(args):
    depths = parse_depths(args.depths)
    train_set = read_records(args.train, CLASSIFICATION_FIELDS, CLASSIFICATION_NEEDS)
    require_model_files(args.model)
    for depth in depths:
        check_freeze_depth(args.model, depth)
    hidden_size = config_hidden_size(args.model)
    tokenizer = load_tokenizer(args.model)
    collate = make_collate(tokenizer, args.max_length)
    lengths = checked_token_lengths(
        train_set, collate, depths, hidden_size, args, settings=STORE_SETTINGS, depths_setting="freeze_depth.depths"
    )
    model = load_classifier(args.model, args.num_labels, args.head)
    try:
        task_head(model)
    except XltError as err:
        raise XltError(f"{err}; or {STORE_SETTINGS}.shared: false") from None
    device = pick_device(args.device)
    model.to(device)
    amp_dtype = autocast_dtype(args.precision, device)[0]  # the finetune jobs' autocast
    meta = write_prefix_store(
        model,
        depths,
        train_set,
        collate,
        args.batch_size,
        lengths,
        args.out,
        device,
        args.storage_dtype,
        meta={
            "model": args.model,
            "train": args.train,
            "train_sha256": sha256(args.train),
            "max_length": args.max_length,
        },
        settings=STORE_SETTINGS,
        amp_dtype=amp_dtype,
    )
    print(
        f"stored depths {meta['depths']} of {meta['examples']} examples ({meta['tokens']} tokens, "
        f"{meta['precision']} compute, {meta['storage_dtype']}): {meta['nbytes'] / 2**30:.3f} GiB "
        f"in {meta['compute_s']:.1f} s"
    )
