"""`xlt prefix-states`: the frozen-prefix hidden states of every depth of a freeze-depth sweep,
stored in one pass over the training set (the finetune jobs then train only the top)."""

from __future__ import annotations

from xlt.core.classification import make_collate
from xlt.core.errors import XltError
from xlt.core.manifest import sha256
from xlt.core.models import config_hidden_size, load_classifier, load_tokenizer, require_model_files
from xlt.data.records import read_records
from xlt.families.freeze_depth.inputs import CLASSIFICATION_FIELDS, CLASSIFICATION_NEEDS, check_freeze_depth
from xlt.families.freeze_depth.store_names import STORE_SETTINGS
from xlt.frozen_prefix.cached_top import task_head
from xlt.frozen_prefix.prefix_store import checked_token_lengths, parse_depths
from xlt.frozen_prefix.store_verb import pass_device, write_store


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
    device, amp_dtype = pass_device(args)  # the finetune jobs' autocast
    model.to(device)
    meta = {"model": args.model, "train": args.train, "train_sha256": sha256(args.train), "max_length": args.max_length}
    write_store(model, depths, train_set, collate, lengths, args, device, amp_dtype, settings=STORE_SETTINGS, meta=meta)
