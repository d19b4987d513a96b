"""Length bucketing: put examples of similar length in the same batch, so that dynamic padding
(every collate pads to the longest example of its batch) pads little.

Per epoch: the epoch's seeded random permutation is cut into chunks of `chunk_batches`
batches; each chunk is sorted by length (stable, so ties keep the random order) and cut into
batches; the full batches are shuffled (seeded by seed and epoch) and the one short batch an
epoch can have goes last. Every example is still seen exactly once per epoch, the order is a
pure function of (seed, epoch) (a resumed run sees the same batches), and the batches stay
random: a chunk of 100 batches mixes lengths from all over the data set, and the batch order
is shuffled, so there is no short-to-long curriculum.

The result is one flat order whose consecutive `batch_size` slices are the batches, the same
shape the training loop consumes without bucketing.
"""

from __future__ import annotations

from typing import Sequence

import torch

from xlt.core.errors import XltError

CHUNK_BATCHES = 100


def bucketed_order(
    order: Sequence[int],
    lengths: Sequence[int],
    batch_size: int,
    seed: int,
    epoch: int,
    chunk_batches: int = CHUNK_BATCHES,
) -> list[int]:
    """Reorder an epoch's random permutation `order` into length-homogeneous, shuffled batches."""
    if batch_size < 1 or chunk_batches < 1:
        raise ValueError("batch_size and chunk_batches must be >= 1")
    chunk = batch_size * chunk_batches
    full: list[list[int]] = []
    short: list[list[int]] = []
    for start in range(0, len(order), chunk):
        part = sorted(order[start : start + chunk], key=lambda i: lengths[i])
        for b in range(0, len(part), batch_size):
            (full if len(part[b : b + batch_size]) == batch_size else short).append(part[b : b + batch_size])
    # a separate stream from epoch_order's, so the batch shuffle is not correlated with the permutation
    g = torch.Generator().manual_seed(seed * 1_000_003 + epoch + 0x5EED)
    shuffled = [full[i] for i in torch.randperm(len(full), generator=g).tolist()]
    return [i for batch in shuffled + short for i in batch]


def example_length(example) -> int:
    """Length of one example in tokens (or a proxy with the same ordering)."""
    if isinstance(example, dict):
        if "input_ids" in example:
            return len(example["input_ids"])
        if "hidden_states" in example:
            return int(example["hidden_states"].shape[0])
        if "text" in example:
            # whitespace words: a cheap proxy of the word-piece count, good enough to sort by
            text = example["text"] + " " + (example.get("text_pair") or "")
            return len(text.split())
    raise XltError(
        "length_bucketing needs examples with input_ids, hidden_states or text, or a data set with a "
        f"lengths() method; got {type(example).__name__}; set length_bucketing false for this job"
    )


def example_lengths(examples: Sequence) -> list[int]:
    """Lengths of every example; a data set may provide them itself with a `lengths()` method."""
    if hasattr(examples, "lengths"):
        return [int(n) for n in examples.lengths()]
    return [example_length(e) for e in examples]


def padding_fraction(batches: Sequence[Sequence[int]], lengths: Sequence[int]) -> float:
    """Fraction of padded positions when each batch is padded to its longest example."""
    padded = sum(len(b) * max(lengths[i] for i in b) for b in batches if b)
    real = sum(lengths[i] for b in batches for i in b)
    return 1.0 - real / padded if padded else 0.0
