"""What the store verbs share (`xlt prefix-states`, `xlt dual-prefix-states`): where their pass runs
and under which autocast, and the store written from their arguments, with a line saying what it holds."""

from __future__ import annotations

from typing import Callable, Mapping, Sequence

import torch
from torch import nn

from xlt.core.models import pick_device
from xlt.core.training import autocast_dtype
from xlt.frozen_prefix.prefix_store import write_prefix_store


def pass_device(args) -> tuple[torch.device, torch.dtype | None]:
    """The device of the pass (--device) and the autocast it computes under: the training jobs' own
    (--precision, resolved on that device as their loop resolves it)."""
    device = pick_device(args.device)
    return device, autocast_dtype(args.precision, device)[0]


def write_store(
    model: nn.Module,
    depths: Sequence[int],
    examples: Sequence,
    collate: Callable[[list], Mapping[str, torch.Tensor]],
    lengths: Sequence[int],
    args,
    device: torch.device,
    amp_dtype: torch.dtype | None,
    *,
    settings: str,
    meta: dict,
    unit: str = "examples",
) -> dict:
    """`write_prefix_store` with the verb's --batch-size, --out and --storage-dtype, then one line of
    what it stored (`unit`: what its examples are). Returns the store's meta."""
    info = write_prefix_store(
        model,
        depths,
        examples,
        collate,
        args.batch_size,
        lengths,
        args.out,
        device,
        args.storage_dtype,
        meta=meta,
        settings=settings,
        amp_dtype=amp_dtype,
    )
    print(
        f"stored depths {info['depths']} of {info['examples']} {unit} ({info['tokens']} tokens, "
        f"{info['precision']} compute, {info['storage_dtype']}): {info['nbytes'] / 2**30:.3f} GiB "
        f"in {info['compute_s']:.1f} s"
    )
    return info
