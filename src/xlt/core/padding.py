"""How far a batch is padded: to its longest example, and on a CUDA device up to a multiple of 8.

Measured on an H200 at mBERT's shape, batch 32, length-bucketed XNLI-like batches (BENCHMARKS.md,
"GPU check"): cuDNN's fused attention, which torch picks on Hopper, builds an execution plan for
every new sequence length, about 4 ms of host time a layer and pass (torch.profiler). Bucketed
batches are nearly each a new length, so a step took 123 ms; padded to a multiple of 8 (at most 16
lengths up to 128, each planned once) 34.5 ms. The extra pad tokens are masked, so a CUDA run
computes what it would at the longest example, up to float rounding. On the CPU there is no plan to
save and padding only adds work, so CPU runs (the demo, the tests) pad to the longest as before.
"""

from __future__ import annotations

import torch

from xlt.core.models import pick_device

CUDA_MULTIPLE = 8


def padded_width(longest: int, multiple: int | None) -> int:
    """A batch's width: its longest example, rounded up to `multiple` where one is given."""
    return -(-longest // multiple) * multiple if multiple else longest


def pad_multiple(device: torch.device | str) -> int | None:
    """`pad_to_multiple_of` for a tokenizer call whose batch runs on `device` (a training
    argument's "auto" included)."""
    return CUDA_MULTIPLE if pick_device(str(device)).type == "cuda" else None
