"""Training settings (TrainArgs) and their command-line form, importable without torch.

A plan gives a job its config's `training` section as settings (xlt.core.plan.config_settings),
which its JobSpec renders as these flags; keeping this module free of torch makes `snakemake -n`
several seconds faster (a dry run of the paper sweep imported torch only for this).
xlt.core.training uses it; callers import from here.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass, fields

from xlt.core.choices import HEADS, PREFIX_STORE_DTYPES
from xlt.core.errors import XltError
from xlt.core.verbs import RUN_FLAGS, add_run_arguments, key_values, parse_bool


@dataclass
class TrainArgs:
    """Optimisation settings; every field is also a command-line flag (`--lr`, ...)."""

    epochs: float = 1.0
    max_steps: int = 0  # > 0 overrides epochs
    batch_size: int = 32
    lr: float = 2e-5
    weight_decay: float = 0.01
    warmup_ratio: float = 0.1
    warmup_steps: int = 0  # > 0 overrides warmup_ratio (sentence-transformers' fit counts warm-up in steps)
    adam_epsilon: float = 1e-8  # AdamW's eps (torch's default); make_multilingual.py uses 1e-6
    max_grad_norm: float = 1.0
    grad_accum: int = 1
    eval_every: int = 0  # optimiser steps between evaluations; 0 = at the end of every epoch
    max_length: int = 128
    seed: int = 1
    precision: str = "auto"  # auto = bf16 autocast where CUDA supports it, else fp16 + grad scaler; fp32 on CPU
    device: str = "auto"
    log_every: int = 20
    checkpoint_every: int = 0  # optimiser steps between resumable checkpoints; 0 = none
    length_bucketing: bool = False  # batches of similar length, so dynamic padding pads less (xlt.core.bucketing)
    compile: bool = False  # run the model's forward through torch.compile (worth it on GPUs, long runs)
    schedule: str = "linear"  # the learning rate after warm-up: linear decay to 0, constant, or cosine to 0
    graphs: str = "none"  # CUDA graphs: none (eager), compile (reduce-overhead), capture (xlt.core.cuda_graphs)


# settings the config's `training` gets only where it sets them (their flags' defaults are the same
# values): a config without them plans the command lines it planned before they existed
NOT_FILLED = ("warmup_steps", "adam_epsilon", "graphs")

SCHEDULES = ("linear", "constant", "cosine")
PRECISIONS = ("auto", "fp32", "bf16", "fp16")
GRAPH_MODES = ("none", "compile", "capture")  # xlt.core.cuda_graphs (which imports torch)


def precision_label(amp_dtype) -> str:
    """What a forward computed in, as results record it: fp32 (no autocast: None), bfloat16 or
    float16 (the autocast torch.dtype, named without importing torch here)."""
    return str(amp_dtype).removeprefix("torch.") if amp_dtype is not None else "fp32"


# the --help text of every TrainArgs field (a test fails on a field missing here)
TRAIN_HELP = {
    "epochs": "passes over the training data (fractions allowed)",
    "max_steps": "optimiser steps to train; > 0 overrides --epochs",
    "batch_size": "examples per optimiser step (--grad-accum splits them into micro-batches)",
    "lr": "peak learning rate, reached at the end of warm-up",
    "weight_decay": "AdamW weight decay (not on biases and LayerNorm weights)",
    "warmup_ratio": "share of the optimiser steps spent warming the learning rate up from 0",
    "warmup_steps": "optimiser steps spent warming the learning rate up from 0; > 0 overrides --warmup-ratio",
    "adam_epsilon": "AdamW's eps, added to the denominator of every update",
    "max_grad_norm": "clip the gradient to this global norm; 0 = no clipping",
    "grad_accum": "micro-batches each batch of --batch-size is split into, their gradients accumulated "
    "(same results up to float rounding, less memory; not for losses over in-batch negatives)",
    "eval_every": "optimiser steps between dev evaluations; 0 = at the end of every epoch",
    "max_length": "longest input in tokens; longer inputs are truncated",
    "seed": "random seed (data order, initialisation, dropout)",
    "precision": "auto (bf16 autocast on a CUDA device that supports it, else fp16 with a gradient scaler; "
    "fp32 on CPU), fp32, bf16 or fp16",
    "device": RUN_FLAGS["--device"],
    "log_every": "optimiser steps between progress lines (loss, learning rate, samples/s, ETA)",
    "checkpoint_every": "optimiser steps between resumable checkpoints; 0 = only when SLURM signals",
    "length_bucketing": "true: batches of similar length, so dynamic padding pads less",
    "schedule": "learning rate after warm-up: linear (decay to 0), constant, or cosine (decay to 0)",
    "compile": "true: run the model's forward through torch.compile (worth it on GPUs, long runs)",
    "graphs": "CUDA only: none (eager steps), compile (torch.compile reduce-overhead: a CUDA graph "
    "tree per shape) or capture (the whole step, optimiser included, captured per batch shape with torch.cuda.graph)",
}


def add_head_argument(p: argparse.ArgumentParser) -> None:
    """--head of a verb that fine-tunes a classifier (xlt.core.heads)."""
    p.add_argument(
        "--head",
        choices=HEADS,
        default="auto",
        help="classification head: pooler (transformers' own), mean (mask-aware mean + linear, for "
        "checkpoints without a trained pooler), auto (pooler when the checkpoint has one; default)",
    )


def add_freeze_depth_argument(p: argparse.ArgumentParser) -> None:
    """--freeze-depth of a training verb: how much of the encoder stays frozen."""
    p.add_argument(
        "--freeze-depth", type=int, default=-1, help="-1 nothing, 0 embeddings, N embeddings + first N layers"
    )


def add_frozen_prefix_arguments(p: argparse.ArgumentParser, cache_help: str, store_help: str) -> None:
    """--freeze-depth and the two ways of not recomputing the frozen part of a training verb:
    --cache-frozen-prefix (`cache_help`) and --prefix-states, a store's directory (`store_help`)."""
    add_freeze_depth_argument(p)
    p.add_argument("--cache-frozen-prefix", action="store_true", help=cache_help)
    p.add_argument("--prefix-states", default=None, metavar="DIR", help=store_help)


def add_run_dir_arguments(p: argparse.ArgumentParser) -> None:
    """--out, --run-id, --axes and --checkpoint-dir of a training verb that writes one run directory."""
    p.add_argument("--out", required=True, help="run directory: model/ and train.json are written there")
    add_run_arguments(p, "--run-id", "--axes", run_id_default="the --out directory's name")
    p.add_argument(
        "--checkpoint-dir",
        default=None,
        help="resumable training state (default: OUT/checkpoint, not an output); removed once the outputs exist",
    )


def add_store_arguments(p: argparse.ArgumentParser, jobs: str, settings: str) -> None:
    """The arguments of a prefix-store verb (xlt prefix-states, xlt dual-prefix-states) after its
    model and data: `jobs` names the training verb that reads the store, `settings` the config
    section of the store's settings."""
    p.add_argument("--depths", required=True, help="comma-separated freeze depths >= 0 to store, e.g. 0,1,2,...,12")
    p.add_argument("--max-length", type=int, default=128, help=f"the {jobs} jobs' --max-length")
    p.add_argument(
        "--batch-size",
        type=int,
        default=32,
        help=f"examples per forward pass (the {jobs} jobs' --batch-size makes the pass bitwise the per-job cache's)",
    )
    p.add_argument(
        "--storage-dtype",
        choices=PREFIX_STORE_DTYPES,
        default="float16",
        help="float16 (half the disk; rounds each value, relative error <= 2**-11) or float32 (exact)",
    )
    p.add_argument(
        "--max-gib",
        type=float,
        required=True,
        help=f"refuse to write more than this many GiB (config: {settings}.max_gib)",
    )
    p.add_argument(
        "--precision",
        choices=PRECISIONS,
        default="auto",
        help=f"the {jobs} jobs' --precision: the pass runs under the autocast they train with on this "
        "device, and they refuse a store of another precision (default auto)",
    )
    add_run_arguments(p, "--device")
    p.add_argument("--out", required=True, help="the store's directory")


CHOICES = {"schedule": SCHEDULES, "precision": PRECISIONS, "graphs": GRAPH_MODES}


def _kind(default):
    """What a TrainArgs field's flag converts its text with (its default's type; booleans read true/false)."""
    return parse_bool if isinstance(default, bool) else type(default)


def train_setting(name: str, value):
    """A TrainArgs setting given as `value` (a config's or a planned job's), converted as its flag's
    text is by the training verbs' parser (`add_train_arguments`): the value a job will run with."""
    default = {f.name: f.default for f in fields(TrainArgs)}[name]
    try:
        converted = _kind(default)(str(value))
    except (TypeError, ValueError, argparse.ArgumentTypeError) as err:
        raise XltError(f"training setting {name}: {value!r} is no {type(default).__name__} ({err})") from None
    if name in CHOICES and converted not in CHOICES[name]:
        raise XltError(f"training setting {name}: {value!r}; choose one of {', '.join(CHOICES[name])}")
    return converted


def add_train_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("training")
    for f in fields(TrainArgs):
        group.add_argument(
            "--" + f.name.replace("_", "-"),
            type=_kind(f.default),
            default=f.default,
            choices=CHOICES.get(f.name),
            help=f"{TRAIN_HELP[f.name]} (default {f.default})",
        )
    add_run_arguments(group, "--tensorboard")  # monitoring: not a TrainArgs setting, it changes no number


def train_args_from(ns: argparse.Namespace) -> TrainArgs:
    return TrainArgs(**{f.name: getattr(ns, f.name) for f in fields(TrainArgs)})


def add_tracking_arguments(p, table: str) -> None:
    """--track-test / --track-dev; `table` names the checkpoint-choice table they feed."""
    lang_file = ("LANG=FILE", "de=results/data/xnli/de/test.jsonl")  # the items' shape and an example
    p.add_argument(
        "--track-test",
        **key_values(*lang_file),
        help="score this language's test set at every dev evaluation, for the checkpoint-choice table "
        f"{table} (repeatable)",
    )
    p.add_argument(
        "--track-dev",
        **key_values(*lang_file),
        help="that language's dev set, for the target-dev (oracle) choice (repeatable)",
    )
