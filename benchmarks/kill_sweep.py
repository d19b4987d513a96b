"""Kill sweep: a small `xlt finetune` job is killed at N points of its life, each killed run is
resumed by rerunning the same command, and its final weights and metrics are compared with an
uninterrupted run's. Prints one row per point and `K/N identical`.

    python benchmarks/kill_sweep.py [--points 20] [--steps 240] [--finetune-args "..."] [--workdir DIR]

The job: the demo encoder (`xlt build-demo-model`, 2 layers, hidden 32, a few MLM steps) fine-tuned
on demo NLI (`xlt prepare-data`) with the embeddings and layer 0 frozen, dropout on, AdamW with
warm-up and decay, gradient accumulation, evaluation every --eval-every steps with best-checkpoint
selection and a checkpoint every --checkpoint-every steps, on one CPU thread.

Where the kills land: each killed run is started with XLT_FAULT (xlt.core.faults), so it sends
itself the signal at an exact point: after optimiser step s (SIGKILL and SIGTERM alternating,
spread over the run, ending with a SIGKILL after the last step), inside a checkpoint write (the
temporary file written, not renamed; SIGKILL and SIGTERM) and inside the final save (the model
written into its temporary directory, not renamed; SIGKILL and SIGTERM). After each kill the sweep
checks that the kill landed there (exit status, the step of the checkpoint left behind) and that the
run directory holds no half-written output: every .json parses, every .safetensors and .pt loads,
the model directory is absent or complete, any output present is already the final one, and
leftovers of interrupted writes are hidden temporaries (`.<name>.<random>.tmp`) that no output
counts. After the resumed run it checks that no temporary and no checkpoint remain.

"Identical" means: every tensor of model.safetensors equal (torch.equal), the model directory's
other files byte-equal, and train.json equal except its timings (wall_s, train_wall_s,
samples_per_s, cache_s).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TIMINGS = ("wall_s", "train_wall_s", "samples_per_s", "cache_s")
EXIT_PREEMPTED = 75  # xlt.core.checkpoint.EXIT_PREEMPTED (not imported: this script runs without torch loaded)
RUN_ID = "kill-sweep"


@dataclass(frozen=True)
class Point:
    """Where a run is killed: the n-th time it reaches xlt.core.faults point `where`."""

    where: str  # step | checkpoint | save
    n: int
    signal: str  # KILL | TERM

    @property
    def fault(self) -> str:
        return f"{self.where}:{self.n}:{self.signal}"


@dataclass(frozen=True)
class Job:
    steps: int
    checkpoint_every: int
    eval_every: int
    extra_args: tuple[str, ...] = ()  # more `xlt finetune` flags, e.g. --cache-frozen-prefix

    @property
    def checkpoints(self) -> int:
        """Periodic checkpoints: every checkpoint_every steps, none after the last step."""
        return (self.steps - 1) // self.checkpoint_every

    def checkpoint_step(self, k: int) -> int | None:
        return k * self.checkpoint_every if k > 0 else None


@dataclass
class Outcome:
    point: Point
    exit_status: int
    left_checkpoint: int | None
    temporaries: int
    resumed_from: int | None
    identical: bool
    problems: list[str] = field(default_factory=list)
    seconds: float = 0.0


def plan_points(points: int, job: Job) -> list[Point]:
    """`points` kill points: inside a checkpoint write and inside the final save (both signals
    each, for points >= 4; SIGKILL in both for fewer), the rest after optimiser steps spread
    evenly up to the last one, SIGKILL and SIGTERM alternating (the last one a SIGKILL)."""
    if job.checkpoints < 2:
        raise SystemExit("kill_sweep: the job needs at least 2 periodic checkpoints; lower --checkpoint-every")
    middle = (job.checkpoints + 1) // 2
    special = [
        Point("checkpoint", middle, "KILL"),
        Point("save", 1, "KILL"),
        Point("checkpoint", 2 if middle != 2 else 1, "TERM"),
        Point("save", 1, "TERM"),
    ]
    special = special[: 4 if points >= 4 else min(points, 2)]
    n = points - len(special)
    if n == 1:
        steps = [Point("step", job.steps // 2, "TERM")]  # the one step point of a short sweep: the graceful path
    else:
        steps = [
            Point("step", math.ceil((i + 1) * job.steps / n), "KILL" if (n - 1 - i) % 2 == 0 else "TERM")
            for i in range(n)
        ]
    return steps + special


def expected_after_kill(point: Point, job: Job) -> tuple[set[int], int | None]:
    """(exit statuses, step of the checkpoint left behind) when the kill lands where planned."""
    killed = -signal.SIGKILL
    if point.where == "step":
        if point.signal == "TERM":
            if point.n >= job.steps:  # a signal after the last step lets the run finish
                return {0}, None
            return {EXIT_PREEMPTED}, point.n  # the loop saves a checkpoint at that step, then exits
        return {killed}, job.checkpoint_step(
            (point.n - 1) // job.checkpoint_every
        )  # the hook precedes that step's save
    if point.where == "checkpoint":
        if point.signal == "TERM":
            return {EXIT_PREEMPTED}, job.checkpoint_step(point.n)  # the write completes, then the loop stops
        return {killed}, job.checkpoint_step(point.n - 1)  # the previous checkpoint stays
    # the final save runs after training, outside GracefulStop: SIGTERM's default action ends the process
    return {killed if point.signal == "KILL" else -signal.SIGTERM}, job.checkpoint_step(job.checkpoints)


def finetune_command(inputs: Path, run_dir: Path, job: Job) -> list[str]:
    return [
        sys.executable,
        "-m",
        "xlt.cli",
        "finetune",
        "--model",
        str(inputs / "model"),
        "--train",
        str(inputs / "data" / "en" / "train.jsonl"),
        "--dev",
        str(inputs / "data" / "en" / "dev.jsonl"),
        "--num-labels",
        "3",
        "--freeze-depth",
        "1",
        "--run-id",
        RUN_ID,
        "--out",
        str(run_dir),
        "--max-steps",
        str(job.steps),
        "--batch-size",
        "8",
        "--grad-accum",
        "2",
        "--lr",
        "1e-3",
        "--warmup-ratio",
        "0.1",
        "--eval-every",
        str(job.eval_every),
        "--checkpoint-every",
        str(job.checkpoint_every),
        "--max-length",
        "32",
        "--log-every",
        "10",
        "--device",
        "cpu",
        "--seed",
        "3",
        *job.extra_args,
    ]


def environment(fault: str | None = None) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "XLT_FAULT"}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO / "src"), env.get("PYTHONPATH")]))
    env["OMP_NUM_THREADS"] = "1"  # the same thread count in every run: reductions then add up in the same order
    env.update({"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"})
    if fault:
        env["XLT_FAULT"] = fault
    return env


def run(cmd: list[str], fault: str | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, env=environment(fault), cwd=cwd, capture_output=True, text=True)


def input_commands(root: Path) -> list[list[str]]:
    """The `xlt` argument lists that build the sweep's inputs under `root`."""
    return [
        [
            "build-demo-model",
            "--out",
            str(root / "model"),
            "--languages",
            "en",
            "--layers",
            "2",
            "--hidden-size",
            "32",
            "--pretrain-steps",
            "20",
            "--vocab-size",
            "300",
        ],
        [
            "prepare-data",
            "--dataset",
            "nli",
            "--out",
            str(root / "data"),
            "--spec",
            json.dumps(
                {
                    "source": "demo",
                    "task": "nli",
                    "sizes": {"train": 400, "dev": 100},
                    "languages": ["en"],
                    "splits": ["train", "dev"],
                }
            ),
        ],
    ]


def make_inputs(root: Path) -> Path:
    """The demo encoder and demo NLI data, built once per sweep by the `xlt` verbs."""
    for args in input_commands(root):
        cmd = [sys.executable, "-m", "xlt.cli", *args]
        proc = run(cmd)
        if proc.returncode != 0:
            raise SystemExit(f"kill_sweep: {' '.join(cmd[2:4])} failed:\n{proc.stderr[-3000:]}")
    return root


def is_temporary(path: Path, run_dir: Path) -> bool:
    """Inside a leftover of an interrupted atomic write (xlt.core.io: `.<name>.<random>.tmp`)."""
    return any(part.startswith(".") and part.endswith(".tmp") for part in path.relative_to(run_dir).parts)


def without_timings(value):
    if isinstance(value, dict):
        return {k: without_timings(v) for k, v in value.items() if k not in TIMINGS}
    if isinstance(value, list):
        return [without_timings(v) for v in value]
    return value


def differences(run_dir: Path, reference: Path) -> list[str]:
    """How the outputs in `run_dir` differ from the reference run's (an empty list: identical)."""
    import torch
    from safetensors.torch import load_file

    out = []
    model, ref_model = run_dir / "model", reference / "model"
    if not model.is_dir():
        return ["no model directory"]
    names, ref_names = sorted(p.name for p in model.iterdir()), sorted(p.name for p in ref_model.iterdir())
    if names != ref_names:
        out.append(f"model files {names} != {ref_names}")
    for name in set(names) & set(ref_names):
        if name.endswith(".safetensors"):
            a, b = load_file(model / name), load_file(ref_model / name)
            unequal = sorted(k for k in a.keys() & b.keys() if not torch.equal(a[k], b[k]))
            if a.keys() != b.keys() or unequal:
                out.append(f"{name}: tensors differ: {unequal[:5] or 'other names'}")
        elif (model / name).read_bytes() != (ref_model / name).read_bytes():
            out.append(f"model/{name} differs")
    metrics = run_dir / "train.json"
    if not metrics.is_file():
        out.append("no train.json")
    else:
        a = without_timings(json.loads(metrics.read_text()))
        b = without_timings(json.loads((reference / "train.json").read_text()))
        if a != b:
            keys = sorted(k for k in a["meta"].keys() | b["meta"].keys() if a["meta"].get(k) != b["meta"].get(k))
            out.append(f"train.json differs (meta keys {keys}; records equal: {a['metrics'] == b['metrics']})")
    return out


def half_written(run_dir: Path, reference: Path) -> tuple[list[str], int, int | None]:
    """Atomicity after a kill: (problems, number of leftover temporaries, checkpoint step)."""
    import torch
    from safetensors.torch import load_file

    problems, temporaries, checkpoint_step = [], 0, None
    for path in sorted(run_dir.rglob("*")):
        rel = path.relative_to(run_dir)
        if is_temporary(path, run_dir):
            temporaries += not is_temporary(path.parent, run_dir)  # count a temporary directory once
            continue
        if path.is_dir():
            continue
        try:
            if path.suffix == ".json":
                json.loads(path.read_text(encoding="utf-8"))
            elif path.suffix == ".safetensors":
                load_file(path)
            elif path.suffix == ".pt":
                state = torch.load(path, map_location="cpu", weights_only=True)
                if rel.parts[0] == "checkpoint":
                    checkpoint_step = state["step"]
        except Exception as err:  # noqa: BLE001 - any failure to load is the finding
            problems.append(f"{rel} does not load: {type(err).__name__}: {err}")
    # outputs are written once, at the end: one that exists must be complete and final already
    if (run_dir / "model").exists():
        problems += [f"after the kill: {d}" for d in differences(run_dir, reference) if d != "no train.json"]
    elif (run_dir / "train.json").exists():
        problems.append("train.json exists without the model it describes")
    return problems, temporaries, checkpoint_step


def leftovers(run_dir: Path) -> list[str]:
    """What a finished run must not leave: temporaries and its checkpoint."""
    found = [str(p.relative_to(run_dir)) for p in run_dir.rglob("*") if is_temporary(p, run_dir)]
    if (run_dir / "checkpoint").exists():
        found.append("checkpoint/")
    return found


def resumed_step(stderr: str) -> int | None:
    match = re.search(r"resumed from step (\d+)", stderr)
    return int(match.group(1)) if match else None


def kill_and_resume(point: Point, job: Job, inputs: Path, run_dir: Path, reference: Path) -> Outcome:
    started = time.time()
    cmd = finetune_command(inputs, run_dir, job)
    killed = run(cmd, fault=point.fault)
    problems, temporaries, left = half_written(run_dir, reference)
    statuses, expected_checkpoint = expected_after_kill(point, job)
    if killed.returncode not in statuses or left != expected_checkpoint:
        problems.append(
            f"the kill did not land as planned: exit {killed.returncode} (expected {sorted(statuses)}), "
            f"checkpoint at step {left} (expected {expected_checkpoint}); log tail:\n{killed.stderr[-1500:]}"
        )
    if point.where in ("checkpoint", "save") and point.signal == "KILL" and temporaries == 0:
        problems.append(f"a SIGKILL inside the {point.where} write left no temporary: the hook is not inside the write")
    resumed = run(cmd)
    if resumed.returncode != 0:
        problems.append(f"the resumed run failed (exit {resumed.returncode}):\n{resumed.stderr[-1500:]}")
    diffs = differences(run_dir, reference) if resumed.returncode == 0 else ["no result"]
    problems += [f"left behind: {p}" for p in leftovers(run_dir)]
    return Outcome(
        point,
        killed.returncode,
        left,
        temporaries,
        resumed_step(resumed.stderr),
        not diffs,
        problems + diffs,
        time.time() - started,
    )


def describe(point: Point) -> str:
    where = {
        "step": f"after step {point.n}",
        "checkpoint": f"inside checkpoint write #{point.n}",
        "save": "inside the final save",
    }[point.where]
    return f"SIG{point.signal} {where}"


def sweep(points: int, job: Job, workdir: Path, echo=print, inputs: Path | None = None) -> list[Outcome]:
    """Kill, resume and compare at `points` points; `inputs` is a directory already built by
    `input_commands` (default: built here by `make_inputs`)."""
    inputs = inputs or make_inputs(workdir / "inputs")
    reference = workdir / "reference"
    started = time.time()
    proc = run(finetune_command(inputs, reference, job))
    if proc.returncode != 0 or leftovers(reference):
        raise SystemExit(f"kill_sweep: the uninterrupted run failed:\n{proc.stderr[-3000:]}")
    extra = f", {shlex.join(job.extra_args)}" if job.extra_args else ""
    echo(
        f"uninterrupted run: {job.steps} steps, checkpoints every {job.checkpoint_every}, evaluation every "
        f"{job.eval_every}{extra}: {time.time() - started:.1f} s\n"
    )
    echo("| # | kill | exit | checkpoint left at step | temporaries left | resumed from step | identical | s |")
    echo("|---|---|---|---|---|---|---|---|")
    outcomes = []
    for i, point in enumerate(plan_points(points, job), start=1):
        outcome = kill_and_resume(point, job, inputs, workdir / f"point{i:02d}", reference)
        outcomes.append(outcome)
        echo(
            f"| {i} | {describe(point)} | {outcome.exit_status} | {outcome.left_checkpoint or '-'} | "
            f"{outcome.temporaries} | {outcome.resumed_from if outcome.resumed_from is not None else 'start'} | "
            f"{'yes' if outcome.identical and not outcome.problems else 'NO'} | {outcome.seconds:.1f} |"
        )
        for problem in outcome.problems:
            echo(f"    {problem}")
    return outcomes


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="benchmarks/kill_sweep.py", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--points", type=int, default=20, help="how many kills (default 20)")
    parser.add_argument("--steps", type=int, default=240, help="optimiser steps of the job")
    parser.add_argument("--checkpoint-every", type=int, default=25)
    parser.add_argument("--eval-every", type=int, default=45)
    parser.add_argument(
        "--finetune-args",
        default="",
        help='more `xlt finetune` flags for every run, e.g. "--cache-frozen-prefix --length-bucketing true"',
    )
    parser.add_argument("--workdir", default=None, help="keep every run here (default: a temporary directory, removed)")
    args = parser.parse_args(argv)
    job = Job(args.steps, args.checkpoint_every, args.eval_every, tuple(shlex.split(args.finetune_args)))
    started = time.time()
    workdir = Path(args.workdir) if args.workdir else Path(tempfile.mkdtemp(prefix="xlt-kill-sweep-"))
    try:
        outcomes = sweep(args.points, job, workdir)
    finally:
        if not args.workdir:
            shutil.rmtree(workdir, ignore_errors=True)
    good = sum(o.identical and not o.problems for o in outcomes)
    print(f"\n{good}/{len(outcomes)} identical ({time.time() - started:.0f} s)")
    return 0 if good == len(outcomes) else 1


if __name__ == "__main__":
    sys.exit(main())
