"""What TensorBoard monitoring (`monitor: {tensorboard: true}`, xlt.core.monitor) costs a training
step: xlt.core.training.train at the demo's shape and settings (the 12-layer demo encoder, demo
NLI text, batch 32, max_length 48, a progress line every 20 steps, an evaluation every 40) with
monitoring off and on, on CPU.

    PYTHONPATH=src python benchmarks/monitor_overhead.py [--steps 120] [--repeats 3] [--threads 2]

Runs alternate off/on (the machine is shared: alternating spreads load drift over both), each in
this process after one warm-up run. Prints a Markdown table: the median wall and CPU time (all the
process's threads, the event writer's included) per step of each mode, their difference, and the
time spent inside the monitor's own calls (writing and flushing the event file) per step, which
the load on a shared machine does not blur. Needs the monitor extra
(pip install -e ".[monitor]"). A figure, not a pass/fail test.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from loop import demo_tokenizer
from machine import load_average
from shapes import SHAPES, random_classifier

LOG_EVERY, EVAL_EVERY, BATCH, MAX_LENGTH = 20, 40, 32, 48  # config.yaml's training section


class MonitorClock:
    """Seconds spent inside the Board's calls (xlt.core.monitor), summed."""

    def __init__(self):
        from xlt.core import monitor

        self.seconds = 0.0
        self.board_class = monitor.Board
        self.originals = {name: getattr(monitor.Board, name) for name in ("progress", "evaluation", "close")}

    def __enter__(self):
        def timed(original):
            def call(*args, **kwargs):
                started = time.perf_counter()
                try:
                    return original(*args, **kwargs)
                finally:
                    self.seconds += time.perf_counter() - started

            return call

        for name, original in self.originals.items():
            setattr(self.board_class, name, timed(original))
        return self

    def __exit__(self, *exc):
        for name, original in self.originals.items():
            setattr(self.board_class, name, original)


def one_run(on: bool, steps: int, records: list, dev: list, tokenizer, shape, out: Path) -> tuple[float, float, float]:
    """(wall seconds, CPU seconds of the process's threads, seconds inside the monitor) per optimiser
    step of one training run."""
    from xlt.core import monitor
    from xlt.core.classification import accuracy_records, classification_loss, make_collate
    from xlt.core.train_args import TrainArgs
    from xlt.core.train_inputs import DevSelection, Objective
    from xlt.core.training import train

    model = random_classifier(shape, seed=1)
    args = TrainArgs(
        max_steps=steps,
        batch_size=BATCH,
        lr=5e-4,
        max_length=MAX_LENGTH,
        log_every=LOG_EVERY,
        eval_every=EVAL_EVERY,
        device="cpu",
        seed=1,
    )

    def evaluate(m):
        acc = accuracy_records(m, tokenizer, {"dev": dev}, MAX_LENGTH)[0]["value"]
        return {"score": acc, "dev_accuracy": acc}

    axes = {"model": "demo-shape", "seed": 1}
    with MonitorClock() as clock, monitor.run(on, out, axes, {"max_steps": steps}):
        started, cpu = time.perf_counter(), time.process_time()
        train(
            model,
            Objective(records, make_collate(tokenizer, MAX_LENGTH), classification_loss),
            args,
            dev=DevSelection(evaluate),
        )
        wall, cpu = time.perf_counter() - started, time.process_time() - cpu
    return wall / steps, cpu / steps, clock.seconds / steps


def run(steps: int, repeats: int, threads: int, echo=print) -> dict:
    import torch

    from xlt.core import monitor
    from xlt.data import demo

    if not monitor.available():
        raise SystemExit(f"needs the monitor extra: {monitor.INSTALL}")
    torch.set_num_threads(threads)
    tokenizer = demo_tokenizer()
    shape = SHAPES["demo"]
    shape = type(shape)(shape.layers, shape.hidden, shape.heads, len(tokenizer))
    records = demo.generate("nli", "en", "train", 1500, 1)
    dev = demo.generate("nli", "en", "dev", 150, 1)
    wall = {False: [], True: []}
    cpu = {False: [], True: []}
    inside = []
    with tempfile.TemporaryDirectory() as tmp:
        one_run(True, min(steps, LOG_EVERY), records, dev, tokenizer, shape, Path(tmp) / "warm-up")
        for i in range(repeats):
            for on in (False, True):
                w, c, m = one_run(on, steps, records, dev, tokenizer, shape, Path(tmp) / f"run{i}-{on}")
                wall[on].append(w)
                cpu[on].append(c)
                if on:
                    inside.append(m)
    echo(f"load average {load_average()}; torch threads {threads}; {steps} steps x {repeats} runs per mode\n")
    echo("| monitoring | median wall ms / step | median CPU ms / step | runs: wall (CPU) ms / step |")
    echo("|---|---|---|---|")
    for label, on in (("off", False), ("on", True)):
        each = ", ".join(f"{w * 1e3:.1f} ({c * 1e3:.1f})" for w, c in zip(wall[on], cpu[on]))
        echo(f"| {label} | {statistics.median(wall[on]) * 1e3:.1f} | {statistics.median(cpu[on]) * 1e3:.1f} | {each} |")
    for label, times in (("wall", wall), ("CPU", cpu)):
        off, on = statistics.median(times[False]), statistics.median(times[True])
        echo(f"\n{label}: on - off {(on - off) * 1e3:+.2f} ms / step ({(on - off) / off * 100:+.2f} %)")
    off_cpu = statistics.median(cpu[False])
    spent = statistics.median(inside)
    echo(f"\ninside the monitor's calls: {spent * 1e3:.3f} ms / step ({spent / off_cpu * 100:.3f} % of a step's CPU)")
    return {"wall_s": wall, "cpu_s": cpu, "monitor_s": spent}


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--steps", type=int, default=120, help="optimiser steps per run (the demo's 120)")
    p.add_argument("--repeats", type=int, default=3, help="runs per mode, alternating")
    p.add_argument("--threads", type=int, default=2, help="torch threads")
    args = p.parse_args(argv)
    run(args.steps, args.repeats, args.threads)


if __name__ == "__main__":
    main()
