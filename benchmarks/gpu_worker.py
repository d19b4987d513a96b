"""One training process of benchmarks/gpu_check.py: a random-init BERT classifier trained with
xlt.core.training.train on XNLI-like token sequences, every step's start time recorded.

Lengths: drawn from the plan's own length table for facebook/xnli sentence pairs
(xlt.cost.tokens.KNOWN_LENGTHS, measured by benchmarks/padding.py), by inverse transform
sampling of its percentiles (xlt.cost.tokens.quantile), truncated at `max_length`; the collate
pads each batch to its longest example (benchmarks/loop.py's pad_collate), rounded up to a
multiple as the project's collates do on the device (xlt.core.padding) or to the spec's
`pad_multiple`. So the sample and the plan's prediction read the same length distribution.

Timestamps are wall-clock (time.time()), comparable between processes on one machine. The loop
waits for the device only when it reads the losses (every 32 steps, xlt.core.train_step), so a
step's start marks when the host queued it; the run's end is taken after a device sync, and
gpu_check measures the steady state from a step's start to that end.

    python benchmarks/gpu_worker.py '<JSON spec>'   (prints one JSON line; gpu_check.py starts it)
"""

from __future__ import annotations

import contextlib
import functools
import json
import sys
import time
from pathlib import Path

from loop import TokenCounter, pad_collate

XNLI = "facebook/xnli"  # the paper's freeze-depth training data (config/paper.yaml: datasets.xnli)


def sample_lengths(n: int, max_length: int, seed: int, dataset: str = XNLI) -> list[int]:
    """`n` sentence-pair lengths (tokens, [CLS]/[SEP] included) drawn from the plan's table."""
    import numpy as np

    from xlt.cost.tokens import KNOWN_LENGTHS, quantile

    u = np.random.default_rng(seed).random(n)
    lengths = np.rint(quantile(KNOWN_LENGTHS[dataset]["pair"], u, max_length)).astype(int)
    return np.maximum(lengths, 3).tolist()  # at least [CLS] a [SEP]


def xnli_like_examples(n: int, max_length: int, vocab: int, seed: int) -> list[dict]:
    import torch

    g = torch.Generator().manual_seed(seed)
    labels = torch.randint(0, 3, (n,), generator=g).tolist()
    return [
        {"input_ids": torch.randint(5, vocab, (length,), generator=g).tolist(), "label": label}
        for length, label in zip(sample_lengths(n, max_length, seed), labels)
    ]


class UsefulTokenCounter(TokenCounter):
    """Also records each batch's real (unpadded) tokens."""

    def __init__(self, collate):
        super().__init__(collate)
        self.useful = []

    def __call__(self, examples):
        batch = super().__call__(examples)
        self.useful.append(int(batch["attention_mask"].sum()))
        return batch


def wait_for_go(barrier: str, index: int, timeout_s: float) -> None:
    """Concurrent workers: say ready, then wait until the driver starts all of them at once."""
    folder = Path(barrier)
    (folder / f"ready-{index}").write_text("")
    deadline = time.time() + timeout_s
    while not (folder / "go").exists():
        if time.time() > deadline:
            raise SystemExit(f"worker {index}: no go signal in {timeout_s:.0f} s")
        time.sleep(0.02)


def run(spec: dict) -> dict:
    import torch
    from shapes import SHAPES, random_classifier

    from xlt.core.classification import classification_loss
    from xlt.core.freezing import freeze
    from xlt.core.models import pick_device
    from xlt.core.padding import pad_multiple
    from xlt.core.train_args import TrainArgs
    from xlt.core.train_inputs import LayerSchedule, Objective
    from xlt.core.training import train

    started = time.time()
    if spec.get("threads"):
        torch.set_num_threads(spec["threads"])
    if spec.get("compile_backend") or spec.get("compile_mode"):
        torch.compile = compile_with(torch.compile, spec.get("compile_backend"), spec.get("compile_mode"))
    shape = SHAPES[spec["shape"]]
    steps, batch = spec["steps"], spec["batch_size"]
    examples = xnli_like_examples(steps * batch, spec["max_length"], shape.vocab, spec["seed"])
    model = random_classifier(shape, spec["seed"])
    if spec["depth"] >= 0:
        freeze(model, spec["depth"])
    device = pick_device(spec["device"])
    model.to(device)
    if device.type == "cuda":
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
    if spec.get("barrier"):
        wait_for_go(spec["barrier"], spec["index"], spec.get("barrier_timeout_s", 300))
    # padded as the project pads on this device (xlt.core.padding) unless the spec says otherwise
    multiple = spec.get("pad_multiple") or pad_multiple(device) or 1
    collate = UsefulTokenCounter(functools.partial(pad_collate, multiple=multiple))
    marks = []
    on_step = lambda step, epoch: marks.append(time.time())  # noqa: E731
    profiler = None
    if spec.get("profile"):  # torch.profiler over 10 steps after the warm-up (the run's step times then include it)
        profiler = profiled_steps(spec["warmup"], device)
        on_step = lambda step, epoch: (marks.append(time.time()), profiler.step())  # noqa: E731
    args = TrainArgs(
        max_steps=steps,
        batch_size=batch,
        lr=2e-5,
        weight_decay=0.01,
        warmup_ratio=0.1,
        max_grad_norm=1.0,
        max_length=spec["max_length"],
        seed=spec["seed"],
        precision="auto",
        device=str(device),
        log_every=10**9,
        length_bucketing=spec["bucketing"],
        compile=spec["compile"],
        graphs=spec.get("graphs", "none"),
    )
    train_start = time.time()
    with profiler or contextlib.nullcontext():
        train(model, Objective(examples, collate, classification_loss), args, layers=LayerSchedule(on_step=on_step))
        if device.type == "cuda":
            torch.cuda.synchronize()
    end = time.time()
    return {
        "setup_s": train_start - started,
        "train_start": train_start,
        "step_starts": marks,
        "end": end,
        "padded_tokens": collate.sizes,
        "useful_tokens": collate.useful,
        "device": str(device),
        "device_name": torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu",
        "peak_gib": torch.cuda.max_memory_allocated(device) / 2**30 if device.type == "cuda" else None,
        "threads": torch.get_num_threads(),
        "pad_multiple": multiple,
        "profile": profile_tables(profiler) if profiler is not None else None,
        "gpu_busy": gpu_busy(profiler, PROFILED_STEPS) if profiler is not None else None,
    }


def compile_with(compile_fn, backend: str | None, mode: str | None):
    """torch.compile as xlt.core.train_step.compiled_loss calls it, with another backend (the smoke
    test's CPU stand-in for inductor, see gpu_check.py) or another mode. mode "reduce-overhead"
    (CUDA graphs, one per input shape) compiles static shapes: the padding to a multiple of 8 leaves
    at most max_length / 8 of them, so dynamo may keep that many graphs before falling back."""
    import torch._dynamo

    def compile_(model, **kwargs):
        if backend:  # torch.compile takes a backend or a mode, not both: the smoke test keeps its backend
            kwargs["backend"] = backend
        elif mode:
            kwargs["mode"] = mode
        if mode == "reduce-overhead":
            kwargs["dynamic"] = False
            torch._dynamo.config.recompile_limit = max(torch._dynamo.config.recompile_limit, 64)
        return compile_fn(model, **kwargs)

    return compile_


PROFILED_STEPS = 10


def profiled_steps(warmup: int, device):
    import torch

    activities = [torch.profiler.ProfilerActivity.CPU]
    if device.type == "cuda":
        activities.append(torch.profiler.ProfilerActivity.CUDA)
    schedule = torch.profiler.schedule(wait=warmup, warmup=2, active=PROFILED_STEPS, repeat=1)
    return torch.profiler.profile(activities=activities, schedule=schedule)


def busy_time(intervals: list[tuple[float, float]]) -> tuple[float, float]:
    """(time covered by the union of `intervals`, span from the first start to the last end)."""
    if not intervals:
        return 0.0, 0.0
    ordered = sorted(intervals)
    covered, (start, end) = 0.0, ordered[0]
    for a, b in ordered[1:]:
        if a > end:
            covered, start = covered + end - start, a
        end = max(end, b)
    return covered + end - start, max(b for _, b in ordered) - ordered[0][0]


def gpu_busy(profiler, steps: int) -> dict | None:
    """The GPU's busy share over the profiled steps: the union of its kernels' and copies' intervals
    over their span (first start to last end), and both per step (ms); None without device events."""
    from torch.autograd import DeviceType

    intervals = [(e.time_range.start, e.time_range.end) for e in profiler.events() if e.device_type == DeviceType.CUDA]
    busy, span = busy_time(intervals)  # microseconds
    if span <= 0:
        return None
    return {"share": busy / span, "busy_ms": busy / 1e3 / steps, "span_ms": span / 1e3 / steps}


def profile_tables(profiler) -> str:
    """The profiled steps' operators by host time, then by device time: where a step's time goes."""
    events = profiler.key_averages()
    tables = [events.table(sort_by="self_cpu_time_total", row_limit=25)]
    if any(e.self_device_time_total for e in events):
        tables.append(events.table(sort_by="self_device_time_total", row_limit=15))
    return "\n".join(tables)


if __name__ == "__main__":
    print(json.dumps(run(json.loads(sys.argv[1]))), flush=True)
