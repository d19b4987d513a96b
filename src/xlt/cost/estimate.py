"""Estimated cost of one planned job: seconds, peak accelerator memory, disk (xlt.cost.sweep adds
up a config's jobs).

A job's work is read off its spec (xlt.core.job_spec: its verb's settings, typed, from which its
`xlt` arguments are rendered): the model (shape from the config or the known
models, or its config.json in the hub cache, xlt.cost.shapes), its data files (rows from the
config's dataset sizes, the prepared data's counts once `xlt prepare-data` has run, or the known
sizes, xlt.cost.data_size) and its training settings (JobSpec.train_args: the TrainArgs its verb
parses, at TrainArgs' defaults where the job sets none). What the spec does not say, the job's
family says through its cost hooks (xlt.core.family_plan: the encoder inputs of an example, the
layers a layer scheme freezes, the trainings a job runs, the data behind a split folder, a masked
LM's vocabulary head, evaluation sets that are no prepared data, a frozen-prefix store, the
data-sized files it writes); this module names no family.

Tokens are what the encoder runs: every collate pads a batch to its longest example, so an
example costs its batch's longest length, from the data's token lengths (xlt.cost.tokens), less
with length_bucketing. The FLOPs (xlt.cost.formulas): the forward through the encoder's layers
and the backward through the trained ones (frozen layers below the boundary get no backward
pass), evaluation a forward; embedding lookups are no matrix products, so the encoder layers are
counted, and a masked LM's vocabulary head on top: at every position in the demo model's
pretraining, at the share of the positions the family's hook says in evaluation, and at every
position in a compiled training step, which runs the model's whole forward.
A job's seconds are its FLOPs at the profile's rates plus what the FLOP model does not see
(xlt.cost.profile.OVERHEADS): the start-up, a per-optimiser-step overhead (optimiser update,
collate, dispatch per layer; a frozen layer, run forward only, at FROZEN_LAYER_SHARE of a trained
one) and a per-evaluation-batch overhead. Steps follow xlt.core.training.total_optimizer_steps
(--max-steps > 0 overrides --epochs); a training job evaluates its --dev/--dev-sts data every
--eval-every steps and after the last. With --compile, a training step takes the profile's
compile_step_ratio of its eager time and the job pays compile_s once (xlt.cost.profile). A job's
disk is the model it keeps, the data it prepares (xlt.cost.data_size) and the data-sized files
its family's hook counts. Every constant: xlt.cost.constants.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Callable

from xlt.core.job_spec import JobSpec
from xlt.core.plan import RESULTS
from xlt.cost import formulas, tokens
from xlt.cost.constants import value as constant
from xlt.cost.data_size import rows
from xlt.cost.footprint import DATA_RULE, footprint
from xlt.cost.profile import COMPILE_S, FROZEN_LAYER_SHARE
from xlt.cost.shapes import model_shape
from xlt.cost.work import Work

EVAL_BATCH = constant("eval_batch_size")  # examples per evaluation batch where a job's spec does not say
DEMO_MODEL_RULE = "build_demo_model"  # the shared job that builds a demo model (xlt.core.plan.shared_jobs)
__all__ = ["DATA_RULE", "EVAL_BATCH", "JobCost", "job_cost", "overhead_seconds"]
DEMO_BATCH, DEMO_MAX_LENGTH = constant("demo_pretrain_batch")
DEV_SETTINGS = ("dev", "dev_sts")  # data a training job evaluates at every --eval-every
TRAIN_SETTINGS = ("epochs", "max_steps")  # a job that sets either trains
DATA_FILE = re.compile(rf"^{RESULTS}/data/([^/]+)/([^/]+)/([^/.]+)\.jsonl$")
STORE_BYTES = {"float16": 2, "float32": 4}  # a frozen-prefix store's value (--storage-dtype)


@dataclass
class JobCost:
    family: str
    rule: str
    run_id: str
    seconds: float
    peak_memory_gib: float
    disk_gib: float
    train_tokens: int
    eval_tokens: int
    scratch_gib: float = 0.0  # a running job's checkpoint, deleted when it finishes
    flops: float = 0.0  # training and evaluation FLOPs of the whole job
    step_flops: float = 0.0  # the largest unit of work it hands the accelerator: one step, or one evaluation batch
    temp_gib: float = 0.0  # a temp() model directory, deleted once the rules that read it have run
    slots: int = 1  # gpu_sharing slots (xlt.cost.sharing), set by xlt.cost.sweep.plan
    gpu_seconds: float = 0.0  # accelerator occupancy with gpu_sharing (xlt.cost.sharing), set by xlt.cost.sweep.plan
    # the training steps' part of `seconds` and `flops` (compile included); the start-up and the
    # evaluations are the rest: xlt.cost.sharing charges each phase by its own rate
    train_seconds: float = 0.0
    train_flops: float = 0.0
    compiled: bool = False  # its training steps run compiled (--compile)
    # it loads a model, so its rule asks for a GPU (workflow job_resources); data preparation and
    # splits ask for none and occupy no GPU
    loads_model: bool = False


def _data_files(paths) -> list[tuple[str, str]]:
    """(dataset, split) of each prepared data file among `paths` (other arguments left out)."""
    out = []
    for path in paths:
        match = DATA_FILE.match(str(path).split("=", 1)[-1])
        if match:
            out.append((match.group(1), match.group(3)))
    return out


def _file_rows(config: dict, paths) -> list[int]:
    """Rows of each prepared data file among `paths` (other arguments left out)."""
    return [rows(config, dataset, split) for dataset, split in _data_files(paths)]


def _tokens_per_example(
    config: dict,
    forms: tuple[str, ...],
    files: list[tuple[str, str]],
    max_length: int,
    batch: int,
    bucketing: bool = False,
) -> list[float]:
    """Tokens each file's examples cost, padded as their batches are (xlt.cost.tokens)."""
    return [
        tokens.example_tokens(tokens.length_summaries(config, dataset, split)[0], forms, max_length, batch, bucketing)
        for dataset, split in files
    ]


def overhead_seconds(
    profile: dict, layers: int, steps: int = 0, examples_per_step: int = 0, eval_batches: int = 0, frozen: float = 0.0
) -> float:
    """What the FLOP model does not count: start-up, `steps` optimiser steps of `examples_per_step`
    examples each and `eval_batches` evaluation batches, through a model of `layers` layers, of
    which `frozen` (at the bottom) a training step runs forward only (xlt.cost.profile.FROZEN_LAYER_SHARE)."""
    stepped = layers - frozen * (1 - profile.get("frozen_layer_share", FROZEN_LAYER_SHARE))
    step = (
        profile.get("step_s", 0.0)
        + profile.get("step_layer_s", 0.0) * stepped
        + profile.get("step_example_layer_s", 0.0) * examples_per_step * stepped
    )
    batch = profile.get("eval_batch_s", 0.0) + profile.get("eval_batch_layer_s", 0.0) * layers
    return profile["overhead_s"] + steps * step + eval_batches * batch


def frozen_layers(hook: Callable, spec: JobSpec, depth_flag: int, layers: int, steps: int, per_epoch: int) -> float:
    """Encoder layers at the bottom that a training step runs forward only, on average over its
    steps: what the family's `frozen_layers` hook says (a layer scheme's), else --freeze-depth's."""
    hooked = hook(spec, layers, steps, per_epoch)
    if hooked is not None:
        return min(float(hooked), layers)
    return float(min(max(depth_flag, 0), layers))


def job_cost(config: dict, family: str, rule: str, run_id: str, spec: JobSpec, profile: dict) -> JobCost:
    """A job's cost, stage by stage: its model's shape, the data it reads, its training steps and
    their FLOPs, its evaluations, its seconds, its memory and disk; a job whose family's hook says it
    writes a frozen-prefix store is one evaluation-like pass instead (prefix_store_pass)."""
    job = Work(config, family, rule, run_id, spec, profile)
    for stage in (shape, data, steps, training_flops, evaluations, seconds, footprint):
        stage(job)
    if job.hook("prefix_store")(rule):
        prefix_store_pass(job)
    return JobCost(
        family,
        rule,
        run_id,
        job.seconds,
        job.memory / 2**30,
        job.disk / 2**30,
        int(job.train_tokens),
        int(job.eval_tokens),
        job.scratch / 2**30,
        job.flops,
        job.step_flops,
        job.temp / 2**30,
        train_seconds=job.train_s,
        train_flops=job.train_flops,
        compiled=job.compiled,
        loads_model=bool(job.model),
    )


def shape(job: Work) -> None:
    """The model's shape (the demo model's pretraining at its own batch and length), the training
    settings, and --freeze-depth (-1 freezes nothing, the embeddings train too; N the embeddings and
    N layers; a job without it freezes nothing, as its verb's default: tests/core/test_job_specs.py)."""
    spec, train = job.spec, job.spec.train_args()
    model, vocab, hidden, layers, batch = spec.get("model", None), 0, 64, 1, train.batch_size
    demo = job.rule == DEMO_MODEL_RULE
    if demo:
        vocab, hidden, layers = (int(spec.get(dest)) for dest in ("vocab_size", "hidden_size", "layers"))
        model, batch = "demo", DEMO_BATCH
    elif model:
        vocab, hidden, layers = model_shape(job.config, str(model))
    params = formulas.encoder_params(hidden, layers) if model else 0
    max_length = DEMO_MAX_LENGTH if demo else train.max_length
    depth_flag = int(spec.get("freeze_depth", -1))
    job.set(train=train, model=model, vocab=vocab, hidden=hidden, layers=layers, batch=batch, demo=demo)
    job.set(params=params, max_length=max_length, depth_flag=depth_flag, depth=max(depth_flag, 0))
    job.set(forms=job.hook("token_forms")(job.rule))


def data(job: Work) -> None:
    """The prepared data files it trains on, evaluates at every --eval-every, and reads otherwise, with
    their rows; a family whose training examples are not its data rows (single sentences of pairs) says so."""
    spec = job.spec
    train_paths = [str(p) for p in spec.all("train")]
    dev_paths = [str(p) for dest in DEV_SETTINGS for p in spec.all(dest)]
    other_paths = [
        str(v)
        for v in spec.values()
        if DATA_FILE.match(str(v).split("=", 1)[-1]) and str(v) not in train_paths + dev_paths
    ]
    train_rows, dev_rows = (sum(_file_rows(job.config, paths)) for paths in (train_paths, dev_paths))
    trains = job.demo or any(spec.has(dest) for dest in TRAIN_SETTINGS)
    examples_a_row, tokens_share = job.hook("example_shape")(job.rule, spec) if trains else (1, 1.0)
    job.set(train_paths=train_paths, dev_paths=dev_paths, other_paths=other_paths, dev_rows=dev_rows)
    job.set(data_rows=train_rows, train_rows=train_rows * examples_a_row, trains=trains, tokens_share=tokens_share)
    # the rows a job reads where its arguments name no prepared data file (a split folder): the family says
    job.set(train_files=_data_files(train_paths) or job.hook("training_data")(job.rule, spec))


def steps(job: Work) -> None:
    """Optimiser steps and evaluation passes (xlt.core.training.total_optimizer_steps), and the
    tokens an example costs, padded as its batch is (xlt.cost.tokens)."""
    train, count, passes = job.train, 0, 1
    if job.demo:
        count = int(job.spec.get("pretrain_steps"))
    elif job.trains:
        count = formulas.optimizer_steps(job.train_rows, train.epochs, train.max_steps, job.batch)
        passes = formulas.evaluations(count, train.eval_every, job.train_rows, job.batch)
        trainings = job.hook("training_runs")(job.rule, job.spec)
        count, passes = count * trainings, passes * trainings
    first = job.train_files[:1]
    per_example = (
        _tokens_per_example(job.config, job.forms, first, job.max_length, job.batch, train.length_bucketing)
        or [job.max_length]
    )[0]
    per_example *= job.tokens_share
    if job.demo:
        per_example = job.max_length
    # --grad-accum splits a batch; it does not add examples
    job.set(steps=count, passes=passes, per_example=per_example, train_tokens=count * job.batch * per_example)


def training_flops(job: Work) -> None:
    """The training steps' FLOPs: the forward through every layer, the backward through the trained
    ones (on average over the steps), the frozen prefix once where it is cached, a masked LM's head."""
    spec, params, layers = job.spec, job.params, job.layers
    frozen = job.depth
    if job.trains and job.model:
        per_epoch = math.ceil(job.train_rows / job.batch)
        frozen = frozen_layers(job.hook("frozen_layers"), spec, job.depth_flag, layers, job.steps, per_epoch)
    trainable = params * (layers - min(frozen, layers)) / layers if job.model else 0
    cached = job.trains and job.depth > 0 and (spec.has("cache_frozen_prefix") or spec.has("prefix_states"))
    if cached:
        flops = formulas.training_flops(params, trainable, job.train_tokens, frozen_forward=False)
    else:  # the forward and the backward added apart (the plan's float rounding since it began)
        flops = formulas.training_flops(params, 0, job.train_tokens) + formulas.training_flops(
            0, trainable, job.train_tokens
        )
    # a masked LM's vocabulary head: the demo model's at every position, a family's where its hook says
    eval_share = 1.0 if job.demo else job.hook("vocabulary_head")(job.config, job.rule, spec)
    head = formulas.vocabulary_head_params(job.vocab, job.hidden) if job.model and eval_share is not None else 0
    eval_share = 1.0 if eval_share is None else eval_share
    compiled = job.trains and job.train.compile
    # a compiled training step runs the whole forward, the head at every position (masked_head); the
    # tied projection's own gradient only where the embedding trains (the demo's pretraining)
    flops += formulas.head_training_flops(
        head, 1.0 if compiled else eval_share, job.train_tokens, weight_gradient=job.demo
    )
    step_layers = layers if job.model else 0
    if cached:  # the frozen layers run once over the training set (or never: the shared store); steps run the top only
        once = (
            formulas.forward_flops(params - trainable, job.train_rows, job.per_example)
            if not spec.has("prefix_states")
            else 0
        )
        flops += once
        step_layers, frozen = layers - frozen, 0.0
    job.set(frozen=frozen, trainable=trainable, cached=cached, train_flops=flops, head=head, eval_share=eval_share)
    job.set(compiled=compiled, step_layers=step_layers)


def evaluations(job: Work) -> None:
    """Evaluation tokens and batches: its other data files once, its dev data every pass, and the
    evaluation sets that are no prepared data (the family's own files), which its hook counts."""
    config, spec = job.config, job.spec
    # an evaluating job without --batch-size evaluates at EVAL_BATCH, not at the training default
    eval_batch = int(spec.get("eval_batch_size", 0)) or (
        job.batch if not job.trains and spec.has("batch_size") else EVAL_BATCH
    )
    dev_tokens, other_tokens = (
        sum(
            n * t
            for n, t in zip(
                _file_rows(config, paths),
                _tokens_per_example(config, job.forms, _data_files(paths), job.max_length, eval_batch),
            )
        )
        for paths in (job.dev_paths, job.other_paths)
    )
    eval_tokens = (other_tokens + dev_tokens * job.passes) if job.model else 0
    # each file of each pass is batched on its own
    dev_batches, other_batches = (
        sum(formulas.batches(n, eval_batch) for n in _file_rows(config, paths))
        for paths in (job.dev_paths, job.other_paths)
    )
    eval_batches = (other_batches + dev_batches * job.passes) if job.model else 0
    if job.model:
        extra = job.hook("extra_evaluations")(config, job.rule, spec, job.max_length, eval_batch, job.passes)
        for n, per_row, times in extra:
            eval_tokens += times * n * per_row
            eval_batches += times * formulas.batches(n, eval_batch)
    eval_flops = formulas.forward_flops(job.params + job.head * job.eval_share, eval_tokens)
    job.set(eval_batch=eval_batch, eval_tokens=eval_tokens, eval_batches=eval_batches, eval_flops=eval_flops)


def seconds(job: Work) -> None:
    """FLOPs at the profile's rates plus the overheads the FLOP model does not see (a compiled
    job's steps at the profile's compile_step_ratio, and its compile_s once)."""
    profile = job.profile
    train_s = (
        overhead_seconds(profile, job.step_layers, job.steps, job.batch, frozen=job.frozen)
        - profile["overhead_s"]
        + job.train_flops / profile["train_flops"]
    )
    if job.compiled:  # the training steps run compiled (evaluation stays eager)
        train_s = train_s * profile.get("compile_step_ratio", 1.0) + profile.get("compile_s", COMPILE_S)
    total = (
        profile["overhead_s"]
        + train_s
        + job.eval_flops / profile["eval_flops"]
        + overhead_seconds(profile, job.layers if job.model else 0, eval_batches=job.eval_batches)
        - profile["overhead_s"]
    )
    job.set(train_s=train_s, seconds=total)


def prefix_store_pass(job: Work) -> None:
    """A job that writes a store of frozen-prefix states (its family's `prefix_store` hook): one
    eval-mode pass through the deepest stored layer, computed padded to each batch's longest and
    stored without padding (an upper bound for a siamese store, which holds each of a pair's two
    sentences once); no training steps."""
    depths = [int(d) for d in str(job.spec.get("depths")).split(",")]
    files, forms, max_length, batch = job.train_files, job.forms, job.max_length, job.batch
    summaries = tokens.length_summaries(job.config, *files[0])[0] if files else None
    sentences = len(forms) if summaries is None else 1  # with lengths, example_tokens adds the forms up
    eval_tokens = job.train_rows * sentences * tokens.example_tokens(summaries, forms, max_length, batch)
    stored = job.train_rows * sentences * tokens.example_tokens(summaries, forms, max_length, batch, padded=False)
    flops = formulas.forward_flops(job.params * max(depths) / job.layers, eval_tokens)
    store_batches = formulas.batches(job.train_rows, EVAL_BATCH)
    total = overhead_seconds(job.profile, max(depths), eval_batches=store_batches) + flops / job.profile["eval_flops"]
    disk = len(depths) * stored * job.hidden * STORE_BYTES[job.spec.get("storage_dtype")]
    job.set(eval_tokens=eval_tokens, flops=flops, step_flops=flops / max(store_batches, 1), seconds=total, disk=disk)
    job.set(train_s=0.0, train_flops=0.0)
