"""Frozen-prefix caching: compute the frozen part of a deeply frozen classifier once.

With the embeddings and the first N encoder layers frozen, every epoch recomputes the same
layer-N hidden states. In cached mode the frozen prefix runs once over the dataset, its output is
stored on the CPU, and training runs only layers N+1..L plus the model's own task head on the
stored states.

What is equal to uncached training and what is not:
- precision: the prefix runs under the training run's autocast (`amp_dtype`, the dtype
  `xlt.core.training.autocast_dtype` picks for the run's precision and device; None = fp32), so a
  bf16 run's prefix states come from the same bf16-autocast forward as its uncached run's;
- dropout: the prefix runs in eval mode, no dropout below the boundary (the embeddings' dropout
  included). Uncached training puts the whole model in train mode (xlt.core.training calls
  `model.train()`; requires_grad=False does not switch dropout off), so there the frozen layers
  do apply dropout. This is the one difference: with dropout 0 the cached states are the
  uncached forward's hidden states at the boundary (same precision, same masks), and training
  on them matches uncached training up to float summation order.

Usage (loop-agnostic; the loop feeds `model(**batch)` as for any transformers model):

    freeze(model, depth)
    model.to(device)
    states = compute_prefix_states(model, depth, tokenised_batches, device, amp_dtype=amp_dtype)
    top = CachedTopModel(model, depth)            # xlt.frozen_prefix.cached_top; shares parameters with `model`
    loader = DataLoader(PrefixStateDataset(states), batch_size=..., shuffle=...,
                        collate_fn=collate_prefix_states)
    out = top(**batch)                            # out.logits, out.loss (when labels given)
    model.save_pretrained(...)                    # or top.save_pretrained(...): same weights

or, with a list of raw examples and the loop's tokenising collate,
`cache_examples(model, depth, examples, collate, batch_size, device, amp_dtype=...)` -> PrefixStateDataset
whose item i belongs to examples[i]. Evaluate on raw text with `top.full_model`.

The trainable top over the stored states (CachedTopModel, CachedSentenceTop, the task heads and
`prepare_cached_training`) is xlt.frozen_prefix.cached_top; this module computes and holds the states.

A whole freeze-depth sweep can share one pass instead: `xlt.frozen_prefix.prefix_store` stores the
states at every depth once (`xlt prefix-states`) and each depth's run reads its own boundary.

Depth semantics follow `xlt.freezing`: -1 (nothing frozen) cannot be cached because the
embeddings train; 0 caches the embedding output (the dropout inside the embeddings is then
off); L caches the final layer output, so only the head trains.
`PrefixStates.precision` records what the prefix computed in (fp32, bfloat16 or float16).

Storage: one flat (total_tokens, hidden) tensor plus per-example offsets, with trailing
padding stripped, so memory is sum(lengths) * hidden * bytes-per-value (fp32: 4, fp16/bf16: 2);
e.g. 100k examples of 40 tokens at hidden 768 take 12.3 GB in fp32, 6.1 GB in fp16.
Half-precision storage rounds each stored value to the nearest representable number:
relative error at most 2**-11 for fp16 (absolute 2**-25 below 2**-14) and 2**-8 for bf16
(values beyond fp16's 65504 range overflow, which is why fp32 is the default); the top layers
compute as the training loop runs them
(the model's dtype, under the run's autocast).
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import Callable, Iterable, Mapping, Sequence

import torch
from torch import nn
from torch.utils.data import Dataset

from xlt.core.errors import XltError
from xlt.core.freezing import check_depth
from xlt.core.models import base_model, encoder_parts
from xlt.core.train_args import precision_label

STORAGE_DTYPES = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}
# Worst-case relative rounding error of one stored value (half the unit in the last place).
STORAGE_RELATIVE_ERROR = {"float32": 2.0**-24, "float16": 2.0**-11, "bfloat16": 2.0**-8}


def check_cacheable_depth(depth: int, num_layers: int) -> None:
    check_depth(depth, num_layers)
    if depth < 0:
        raise XltError(
            f"freeze depth {depth} cannot use the frozen-prefix cache: nothing is frozen, so the "
            "embeddings train; set cache_frozen_prefix: false for this depth or use a depth >= 0"
        )


def bidirectional_mask(config, hidden_states: torch.Tensor, attention_mask: torch.Tensor | None):
    """The attention mask in the form the model's layers expect, built by the same transformers
    helper the model's own forward uses (transformers 5 layers take the output of
    create_bidirectional_mask: None without padding, else a 4D mask for the configured attention
    implementation), so cached and uncached runs see identical masks."""
    try:
        from transformers.masking_utils import create_bidirectional_mask  # deferred: imports torch
    except ImportError as exc:  # transformers 4.x layers took a different, per-family mask format
        raise XltError(
            "frozen-prefix caching needs a transformers version with "
            "transformers.masking_utils.create_bidirectional_mask (5.x); upgrade transformers "
            "or set cache_frozen_prefix: false"
        ) from exc
    if getattr(config, "is_decoder", False):
        raise XltError("frozen-prefix caching supports bidirectional encoders only, not decoder configs")
    return create_bidirectional_mask(config=config, inputs_embeds=hidden_states, attention_mask=attention_mask)


def _run_embeddings(embeddings: nn.Module, batch: Mapping[str, torch.Tensor]) -> torch.Tensor:
    # BERT/RoBERTa embeddings take token_type_ids, DistilBERT's do not; position ids are left to
    # the module (RoBERTa derives them from the padding in input_ids, as the full model does).
    accepted = inspect.signature(embeddings.forward).parameters
    kwargs = {"input_ids": batch["input_ids"]}
    if "token_type_ids" in batch and "token_type_ids" in accepted:
        kwargs["token_type_ids"] = batch["token_type_ids"]
    return embeddings(**kwargs)


@dataclass
class PrefixStates:
    """Hidden states after the frozen prefix, per example, trailing padding stripped.

    Example i is hidden[offsets[i]:offsets[i+1]] with attention mask mask[offsets[i]:offsets[i+1]]
    (the mask is kept because padding other than trailing padding, e.g. left padding, stays)."""

    hidden: torch.Tensor  # (total_tokens, hidden_size), storage dtype, CPU
    mask: torch.Tensor  # (total_tokens,), int8
    offsets: torch.Tensor  # (n + 1,), int64
    labels: torch.Tensor | None  # (n, ...) or None
    depth: int
    precision: str = "fp32"  # what the prefix computed in: fp32 (no autocast), bfloat16 or float16

    def __len__(self) -> int:
        return self.offsets.numel() - 1

    @property
    def nbytes(self) -> int:
        total = self.hidden.nbytes + self.mask.nbytes + self.offsets.nbytes
        return total + (self.labels.nbytes if self.labels is not None else 0)

    def example(self, index: int) -> tuple[torch.Tensor, torch.Tensor]:
        start, end = int(self.offsets[index]), int(self.offsets[index + 1])
        return self.hidden[start:end], self.mask[start:end]


def prefix_axes(states: PrefixStates | None, training_precision: str) -> dict:
    """A training run's table columns on its frozen prefix: `cache_frozen_prefix` (the prefix ran
    once in eval mode: `states` is its cache, else None: it ran in every step, in train mode) and
    `prefix_precision` (what it computed in: the cache's, else the training's; with depth -1,
    where nothing is frozen, the training's)."""
    return {
        "cache_frozen_prefix": states is not None,
        "prefix_precision": states.precision if states is not None else training_precision,
    }


def trailing_lengths(mask: torch.Tensor) -> torch.Tensor:
    """Per row, the length up to the last attended token (only trailing padding is stripped)."""
    positions = torch.arange(1, mask.shape[1] + 1)
    return (positions * (mask != 0)).amax(dim=1)


def boundary_states(
    model: nn.Module,
    depths: Sequence[int],
    batches: Iterable[Mapping[str, torch.Tensor]],
    device: torch.device,
    amp_dtype: torch.dtype | None = None,
):
    """For each batch: ({depth: hidden states after embeddings + `depth` layers, on `device`},
    the CPU attention mask, the batch). One forward through embeddings + max(depths) layers per
    batch serves every boundary, under autocast to `amp_dtype` as the training loop runs its
    forward (None: fp32). Call under no_grad with the model in eval mode."""
    parts = encoder_parts(model)
    for depth in depths:
        check_cacheable_depth(depth, parts.num_layers)
    config = base_model(model).config
    wanted, deepest = set(depths), max(depths)
    for batch in batches:
        if "input_ids" not in batch or "attention_mask" not in batch:
            raise XltError("prefix caching needs tokenised batches with input_ids and attention_mask")
        on_device = {
            k: torch.as_tensor(v).to(device)
            for k, v in batch.items()
            if k in ("input_ids", "attention_mask", "token_type_ids")
        }
        attention_mask = on_device["attention_mask"]
        # entered per batch, not across the yield: the caller's code between batches runs without it
        with torch.autocast(device_type=device.type, dtype=amp_dtype or torch.bfloat16, enabled=amp_dtype is not None):
            hidden = _run_embeddings(parts.embeddings, on_device)
            found = {0: hidden} if 0 in wanted else {}
            layer_mask = bidirectional_mask(config, hidden, attention_mask)
            for index, layer in enumerate(parts.layers[:deepest], start=1):
                hidden = layer(hidden, layer_mask)
                if index in wanted:
                    found[index] = hidden
        yield found, attention_mask.to("cpu"), batch


@torch.no_grad()
def compute_prefix_states(
    model: nn.Module,
    depth: int,
    batches: Iterable[Mapping[str, torch.Tensor]],
    device: torch.device | str = "cpu",
    storage_dtype: str = "float32",
    amp_dtype: torch.dtype | None = None,
) -> PrefixStates:
    """Run embeddings + the first `depth` layers in eval mode over tokenised batches, under
    autocast to `amp_dtype` (the training run's: xlt.core.training.autocast_dtype; None = fp32).

    A batch is a mapping with `input_ids`, `attention_mask`, optionally `token_type_ids` and
    `labels` (other keys are ignored). Batches are processed in the given order, so example i of
    the result is the i-th row seen. The model's training mode is restored afterwards."""
    if storage_dtype not in STORAGE_DTYPES:
        raise XltError(f"unknown storage dtype {storage_dtype!r}; use one of {sorted(STORAGE_DTYPES)}")
    check_cacheable_depth(depth, encoder_parts(model).num_layers)
    device = torch.device(device)
    dtype = STORAGE_DTYPES[storage_dtype]

    hidden_chunks: list[torch.Tensor] = []
    mask_chunks: list[torch.Tensor] = []
    lengths: list[int] = []
    label_chunks: list[torch.Tensor] = []
    label_presence: set[bool] = set()
    was_training = model.training
    model.eval()
    try:
        for found, cpu_mask, batch in boundary_states(model, [depth], batches, device, amp_dtype):
            hidden = found[depth].to("cpu", dtype)
            for row, length in enumerate(trailing_lengths(cpu_mask).tolist()):
                hidden_chunks.append(hidden[row, :length])
                mask_chunks.append(cpu_mask[row, :length].to(torch.int8))
                lengths.append(length)
            label_presence.add("labels" in batch)
            if "labels" in batch:
                label_chunks.append(torch.as_tensor(batch["labels"]).cpu())
    finally:
        model.train(was_training)

    if len(label_presence) > 1:
        raise XltError("some batches have labels and some do not; give labels for all examples or none")
    if not lengths:
        raise XltError("no batches to cache: the dataset is empty")
    offsets = torch.zeros(len(lengths) + 1, dtype=torch.long)
    offsets[1:] = torch.cumsum(torch.tensor(lengths, dtype=torch.long), dim=0)
    return PrefixStates(
        hidden=torch.cat(hidden_chunks),
        mask=torch.cat(mask_chunks),
        offsets=offsets,
        labels=torch.cat(label_chunks) if label_chunks else None,
        depth=depth,
        precision=precision_label(amp_dtype),
    )


def cache_examples(
    model: nn.Module,
    depth: int,
    examples: Sequence,
    collate: Callable[[list], Mapping[str, torch.Tensor]],
    batch_size: int = 64,
    device: torch.device | str = "cpu",
    storage_dtype: str = "float32",
    amp_dtype: torch.dtype | None = None,
) -> "PrefixStateDataset":
    """Prefix states for a list of raw examples, tokenised by the training loop's own `collate`;
    item i of the result belongs to examples[i], so the loop's data order carries over.
    `amp_dtype`: the training run's autocast dtype (None = fp32)."""
    batches = (collate(list(examples[start : start + batch_size])) for start in range(0, len(examples), batch_size))
    return PrefixStateDataset(compute_prefix_states(model, depth, batches, device, storage_dtype, amp_dtype))


class PrefixStateDataset(Dataset):
    """One item per example: {"hidden_states": (len, hidden), "attention_mask": (len,)[, "labels"]}."""

    def __init__(self, states: PrefixStates):
        self.states = states

    def __len__(self) -> int:
        return len(self.states)

    def lengths(self) -> list[int]:
        """Tokens per example (trailing padding stripped); length bucketing sorts by these."""
        return (self.states.offsets[1:] - self.states.offsets[:-1]).tolist()

    def __getitem__(self, index: int) -> dict[str, torch.Tensor]:
        hidden, mask = self.states.example(index)
        item = {"hidden_states": hidden, "attention_mask": mask}
        if self.states.labels is not None:
            item["labels"] = self.states.labels[index]
        return item


def collate_prefix_states(items: list[dict[str, torch.Tensor]]) -> dict[str, torch.Tensor]:
    """Right-pad to the longest example in the batch (zeros, mask 0); hidden states in fp32.

    Padded positions are masked out as keys, so their values cannot reach attended tokens."""
    longest = max(item["hidden_states"].shape[0] for item in items)
    hidden_size = items[0]["hidden_states"].shape[1]
    hidden = torch.zeros(len(items), longest, hidden_size, dtype=torch.float32)
    mask = torch.zeros(len(items), longest, dtype=torch.long)
    for row, item in enumerate(items):
        length = item["hidden_states"].shape[0]
        hidden[row, :length] = item["hidden_states"]
        mask[row, :length] = item["attention_mask"]
    batch = {"hidden_states": hidden, "attention_mask": mask}
    if "labels" in items[0]:
        batch["labels"] = torch.stack([item["labels"] for item in items])
    return batch
