"""Estimated cost of every job a config plans: seconds, peak accelerator memory, disk.

The jobs are those the Snakefile runs (xlt.core.plan.shared_jobs and each family's
plan.jobs). A job's work is read off its `xlt` arguments: the model (shape from the config or
KNOWN_MODELS, or its config.json in the hub cache), its data files (rows from the config's dataset
sizes, the prepared data's counts once `xlt prepare-data` has run, or KNOWN_ROWS) and its
training settings. Tokens are what the encoder runs: every collate pads a batch to its longest
example, so an example costs its batch's longest length, from the data's token lengths
(xlt.cost.tokens: the prepared data's sample, else a table measured on real text, else
--max-length), less with length_bucketing. Training costs 2 x params x tokens forward plus
4 x trainable params x tokens backward (frozen layers below the boundary get no backward pass);
evaluation 2 x params x tokens. Embedding lookups are not matrix products, so `params` counts the
encoder layers only; a masked LM's output projection to the vocabulary (tied to the embedding,
but a matrix product) is counted on top (MLM_RULES): at every position for the demo model's
pretraining, at the masked share of the positions (--mlm-probability, else the config's
adapt.mlm_probability) for adapt's jobs, whose head runs on the masked positions only
(xlt.families.adapt.masked_head; an upper bound, as padding and special tokens are never masked),
except in a compiled training step, which runs the model's whole forward.
A job's seconds are its FLOPs at the profile's rates plus what the FLOP model does not see
(xlt.cost.profile.OVERHEADS): the start-up, a per-optimiser-step overhead (optimiser update,
collate, dispatch per layer; a frozen layer, run forward only, at FROZEN_LAYER_SHARE of a trained
one, the frozen layers from --freeze-depth or the family plan's `frozen_layers`) and a
per-evaluation-batch overhead. Steps follow
xlt.core.training.total_optimizer_steps (--max-steps > 0 overrides --epochs); a training job
evaluates its --dev/--dev-sts data every --eval-every steps and after the last. With --compile,
a training step takes the profile's compile_step_ratio of its eager time and the job pays
compile_s once (xlt.cost.profile). A job's disk is the model it keeps, the data it prepares
(xlt.cost.data_size) and the outputs that grow with its data (xlt.cost.outputs).
"""

from __future__ import annotations

import math
import re
from dataclasses import asdict, dataclass

from xlt.core import settings
from xlt.core.plan import RESULTS, shared_jobs
from xlt.cost import outputs, tokens
from xlt.cost.data_size import BYTES_PER_ROW, bytes_per_row, rows
from xlt.cost.job_args import value as _value
from xlt.cost.job_args import values as _values
from xlt.cost.profile import COMPILE_S, FROZEN_LAYER_SHARE
from xlt.cost.retention import keeps_model, model_kept
from xlt.cost.shapes import hub_cache_gib, model_shape

EVAL_BATCH = 64  # examples per evaluation batch where a job's flags do not say (predict_logits' default)
# benchmarks/prefix_cache.py --mbert --device cuda (BENCHMARKS.md, docs/performance.md)
PREFIX_CACHE_GPU = "saved 1.7 % over the whole freeze-depth sweep at mBERT's shape (measured)"
DEV_FLAGS = ("--dev", "--dev-sts")  # data a training job evaluates at every --eval-every
TRAIN_FLAGS = ("--epochs", "--max-steps")
DATA_FILE = re.compile(rf"^{RESULTS}/data/([^/]+)/([^/]+)/([^/.]+)\.jsonl$")
PREPARED = re.compile(rf"{RESULTS}/data/([^/\s]+)/")  # a prepared dataset's folder, anywhere in a string
# a MonoX job's --split: monox_split's folder, cut from its task dataset's train split
SPLIT_DIR = re.compile(rf"^{RESULTS}/runs/monox/splits/([^/]+)/")
# masked LMs: their head projects onto the vocabulary (xlt.data.demo_model, xlt.families.adapt)
MLM_RULES = ("build_demo_model", "adapt_mlm", "adapt_reference_perplexity")
# ... at the masked positions only (sparse prediction, xlt.families.adapt.masked_head)
SPARSE_MLM_RULES = ("adapt_mlm", "adapt_reference_perplexity")


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
    slots: int = 1  # gpu_sharing slots (xlt.cost.sharing), set by plan()
    gpu_seconds: float = 0.0  # accelerator occupancy with gpu_sharing (xlt.cost.sharing), set by plan()
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


def _adapt_sets(
    config: dict, args: list[str], flags: tuple[str, ...], max_length: int, batch: int
) -> list[tuple[int, float]]:
    """(rows, tokens a row) of each fixed-masked set an adapt job scores after `flags`: the family's
    own files (xlt.families.adapt.plan.eval_sets), `eval_sentences` rows of the target's held-out
    text or, size-matched, of the multilingual set's sentences (planned at its longer field)."""
    family = config.get("adapt") or {}
    if not family:
        return []
    target, multi = family["target"], family["multilingual"]
    n = min(family["eval_sentences"], rows(config, target["dataset"], target["eval_split"]))
    out = []
    for path in (p for flag in flags for p in _values(args, flag)):
        source = (
            (multi["dataset"], multi["split"])
            if "/multilingual/" in path
            else (target["dataset"], target["eval_split"])
        )
        out.append(
            (n, tokens.example_tokens(tokens.length_summaries(config, *source)[0], "adapt_mlm", max_length, batch))
        )
    return out


def head_share(config: dict, rule: str, args: list[str]) -> float:
    """The share of a masked LM's positions its vocabulary head projects: the masked share for
    adapt's sparse prediction (the job's --mlm-probability, else the config's), else all."""
    if rule not in SPARSE_MLM_RULES:
        return 1.0
    given = _values(args, "--mlm-probability")
    configured = (config.get("adapt") or {}).get("mlm_probability")
    if given:
        return float(given[0])
    return float(configured) if configured is not None else 1.0  # unknown: the head counted in full


def _flag(args: list[str], flag: str) -> bool:
    return str(_value(args, flag, "False")).strip().lower() in ("true", "yes", "1", "on")


def _tokens_per_example(
    config: dict, rule: str, files: list[tuple[str, str]], max_length: int, batch: int, bucketing: bool = False
) -> list[float]:
    """Tokens each file's examples cost, padded as their batches are (xlt.cost.tokens)."""
    return [
        tokens.example_tokens(tokens.length_summaries(config, dataset, split)[0], rule, max_length, batch, bucketing)
        for dataset, split in files
    ]


def _data_rows(config: dict, paths) -> int:
    return sum(_file_rows(config, paths))


def optimizer_steps(train_rows: int, epochs: float, max_steps: int, batch_size: int) -> int:
    """Optimiser steps of a training run, as xlt.core.training.total_optimizer_steps counts them
    (not imported: planning stays free of torch): one batch of `batch_size` per step, however
    --grad-accum splits it."""
    if max_steps > 0:
        return max_steps
    return max(1, math.ceil(math.ceil(train_rows / batch_size) * epochs))


def evaluations(steps: int, eval_every: int, train_rows: int, batch_size: int) -> int:
    """How often xlt.core.training.train evaluates: every `eval_every` steps (0: once an epoch) and after the last."""
    every = eval_every or math.ceil(max(train_rows, 1) / batch_size)
    return steps // every + (1 if steps % every else 0)


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


def frozen_layers(family: str, args: list[str], layers: int, steps: int, steps_per_epoch: int) -> float:
    """Encoder layers at the bottom that a training step runs forward only, on average over its
    steps: --freeze-depth's, or what the family's plan says (its optional `frozen_layers` with these
    arguments: adapt's layer schemes)."""
    plan = settings.plan_module(family) if family in settings.FAMILIES else None
    if plan is not None and hasattr(plan, "frozen_layers"):
        return min(float(plan.frozen_layers(args, layers, steps, steps_per_epoch)), layers)
    return float(min(max(_value(args, "--freeze-depth", -1), 0), layers))


def _example_shape(family: str, rule: str, args: list[str]) -> tuple[int, float]:
    """(training examples a data row, a row's tokens an example has) of a training job: the family
    plan's optional example_shape(rule, args), else (1, 1.0)."""
    plan = settings.plan_module(family) if family in settings.FAMILIES else None
    if plan is not None and hasattr(plan, "example_shape"):
        return plan.example_shape(rule, args)
    return 1, 1.0


def job_cost(config: dict, family: str, rule: str, run_id: str, args: list, profile: dict) -> JobCost:
    args = [str(a) for a in args]
    model = _values(args, "--model")
    vocab, hidden, layers = 0, 64, 1
    batch = _value(args, "--batch-size", 32)
    if rule == "build_demo_model":  # xlt.data.demo_model: batch 32, texts up to 64 tokens
        vocab, hidden, layers = (
            _value(args, "--vocab-size", 1000),
            _value(args, "--hidden-size", 64),
            _value(args, "--layers", 12),
        )
        model, batch = ["demo"], 32
    elif model:
        vocab, hidden, layers = model_shape(config, model[0])
    params = 12 * hidden * hidden * layers if model else 0
    max_length = 64 if rule == "build_demo_model" else _value(args, "--max-length", 128)
    train_paths = _values(args, "--train") + _values(args, "--split")
    dev_paths = [args[i + 1] for i, a in enumerate(args[:-1]) if a in DEV_FLAGS]
    other_paths = [a for a in args if DATA_FILE.match(a.split("=", 1)[-1]) and a not in train_paths + dev_paths]
    train_rows, dev_rows, other_eval_rows = (
        _data_rows(config, paths) for paths in (train_paths, dev_paths, other_paths)
    )
    trains = rule == "build_demo_model" or any(flag in args for flag in TRAIN_FLAGS)
    # a family whose training examples are not its data rows (the dual family's distillation on
    # single sentences: two examples a pair, each half a pair's tokens) says so (its plan's example_shape)
    examples_a_row, tokens_share = _example_shape(family, rule, args) if trains else (1, 1.0)
    data_rows, train_rows = train_rows, train_rows * examples_a_row
    steps, passes = 0, 1
    if rule == "build_demo_model":
        steps = _value(args, "--pretrain-steps", 300)
    elif trains:
        steps = optimizer_steps(train_rows, _value(args, "--epochs", 1.0), _value(args, "--max-steps", 0), batch)
        passes = evaluations(steps, _value(args, "--eval-every", 0), train_rows, batch)
        if _value(args, "--mode", "") == "self_train":  # MonoX self-training: the gold run, then --rounds more
            trainings = 1 + _value(args, "--rounds", 1)
            steps, passes = steps * trainings, passes * trainings
    train_files = _data_files(train_paths) or [(m.group(1), "train") for m in map(SPLIT_DIR.match, train_paths) if m]
    bucketing = _flag(args, "--length-bucketing")
    per_example = (_tokens_per_example(config, rule, train_files[:1], max_length, batch, bucketing) or [max_length])[0]
    per_example *= tokens_share
    if rule == "build_demo_model":
        per_example = max_length
    train_tokens = steps * batch * per_example  # --grad-accum splits a batch; it does not add examples
    depth = max(_value(args, "--freeze-depth", -1), 0)
    frozen = frozen_layers(family, args, layers, steps, math.ceil(train_rows / batch)) if trains and model else depth
    trainable = params * (layers - min(frozen, layers)) / layers if model else 0  # on average over the steps
    train_flops = 2 * params * train_tokens + 4 * trainable * train_tokens
    head = (
        (vocab * hidden + hidden * hidden) if model and rule in MLM_RULES else 0
    )  # the MLM head: transform + vocabulary
    eval_share = head_share(config, rule, args)
    # a compiled training step runs the whole forward, the head at every position (masked_head)
    train_share = 1.0 if trains and _flag(args, "--compile") else eval_share
    # forward and the backward to its input; the tied projection's own gradient only where the
    # embedding trains (the demo's pretraining; adapt never trains the embeddings)
    train_flops += (4 + (2 if rule == "build_demo_model" else 0)) * head * train_share * train_tokens
    step_layers = layers if model else 0
    cached = trains and depth > 0 and ("--cache-frozen-prefix" in args or "--prefix-states" in args)
    if cached:  # the frozen layers run once over the training set (or never: the shared store); steps run the top only
        once = 2 * (params - trainable) * train_rows * per_example if "--prefix-states" not in args else 0
        train_flops = 6 * trainable * train_tokens + once
        step_layers, frozen = layers - frozen, 0.0
    eval_batch = _value(args, "--eval-batch-size", 0) or (
        EVAL_BATCH if trains else _value(args, "--batch-size", EVAL_BATCH)
    )
    dev_tokens, other_tokens = (
        sum(
            n * t
            for n, t in zip(
                _file_rows(config, paths), _tokens_per_example(config, rule, _data_files(paths), max_length, eval_batch)
            )
        )
        for paths in (dev_paths, other_paths)
    )
    eval_tokens = (other_tokens + dev_tokens * passes) if model else 0
    eval_flops = 2 * (params + head * eval_share) * eval_tokens
    # each file of each pass is batched on its own
    dev_batches, other_batches = (
        sum(math.ceil(n / eval_batch) for n in _file_rows(config, paths)) for paths in (dev_paths, other_paths)
    )
    eval_batches = (other_batches + dev_batches * passes) if model else 0
    if model and rule in ("adapt_mlm", "adapt_reference_perplexity"):
        # every checkpoint (step 0 and each --eval-every) scores --target and --eval; --test and --data once
        for flags, times in ((("--target", "--eval"), passes + 1), (("--test", "--data"), 1)):
            for n, per_row in _adapt_sets(config, args, flags, max_length, eval_batch):
                eval_tokens += times * n * per_row
                eval_batches += times * math.ceil(n / eval_batch)
        eval_flops = 2 * (params + head * eval_share) * eval_tokens
    train_s = (
        overhead_seconds(profile, step_layers, steps, batch, frozen=frozen)
        - profile["overhead_s"]
        + train_flops / profile["train_flops"]
    )
    if trains and _flag(args, "--compile"):  # the training steps run compiled (evaluation stays eager)
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
        vocab * hidden if model and trains and _value(args, "--freeze-depth", -1) < 0 else 0
    )
    activations = (34 * batch * max_length * hidden + 5 * max(hidden // 64, 1) * max_length**2 * batch) * layers
    memory = (4 * all_params + 12 * held + activations * (1 if trains else 0.1)) if model else 0
    # a MonoX teacher or student saves its weights only when config keep_models adds --save-model
    disk = 4 * all_params if rule in keeps_model() or "--save-model" in args else 0
    temp = 0 if rule not in keeps_model() or model_kept(config, family, run_id) else disk
    disk -= temp
    step_flops = (
        (6 * trainable if cached else 2 * params + 4 * trainable) * batch * per_example
        if trains
        else 2 * params * eval_batch * max_length
    )
    flops = train_flops + eval_flops
    # a MonoX split folder is no data file: its rows are its task's train split's
    read_rows = data_rows or (rows(config, *train_files[0]) if train_files else 0)
    row_bytes = bytes_per_row(train_files[0][0]) if train_files else BYTES_PER_ROW
    disk += outputs.output_bytes(rule, args, read_rows, dev_rows, row_bytes, hidden)
    if rule == "prepare_data":
        spec = config["datasets"][run_id]
        disk = bytes_per_row(run_id) * sum(
            rows(config, run_id, split) * len(settings.dataset_languages(config, run_id, split))
            for split in _splits(spec)
        )
    if rule in ("prefix_states", "prefix_states_dual"):  # one eval-mode pass through the deepest stored layer
        depths = [int(d) for d in _value(args, "--depths", "0").split(",")]
        # computed padded to each batch's longest; stored without padding (an upper bound for the dual
        # store, which holds each of a pair's two sentences once)
        summaries = tokens.length_summaries(config, *train_files[0])[0] if train_files else None
        sentences = 2 if rule == "prefix_states_dual" and summaries is None else 1  # else RULE_FORMS counts both
        eval_tokens = train_rows * sentences * tokens.example_tokens(summaries, rule, max_length, batch)
        stored = train_rows * sentences * tokens.example_tokens(summaries, rule, max_length, batch, padded=False)
        flops = 2 * params * max(depths) / layers * eval_tokens
        step_flops = flops / max(math.ceil(train_rows / EVAL_BATCH), 1)
        seconds = (
            overhead_seconds(profile, max(depths), eval_batches=math.ceil(train_rows / EVAL_BATCH))
            + flops / profile["eval_flops"]
        )
        disk = len(depths) * stored * hidden * (2 if _value(args, "--storage-dtype", "float16") == "float16" else 4)
        train_s, train_flops = 0.0, 0.0  # no training steps: one evaluation-like pass
    scratch = 0
    if trains and "--checkpoint-every" in args and _value(args, "--checkpoint-every", 0) > 0:
        # the resumable checkpoint keeps the optimiser's two moments and the weights, and is deleted
        # once the job's outputs are written: scratch while the job runs, not part of the results
        scratch = 12 * held
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
        compiled=trains and _flag(args, "--compile"),
        loads_model=bool(model),
    )


def _splits(spec: dict) -> list[str]:
    return list(spec["splits"]) if isinstance(spec["splits"], (list, dict)) else []


def all_jobs(config: dict):
    """(family, rule, run id, args) for every job the workflow runs, from the planning code the rules
    read. A declared dataset no job reads is never prepared (the workflow runs what its targets
    need): its prepare_data job is left out."""
    family_jobs = [
        (family, rule, run_id, job)
        for family in settings.FAMILIES
        if settings.family(config, family)
        for rule, jobs in settings.plan_module(family).jobs(config).items()
        for run_id, job in jobs.items()
    ]
    read = {
        match
        for *_, job in family_jobs
        for text in _strings([job.args, job.inputs])
        for match in PREPARED.findall(text)
    }
    for rule, jobs in shared_jobs(config).items():
        for run_id, job in jobs.items():
            if rule != "prepare_data" or run_id in read:
                yield "shared", rule, run_id, job.args
    for family, rule, run_id, job in family_jobs:
        yield family, rule, run_id, job.args


def _strings(value) -> list[str]:
    """Every string inside nested lists, tuples and dicts (a job's arguments and inputs)."""
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, (list, tuple)):
        return [s for v in value for s in _strings(v)]
    return [str(value)]


def plan(config: dict, profile: dict) -> dict:
    from xlt.cost import sharing

    jobs = [job_cost(config, *job, profile=profile) for job in all_jobs(config)]
    sharing.apply(jobs, config, profile)
    families = {}
    for job in jobs:
        f = families.setdefault(
            job.family,
            {"jobs": 0, "hours": 0.0, "gpu_hours": 0.0, "peak_memory_gib": 0.0, "disk_gib": 0.0, "temp_gib": 0.0},
        )
        f["jobs"] += 1
        f["hours"] += job.seconds / 3600
        f["gpu_hours"] += job.gpu_seconds / 3600
        f["peak_memory_gib"] = max(f["peak_memory_gib"], job.peak_memory_gib)
        f["disk_gib"] += job.disk_gib
        f["temp_gib"] += job.temp_gib
    hub = hub_cache_gib(config)
    total = {
        "jobs": len(jobs),
        "hours": sum(f["hours"] for f in families.values()),
        "gpu_hours": sum(f["gpu_hours"] for f in families.values()),
        "peak_memory_gib": max((f["peak_memory_gib"] for f in families.values()), default=0.0),
        "disk_gib": sum(f["disk_gib"] for f in families.values()) + hub,
        "hub_cache_gib": hub,
        "temp_gib": sum(f["temp_gib"] for f in families.values()),
        "scratch_gib": max((j.scratch_gib for j in jobs), default=0.0),
    }
    return {
        "profile": {k: v for k, v in profile.items() if k != "measured"},
        "families": families,
        "total": total,
        "gpu_sharing": dict(config.get("gpu_sharing") or {"slots_per_gpu": 1}),
        "jobs": [asdict(j) for j in jobs],
    }


def format_table(result: dict) -> str:
    """Per family: jobs, the jobs' own hours, accelerator hours with gpu_sharing (the same without
    it, or on a CPU profile), one job's peak memory, and the disk the sweep leaves."""
    gpu = bool(result["profile"].get("gpu"))
    slots = int(result.get("gpu_sharing", {}).get("slots_per_gpu", 1))
    lines = [
        f"profile: {result['profile']['name']} ({result['profile']['source']})",
        f"{'family':<14}{'jobs':>6}{'job-h' if gpu else 'CPU-h':>10}"
        + (f"{'GPU-h':>10}" if gpu else "")
        + f"{'peak mem GiB':>14}{'disk GiB':>11}",
    ]
    for name, f in [*result["families"].items(), ("total", result["total"])]:
        lines.append(
            f"{name:<14}{f['jobs']:>6}{f['hours']:>10.2f}"
            + (f"{f['gpu_hours']:>10.2f}" if gpu else "")
            + f"{f['peak_memory_gib']:>14.2f}{f['disk_gib']:>11.2f}"
        )
    if gpu:
        lines.append(
            f"(job-h: each job's own hours, summed; GPU-h: what the jobs occupy a GPU for with {slots} "
            f"slot(s) a GPU (config gpu_sharing; xlt.cost.sharing: the gain is assumed, not measured))"
        )
    lines.append(
        f"(disk: what the sweep leaves, {result['total']['hub_cache_gib']:.2f} GiB of hub cache included; "
        f"temp() model directories, {result['total']['temp_gib']:.2f} GiB in all, go once their readers ran; "
        f"a running training job also needs up to {result['total']['scratch_gib']:.2f} GiB for its checkpoint; "
        "peak memory is one job's, accelerator when it has one)"
    )
    lines.append("tokens: each batch padded to its longest example, from the data's token lengths (xlt.cost.tokens)")
    if "compile_step_ratio" in result["profile"]:
        lines.append(
            f"torch.compile (jobs with compile: true): a training step x{result['profile']['compile_step_ratio']:.3f} "
            f"(measured at batch 128 x 128 tokens, assumed at other shapes) + "
            f"{result['profile'].get('compile_s', COMPILE_S):.0f} s a job (assumed, not measured)"
        )
    if result["profile"].get("gpu"):
        lines.append(f"frozen-prefix cache: not a GPU saving to count on; on an H100 it {PREFIX_CACHE_GPU}")
    return "\n".join(lines)
