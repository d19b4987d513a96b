"""The shared prefix-state store: one frozen-prefix pass for a whole freeze-depth sweep.

Every depth of a freeze-depth sweep starts from the same pretrained embeddings and bottom
layers, so the hidden states at boundary N (embeddings + first N layers) are the same for
every run frozen at depth N, whatever its seed. `write_prefix_store` runs the pretrained
model once per training example through embeddings + max(depths) layers and stores the
hidden states at every requested boundary; each depth's `xlt finetune --prefix-states DIR`
then reads only its own boundary (`load_cached_training`) and trains layers N+1..L and the
task head on it, exactly as `--cache-frozen-prefix` does with states it computed itself.
The dual family stores its distinct training sentences the same way (`xlt dual-prefix-states`,
no labels; read by `xlt train-dual --prefix-states`).

Semantics, the same as the per-job cache (xlt.frozen_prefix.prefix_cache, which says what is equal to
uncached training and what is not):
- the pass runs under the training runs' autocast (--precision, resolved on the store job's
  device as the training loop resolves it; meta.json records it as `precision`: fp32, bfloat16
  or float16), and a training job refuses a store whose precision is not its own;
- the frozen layers run in eval mode: no dropout below the boundary (the embeddings' dropout
  included). Uncached training runs its frozen layers in train mode, with dropout; that is the
  remaining difference. With dropout 0 the stored states are the uncached forward's hidden
  states at the boundary (same autocast, same masks) up to float summation order: the pass
  batches and pads the examples otherwise than training does, so its matrix products sum in
  another order (within 1e-6 of the model's own forward in tests/frozen_prefix/test_prefix_store.py);
- storage in float16 (the default) rounds each stored value to the nearest fp16 number:
  relative error at most 2**-11 (absolute 2**-25 below fp16's normal range, 2**-14); values
  beyond +-65504 cannot be stored and are refused. float32 storage is exact: a run that reads
  it trains bitwise what `--cache-frozen-prefix` trains (same tokenisation, same batches of
  the pass, same autocast, same arithmetic). Neither is bitwise the uncached run with its
  frozen layers in eval mode (the summation order above): in fp32 their trained weights
  differ from the uncached run's by at most 5e-7 (tests/frozen_prefix/test_prefix_store.py, 2 epochs;
  four fp32 spacings at 1, the LayerNorm weights' scale; on one CPU thread measured for BERT and
  DistilBERT 1.2e-8 and 1.8e-8 on the CPU the test was written on, 1.2e-7 and 5.5e-8 with AVX2, 4.4e-8 and 1.9e-8 with
  ATEN_CPU_CAPABILITY=default: which kernels torch picks decides the summation order; about 5e-8
  in the issue-35 check), far below what another seed changes;
- the layers above the boundary compute as the training loop runs them (the model's dtype on
  fp32 inputs, under the run's autocast).

On disk (a directory, written atomically): meta.json, offsets.npy (int64, examples + 1),
mask.npy (int8 per token), labels.npy (classification stores; a store of sentences has none)
and hidden_depthNN.npy (tokens x hidden, float16 or float32) per boundary. Trailing padding
is stripped, so the size is boundaries x sum(token lengths) x hidden x bytes + small change; `store_nbytes` computes it
from the tokenised lengths before any model runs, and `check_store_size` refuses a store
larger than the configured bound (freeze_depth.prefix_states.max_gib). For scale: all 13
boundaries of mBERT (hidden 768) over 393k XNLI training pairs of ~45 tokens take about 330
GiB in fp16; a 20k-example subset about 17 GiB.
"""

from __future__ import annotations

import logging
import time
from pathlib import Path
from typing import Callable, Mapping, Sequence

import numpy as np
import torch
from torch import nn

from xlt.core.choices import PREFIX_STORE_DTYPES
from xlt.core.errors import XltError
from xlt.core.io import atomic_directory, read_json, write_json
from xlt.core.models import encoder_parts
from xlt.core.train_args import precision_label
from xlt.frozen_prefix.cached_top import CachedTopModel, CachedTraining, task_head
from xlt.frozen_prefix.prefix_cache import (
    STORAGE_DTYPES,
    PrefixStateDataset,
    PrefixStates,
    boundary_states,
    check_cacheable_depth,
    trailing_lengths,
)

log = logging.getLogger("xlt.frozen_prefix.prefix_store")

FORMAT = 1
STORE_DTYPES = PREFIX_STORE_DTYPES  # numpy writes both; bfloat16 has no .npy type
META = "meta.json"
RERUN = "the prefix-store job that wrote it"  # a family names its own verb and rule (check_store_matches)


def parse_depths(text: str) -> list[int]:
    """--depths of a store job: comma-separated freeze depths >= 0, sorted, each once."""
    try:
        depths = sorted({int(d) for d in text.split(",") if d.strip()})
    except ValueError:
        raise XltError(f"--depths {text!r}: give comma-separated integers, e.g. 0,1,2") from None
    if not depths or depths[0] < 0:
        raise XltError(f"--depths {text!r}: store depths >= 0 only (-1 freezes nothing, so has no prefix)")
    return depths


def hidden_file(depth: int) -> str:
    return f"hidden_depth{depth:02d}.npy"


def store_files(path: str | Path, depth: int) -> list[Path]:
    """The files of a store that a training job at `depth` reads (`read_prefix_store`): the
    inputs its resumable checkpoint is keyed on (xlt.core.checkpoint.run_identity)."""
    path = Path(path)
    files = [path / META, path / hidden_file(depth), path / "offsets.npy", path / "mask.npy"]
    return files + ([path / "labels.npy"] if (path / "labels.npy").is_file() else [])


def token_lengths(
    examples: Sequence, collate: Callable[[list], Mapping[str, torch.Tensor]], batch_size: int
) -> list[int]:
    """Tokens per example after the training loop's own tokenisation, trailing padding stripped:
    what the store will hold, known before any model runs (tokenising only)."""
    lengths: list[int] = []
    for start in range(0, len(examples), batch_size):
        batch = collate(list(examples[start : start + batch_size]))
        lengths += trailing_lengths(torch.as_tensor(batch["attention_mask"])).tolist()
    return lengths


def store_nbytes(tokens: int, examples: int, hidden_size: int, depths: Sequence[int], storage_dtype: str) -> int:
    """Bytes on disk of a store: the hidden states of every boundary plus mask, offsets and labels."""
    per_value = torch.tensor([], dtype=STORAGE_DTYPES[storage_dtype]).element_size()
    return len(depths) * tokens * hidden_size * per_value + tokens + 8 * (examples + 1) + 8 * examples


def check_store_size(
    nbytes: int,
    max_gib: float,
    *,
    depths: Sequence[int],
    tokens: int,
    hidden_size: int,
    storage_dtype: str,
    settings: str,
    depths_setting: str,
) -> None:
    """Refuse a store over the bound, naming the settings (`settings`: the family's
    prefix_states section; `depths_setting`: its list of depths) and the ways out."""
    if nbytes > max_gib * 2**30:
        raise XltError(
            f"the shared prefix states would take {nbytes / 2**30:.2f} GiB on disk ({len(depths)} boundaries x "
            f"{tokens} tokens x hidden {hidden_size} in {storage_dtype}), more than {settings}.max_gib = {max_gib} "
            f"(--max-gib); raise {settings}.max_gib if the disk has room, or store less: fewer depths in "
            f"{depths_setting}, a shorter training.max_length or a smaller training set, "
            f"{settings}.storage_dtype: float16, or {settings}.shared: false "
            "(each training job then caches its own depth in memory)"
        )


def checked_token_lengths(
    examples: Sequence,
    collate: Callable[[list], Mapping[str, torch.Tensor]],
    depths: Sequence[int],
    hidden_size: int,
    args,
    *,
    settings: str,
    depths_setting: str,
) -> list[int]:
    """The examples' token lengths (`token_lengths`), once the store they make is known to fit
    (`check_store_size`: its exact size, before any model loads or runs). `args`: the verb's
    --batch-size, --storage-dtype and --max-gib."""
    lengths = token_lengths(examples, collate, args.batch_size)
    check_store_size(
        store_nbytes(sum(lengths), len(lengths), hidden_size, depths, args.storage_dtype),
        args.max_gib,
        depths=depths,
        tokens=sum(lengths),
        hidden_size=hidden_size,
        storage_dtype=args.storage_dtype,
        settings=settings,
        depths_setting=depths_setting,
    )
    return lengths


@torch.no_grad()
def write_prefix_store(
    model: nn.Module,
    depths: Sequence[int],
    examples: Sequence,
    collate: Callable[[list], Mapping[str, torch.Tensor]],
    batch_size: int,
    lengths: Sequence[int],
    out: str | Path,
    device: torch.device | str = "cpu",
    storage_dtype: str = "float16",
    meta: dict | None = None,
    *,
    settings: str,
    amp_dtype: torch.dtype | None = None,
) -> dict:
    """Run embeddings + max(depths) layers once per example (eval mode, under autocast to
    `amp_dtype` as the training runs' forward (None = fp32), batches of `batch_size`
    in the order of `examples`, tokenised by `collate`) and write the states at every boundary in
    `depths` to the directory `out`, atomically. `lengths` are `token_lengths(...)` of the same
    examples (the arrays are allocated from them; a mismatch is an error). The collate's labels
    are stored when it gives them for every batch (a store of sentences, as the dual family's,
    has none). Returns the store's meta (also written to out/meta.json, with `meta` merged in)."""
    if storage_dtype not in STORE_DTYPES:
        raise XltError(f"unknown store dtype {storage_dtype!r}; use one of {list(STORE_DTYPES)}")
    depths = sorted(set(int(d) for d in depths))
    if not depths:
        raise XltError("no depths to store: give at least one freeze depth >= 0")
    parts = encoder_parts(model)
    for depth in depths:
        check_cacheable_depth(depth, parts.num_layers)
    if len(lengths) != len(examples) or not examples:
        raise XltError(f"{len(lengths)} token lengths for {len(examples)} examples; compute them with token_lengths")
    device = torch.device(device)
    hidden_size = base_hidden_size(model)
    np_dtype = np.float16 if storage_dtype == "float16" else np.float32
    offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
    offsets[1:] = np.cumsum(lengths)
    tokens = int(offsets[-1])
    mask = np.zeros(tokens, dtype=np.int8)
    labels: list[torch.Tensor] = []
    labelled: bool | None = None
    started = time.time()
    was_training = model.training
    model.eval()
    with atomic_directory(out) as tmp:
        arrays = {
            d: np.lib.format.open_memmap(tmp / hidden_file(d), mode="w+", dtype=np_dtype, shape=(tokens, hidden_size))
            for d in depths
        }
        batches = (collate(list(examples[start : start + batch_size])) for start in range(0, len(examples), batch_size))
        row = position = 0
        try:
            for found, cpu_mask, batch in boundary_states(model, depths, batches, device, amp_dtype):
                batch_lengths = trailing_lengths(cpu_mask)
                expected = torch.as_tensor(lengths[row : row + len(batch_lengths)])
                if not torch.equal(batch_lengths, expected):
                    raise XltError(
                        "the examples tokenised to other lengths than `lengths` says; "
                        "compute them with token_lengths and the same collate"
                    )
                keep = torch.arange(cpu_mask.shape[1]) < batch_lengths[:, None]  # row-major: example order
                end = position + int(batch_lengths.sum())
                labelled = ("labels" in batch) if labelled is None else labelled
                if labelled != ("labels" in batch):
                    raise XltError("some batches have labels and some do not; give labels for all examples or none")
                if labelled:
                    labels.append(torch.as_tensor(batch["labels"]).cpu())
                for depth, hidden in found.items():
                    # rounded by torch as the per-job cache rounds (to nearest, ties to even)
                    values = hidden[keep.to(hidden.device)].to("cpu", STORAGE_DTYPES[storage_dtype])
                    if not torch.isfinite(values).all():
                        raise XltError(
                            f"hidden states at depth {depth} are not finite in {storage_dtype} "
                            f"(float16 ends at +-65504); set {settings}.storage_dtype: float32"
                        )
                    arrays[depth][position:end] = values.numpy()
                mask[position:end] = cpu_mask[keep].numpy()
                row, position = row + len(batch_lengths), end
        finally:
            model.train(was_training)
        for array in arrays.values():
            array.flush()
        del arrays
        np.save(tmp / "offsets.npy", offsets)
        np.save(tmp / "mask.npy", mask)
        if labels:
            np.save(tmp / "labels.npy", torch.cat(labels).numpy())
        info = {
            "format": FORMAT,
            "depths": depths,
            "storage_dtype": storage_dtype,
            "hidden_size": hidden_size,
            "examples": len(lengths),
            "tokens": tokens,
            "batch_size": batch_size,
            "nbytes": store_nbytes(tokens, len(lengths), hidden_size, depths, storage_dtype),
            "compute_s": round(time.time() - started, 3),
            "device": str(device),
            "precision": precision_label(amp_dtype),
            "semantics": "frozen layers in eval mode (no dropout below the boundary), "
            f"{precision_label(amp_dtype)} compute; {storage_dtype} storage",
            **(meta or {}),
        }
        write_json(tmp / META, info)
    return info


def base_hidden_size(model: nn.Module) -> int:
    config = model.config
    for key in ("hidden_size", "dim"):
        if getattr(config, key, None):
            return int(getattr(config, key))
    raise XltError(f"the config of {type(model).__name__} states no hidden size (hidden_size or dim)")


def read_store_meta(path: str | Path) -> dict:
    path = Path(path)
    if not (path / META).is_file():
        raise XltError(f"{path} is not a prefix-state store (no {META}); write it with its family's prefix-store verb")
    meta = read_json(path / META)
    if meta.get("format") != FORMAT:
        raise XltError(
            f"{path}: prefix-state store format {meta.get('format')!r}, this xlt reads {FORMAT}; rerun {RERUN}"
        )
    meta.setdefault("precision", "fp32")  # stores from before the pass ran under autocast computed in fp32
    return meta


def check_store_matches(path: str | Path, meta: dict, expected: dict, rerun: str = RERUN) -> None:
    """The store was written for this model, training data and tokenisation; `rerun` names the
    job that writes it (its family's verb and rule)."""
    for key, want in expected.items():
        if meta.get(key) != want:
            raise XltError(
                f"{path} was written for {key} = {meta.get(key)!r}, this run has {want!r}; "
                f"rerun {rerun} with this run's settings"
            )


def read_prefix_store(path: str | Path, depth: int, model: nn.Module | None = None) -> PrefixStates:
    """The stored states of one boundary (read into memory; the other boundaries stay on disk);
    with `model` (the encoder that will read them), states of another hidden size are refused."""
    path = Path(path)
    meta = read_store_meta(path)
    if depth not in meta["depths"]:
        raise XltError(
            f"{path} holds freeze depths {meta['depths']}, not {depth}; rerun {RERUN} "
            "with every depth of the sweep (--depths)"
        )
    hidden = torch.from_numpy(np.load(path / hidden_file(depth)))
    if model is not None and hidden.shape[1] != base_hidden_size(model):
        raise XltError(f"{path} holds hidden size {hidden.shape[1]}, the model has {base_hidden_size(model)}")
    labels = torch.from_numpy(np.load(path / "labels.npy")) if (path / "labels.npy").is_file() else None
    return PrefixStates(
        hidden=hidden,
        mask=torch.from_numpy(np.load(path / "mask.npy")),
        offsets=torch.from_numpy(np.load(path / "offsets.npy")),
        labels=labels,
        depth=depth,
        precision=meta["precision"],
    )


def load_cached_training(
    model: nn.Module,
    depth: int,
    path: str | Path,
    examples: Sequence,
    expected: Mapping | None = None,
    rerun: str = RERUN,
) -> CachedTraining:
    """CachedTraining from a store instead of a caching pass: the top model of `model` above
    `depth` and the stored states of that boundary, whose item i belongs to examples[i] (checked
    against the stored labels, the count and `expected` meta values: a training run passes its
    own `precision`, so a store computed under another autocast is refused; `rerun` names the job
    that writes the store)."""
    if depth < 0:
        raise XltError(
            f"freeze depth {depth} trains the embeddings: there is no prefix to read from {path}; "
            "train it without --prefix-states"
        )
    task_head(model)  # an unsupported model class stops here, before reading gigabytes
    started = time.time()
    meta = read_store_meta(path)
    check_store_matches(path, meta, dict(expected or {}), rerun)
    if meta["examples"] != len(examples):
        raise XltError(
            f"{path} holds {meta['examples']} examples, the training set has {len(examples)}; "
            f"rerun {rerun} on this training file"
        )
    states = read_prefix_store(path, depth, model)
    labels = torch.as_tensor([e["label"] for e in examples])
    if states.labels is None or not torch.equal(states.labels.to(labels.dtype), labels):
        raise XltError(f"{path}: the stored labels differ from the training file's; it was written for other data")
    load_s = time.time() - started
    log.info(
        "read the stored frozen prefix (embeddings + %d layers, %s compute, %s) of %d examples from %s in %.2f s "
        "(%.1f MB)",
        depth,
        meta["precision"],
        meta["storage_dtype"],
        len(states),
        path,
        load_s,
        states.nbytes / 2**20,
    )
    return CachedTraining(CachedTopModel(model, depth), PrefixStateDataset(states), load_s)
