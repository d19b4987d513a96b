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

from xlt.core import registry, settings
from xlt.core.family_plan import cost_hook
from xlt.core.job_spec import JobSpec
from xlt.core.plan import RESULTS
from xlt.cost import formulas, tokens
from xlt.cost.constants import value as constant
from xlt.cost.data_size import BYTES_PER_ROW, bytes_per_row, rows
from xlt.cost.profile import COMPILE_S, FROZEN_LAYER_SHARE
from xlt.cost.retention import keeps_model, model_kept
from xlt.cost.shapes import model_shape

EVAL_BATCH = constant("eval_batch_size")  # examples per evaluation batch where a job's spec does not say
DEMO_MODEL_RULE, DATA_RULE = "build_demo_model", "prepare_data"  # the shared jobs (xlt.core.plan.shared_jobs)
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


def family_plan(family: str):
    """The plan module whose cost hooks price `family`'s jobs; None for the shared jobs."""
    return registry.plan(family) if family in registry.names() else None


def frozen_layers(plan, spec: JobSpec, depth_flag: int, layers: int, steps: int, steps_per_epoch: int) -> float:
    """Encoder layers at the bottom that a training step runs forward only, on average over its
    steps: what the family's `frozen_layers` hook says (a layer scheme's), else --freeze-depth's."""
    hooked = cost_hook(plan, "frozen_layers")(spec, layers, steps, steps_per_epoch)
    if hooked is not None:
        return min(float(hooked), layers)
    return float(min(max(depth_flag, 0), layers))


def job_cost(config: dict, family: str, rule: str, run_id: str, spec: JobSpec, profile: dict) -> JobCost:
    plan = family_plan(family)
    forms = cost_hook(plan, "token_forms")(rule)
    model = spec.get("model", None)
    vocab, hidden, layers = 0, 64, 1
    train = spec.train_args()
    batch = train.batch_size
    demo = rule == DEMO_MODEL_RULE
    if demo:  # xlt.data.demo_model pretrains at its own batch and length
        vocab, hidden, layers = (int(spec.get(dest)) for dest in ("vocab_size", "hidden_size", "layers"))
        model, batch = "demo", DEMO_BATCH
    elif model:
        vocab, hidden, layers = model_shape(config, str(model))
    params = formulas.encoder_params(hidden, layers) if model else 0
    max_length = DEMO_MAX_LENGTH if demo else train.max_length
    # one reading of --freeze-depth: -1 freezes nothing (the embeddings train too), N the embeddings and
    # N layers; a job without it freezes nothing (tests/core/test_job_specs.py: so do its verb's defaults)
    depth_flag = int(spec.get("freeze_depth", -1))
    depth = max(depth_flag, 0)
    train_paths = [str(p) for p in spec.all("train")]
    dev_paths = [str(p) for dest in DEV_SETTINGS for p in spec.all(dest)]
    other_paths = [
        str(v)
        for v in spec.values()
        if DATA_FILE.match(str(v).split("=", 1)[-1]) and str(v) not in train_paths + dev_paths
    ]
    train_rows, dev_rows = (sum(_file_rows(config, paths)) for paths in (train_paths, dev_paths))
    trains = demo or any(spec.has(dest) for dest in TRAIN_SETTINGS)
    # a family whose training examples are not its data rows (single sentences of pairs) says so
    examples_a_row, tokens_share = cost_hook(plan, "example_shape")(rule, spec) if trains else (1, 1.0)
    data_rows, train_rows = train_rows, train_rows * examples_a_row
    steps, passes = 0, 1
    if demo:
        steps = int(spec.get("pretrain_steps"))
    elif trains:
        steps = formulas.optimizer_steps(train_rows, train.epochs, train.max_steps, batch)
        passes = formulas.evaluations(steps, train.eval_every, train_rows, batch)
        trainings = cost_hook(plan, "training_runs")(rule, spec)
        steps, passes = steps * trainings, passes * trainings
    # the rows a job reads where its arguments name no prepared data file (a split folder): the family says
    train_files = _data_files(train_paths) or cost_hook(plan, "training_data")(rule, spec)
    bucketing = train.length_bucketing
    per_example = (_tokens_per_example(config, forms, train_files[:1], max_length, batch, bucketing) or [max_length])[0]
    per_example *= tokens_share
    if demo:
        per_example = max_length
    train_tokens = steps * batch * per_example  # --grad-accum splits a batch; it does not add examples
    frozen = (
        frozen_layers(plan, spec, depth_flag, layers, steps, math.ceil(train_rows / batch))
        if trains and model
        else depth
    )
    trainable = params * (layers - min(frozen, layers)) / layers if model else 0  # on average over the steps
    cached = trains and depth > 0 and (spec.has("cache_frozen_prefix") or spec.has("prefix_states"))
    if cached:
        train_flops = formulas.training_flops(params, trainable, train_tokens, frozen_forward=False)
    else:  # the forward and the backward added apart (the plan's float rounding since it began)
        train_flops = formulas.training_flops(params, 0, train_tokens) + formulas.training_flops(
            0, trainable, train_tokens
        )
    # a masked LM's vocabulary head: the demo model's at every position, a family's where its hook says
    eval_share = 1.0 if demo else cost_hook(plan, "vocabulary_head")(config, rule, spec)
    head = formulas.vocabulary_head_params(vocab, hidden) if model and eval_share is not None else 0
    eval_share = 1.0 if eval_share is None else eval_share
    compiled = trains and train.compile
    # a compiled training step runs the whole forward, the head at every position (masked_head)
    train_share = 1.0 if compiled else eval_share
    # the tied projection's own gradient only where the embedding trains (the demo's pretraining)
    train_flops += formulas.head_training_flops(head, train_share, train_tokens, weight_gradient=demo)
    step_layers = layers if model else 0
    if cached:  # the frozen layers run once over the training set (or never: the shared store); steps run the top only
        once = (
            formulas.forward_flops(params - trainable, train_rows, per_example) if not spec.has("prefix_states") else 0
        )
        train_flops += once
        step_layers, frozen = layers - frozen, 0.0
    # an evaluating job without --batch-size evaluates at EVAL_BATCH, not at the training default
    eval_batch = int(spec.get("eval_batch_size", 0)) or (batch if not trains and spec.has("batch_size") else EVAL_BATCH)
    dev_tokens, other_tokens = (
        sum(
            n * t
            for n, t in zip(
                _file_rows(config, paths),
                _tokens_per_example(config, forms, _data_files(paths), max_length, eval_batch),
            )
        )
        for paths in (dev_paths, other_paths)
    )
    eval_tokens = (other_tokens + dev_tokens * passes) if model else 0
    # each file of each pass is batched on its own
    dev_batches, other_batches = (
        sum(formulas.batches(n, eval_batch) for n in _file_rows(config, paths)) for paths in (dev_paths, other_paths)
    )
    eval_batches = (other_batches + dev_batches * passes) if model else 0
    if model:  # evaluation sets that are no prepared data (the family's own files): its hook counts them
        for n, per_row, times in cost_hook(plan, "extra_evaluations")(
            config, rule, spec, max_length, eval_batch, passes
        ):
            eval_tokens += times * n * per_row
            eval_batches += times * formulas.batches(n, eval_batch)
    eval_flops = formulas.forward_flops(params + head * eval_share, eval_tokens)
    train_s = (
        overhead_seconds(profile, step_layers, steps, batch, frozen=frozen)
        - profile["overhead_s"]
        + train_flops / profile["train_flops"]
    )
    if compiled:  # the training steps run compiled (evaluation stays eager)
        train_s = train_s * profile.get("compile_step_ratio", 1.0) + profile.get("compile_s", COMPILE_S)
    seconds = (
        profile["overhead_s"]
        + train_s
        + eval_flops / profile["eval_flops"]
        + overhead_seconds(profile, layers if model else 0, eval_batches=eval_batches)
        - profile["overhead_s"]
    )
    all_params = params + vocab * hidden if model else 0
    # FLOPs leave the embedding out (a lookup, not a matrix product), but at --freeze-depth -1 (nothing
    # frozen) a training job keeps its gradient and AdamW moments too: memory and checkpoint count it.
    # Memory is a peak: every layer above --freeze-depth (a gradual scheme's last stage trains them all)
    held = params * (layers - min(depth, layers)) / layers + (
        vocab * hidden if model and trains and depth_flag < 0 else 0
    )
    # a job that only evaluates holds an evaluation batch's activations (`xlt evaluate` batches 64, not 32)
    memory_batch = batch if trains else eval_batch
    memory = formulas.memory_bytes(all_params, held, memory_batch, max_length, hidden, layers, trains) if model else 0
    # a job outside the rules that keep a model saves its weights only when asked (--save-model)
    disk = constant("weight_bytes") * all_params if rule in keeps_model() or spec.has("save_model") else 0
    temp = 0 if rule not in keeps_model() or model_kept(config, family, run_id) else disk
    disk -= temp
    step_flops = (
        formulas.training_flops(params, trainable, batch, per_example, frozen_forward=not cached)
        if trains
        else formulas.forward_flops(params, eval_batch * max_length)
    )
    flops = train_flops + eval_flops
    # a split folder is no data file: its rows are those the family's hook names
    read_rows = data_rows or (rows(config, *train_files[0]) if train_files else 0)
    row_bytes = bytes_per_row(train_files[0][0]) if train_files else BYTES_PER_ROW
    disk += cost_hook(plan, "output_bytes")(rule, spec, read_rows, dev_rows, row_bytes, hidden)
    if rule == DATA_RULE:
        spec = config["datasets"][run_id]
        disk = bytes_per_row(run_id) * sum(
            rows(config, run_id, split) * len(settings.dataset_languages(config, run_id, split))
            for split in _splits(spec)
        )
    if cost_hook(plan, "prefix_store")(rule):  # one eval-mode pass through the deepest stored layer
        depths = [int(d) for d in str(spec.get("depths")).split(",")]
        # computed padded to each batch's longest; stored without padding (an upper bound for a
        # siamese store, which holds each of a pair's two sentences once)
        summaries = tokens.length_summaries(config, *train_files[0])[0] if train_files else None
        sentences = len(forms) if summaries is None else 1  # with lengths, example_tokens adds the forms up
        eval_tokens = train_rows * sentences * tokens.example_tokens(summaries, forms, max_length, batch)
        stored = train_rows * sentences * tokens.example_tokens(summaries, forms, max_length, batch, padded=False)
        flops = formulas.forward_flops(params * max(depths) / layers, eval_tokens)
        store_batches = formulas.batches(train_rows, EVAL_BATCH)
        step_flops = flops / max(store_batches, 1)
        seconds = overhead_seconds(profile, max(depths), eval_batches=store_batches) + flops / profile["eval_flops"]
        disk = len(depths) * stored * hidden * STORE_BYTES[spec.get("storage_dtype")]
        train_s, train_flops = 0.0, 0.0  # no training steps: one evaluation-like pass
    scratch = 0
    if trains and train.checkpoint_every > 0:
        # the resumable checkpoint keeps the optimiser's two moments and the weights, and is deleted
        # once the job's outputs are written: scratch while the job runs, not part of the results
        scratch = constant("trained_param_bytes") * held
    return JobCost(
        family,
        rule,
        run_id,
        seconds,
        memory / 2**30,
        disk / 2**30,
        int(train_tokens),
        int(eval_tokens),
        scratch / 2**30,
        flops,
        step_flops,
        temp / 2**30,
        train_seconds=train_s,
        train_flops=train_flops,
        compiled=compiled,
        loads_model=bool(model),
    )


def _splits(spec: dict) -> list[str]:
    return list(spec["splits"]) if isinstance(spec["splits"], (list, dict)) else []
