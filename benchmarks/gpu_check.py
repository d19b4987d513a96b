"""The plan's assumed GPU inputs, measured in one short run: `bash benchmarks/gpu_check.sh OUT`.

`xlt plan --gpu h100` (xlt.cost) reads a profile fitted to H100 measurements at fixed lengths;
some of what it plans with is assumed. This script measures those inputs on the machine it runs
on and writes OUT/gpu_check.json and OUT/gpu_check.md (rewritten after every run, so a run cut
short still leaves the sections it finished):

1. paper_shape: the paper's freeze-depth job shape (mBERT's 12 x 768, vocab 119,547, random
   init, batch 32, max_length 128, XNLI-like pair lengths padded to each batch's longest, on
   CUDA to a multiple of 8 as the project pads; benchmarks/gpu_worker.py) trained by
   xlt.core.training.train with length-bucketed batches at freeze depths -1 and 8, at depth -1
   also at batch 16 and 8 (MonoX's students, adapt), eager; then compiled at depth -1, batch 32
   and 8 (torch.compile dynamic=True, as config/paper.yaml trains; a cold inductor cache each
   run). Beside
   each steady-state step time: the plan's own prediction for that job shape
   (xlt.cost.estimate.job_cost at the h100 profile) and measured / planned; for compiled runs the
   step ratio to eager (profile compile_step_ratio) and the compile time (profile compile_s) =
   what the first steps took beyond steady-state steps, less the same for the eager run.
2. concurrency: N = 1, 2, 4, 8 eager training processes of that shape started together on one
   GPU (a file barrier after model set-up), at batch 32 (freeze_depth's) and at batch 8 (MonoX's
   students and adapt's runs, whose steps the plan shares most); aggregate useful tokens/s over
   the window all of them were in steady state, against one process of the same batch (the
   `gpu_sharing` gain the plan assumes).
3. environment: torch, transformers, GPU, memory, driver (nvidia-smi), git commit.

Every section is time-bounded (--budget-s, the estimate printed up front): a run whose estimate
no longer fits is skipped with a note, and a run is stopped at the budget. Order: the cheap eager
runs, then concurrency, then the compiled runs (minutes of compiling each).

--smoke: the same code paths on the CPU in seconds (tiny shape, a handful of steps, N = 1, 2 at batch 8,
torch.compile's "eager" backend instead of inductor, the cpu profile); for tests/benchmarks.

    python benchmarks/gpu_check.py --out OUT [--smoke] [--budget-s 540]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import machine
from loop import _package_env
from shapes import SHAPES

WORKER = Path(__file__).resolve().parent / "gpu_worker.py"
REPO = Path(__file__).resolve().parents[1]
WITHIN = 1.3  # the plan's check: a measured step time within this factor of the planned one
# per-run wall estimates (s) for the budget: process start + model set-up + steps; compile cold
ESTIMATE_S = {
    # capture: up to max_length / 8 shapes, each 3 warm-up steps and a capture (xlt.core.cuda_graphs);
    # graphs-compile: inductor once with symbolic shapes (124 s measured for dynamic=True), then a CUDA
    # graph tree recorded per shape; profile: a short captured run, torch.profiler over 10 steps
    "gpu": {
        "eager": 25,
        "compile": 120,
        "capture": 25,
        "graphs-compile": 150,
        "profile": 15,
        "round": 20,
        "per_process": 2,
    },
    "smoke": {
        "eager": 10,
        "compile": 15,
        "capture": 10,
        "graphs-compile": 15,
        "profile": 10,
        "round": 12,
        "per_process": 4,
    },
}
DEVICE_BUDGET_S = 480  # the one prepared device call: at most 8 minutes
MODES = ("eager", "compiled", "capture", "graphs-compile")  # a run's mode: TrainArgs compile and graphs


def mode_of(run: dict) -> str:
    """eager, compiled (compile: true, inductor with dynamic shapes), capture (graphs: capture) or
    graphs-compile (graphs: compile, torch.compile reduce-overhead with static shapes)."""
    graphs = run.get("graphs", "none")
    if graphs != "none":
        return "capture" if graphs == "capture" else "graphs-compile"
    return "compiled" if run["compile"] else "eager"


def cost_of(s: dict, run: dict) -> float:
    mode = mode_of(run)
    if run.get("profile") and "steps" in run and mode == "capture":
        return s["estimates"]["profile"]
    return s["estimates"]["compile" if mode == "compiled" else mode]


PROFILE_STEPS = 10 + 2 + 8  # the worker's profiled steps, its profiler warm-up, and a margin


def settings(args) -> dict:
    if args.smoke:
        return {
            "shape": "tiny",
            "max_length": 128,
            "batch_size": 8,
            "steps": 8,
            "warmup": 3,
            "depths": (1,),
            "other_batch_sizes": (),
            "concurrency": (1, 2),
            "concurrency_batch_sizes": (8,),
            "concurrency_steps": 6,
            "concurrency_warmup": 2,
            "device": "cpu",
            "compile_backend": "eager",
            "plan_gpu": "cpu",
            "estimates": ESTIMATE_S["smoke"],
            "threads": 1,
            "paper_runs": args.paper_runs,
            "concurrency_mode": args.concurrency_mode or "eager",  # CUDA graphs need CUDA
        }
    return {
        "shape": "mbert",
        "max_length": 128,
        "batch_size": 32,
        "steps": args.steps + args.warmup,
        "warmup": args.warmup,
        "depths": (-1, 8),
        "graph_batch_sizes": (32, 8),  # freeze_depth's batch and MonoX's students' / adapt's
        "concurrency": concurrency_of(args),
        "concurrency_batch_sizes": tuple(args.concurrency_batch_sizes),
        "concurrency_steps": args.concurrency_steps + 10,
        "concurrency_warmup": 10,
        "device": "cuda",
        "compile_backend": None,
        "plan_gpu": "h100",
        "estimates": ESTIMATE_S["gpu"],
        "threads": 0,
        "paper_runs": args.paper_runs,
        "concurrency_mode": args.concurrency_mode or "capture",
    }


def concurrency_of(args) -> tuple[int, ...]:
    """The rounds' N: as given; by default 1, 4 and 8, and none where --paper-runs picks the runs (a
    call for other runs must not spend its budget on the default rounds, as f3310b3's second did)."""
    if args.concurrency is not None:
        return tuple(args.concurrency)
    return () if args.paper_runs else (1, 4, 8)


def paper_runs(s: dict) -> tuple[list[dict], list[dict]]:
    """(runs before the concurrency rounds, runs after them). --paper-runs picks them (the
    expensive compiles last). On the device by default: eager at depth -1, batch 32 (the baseline,
    measured before at f3310b3); the whole step captured as CUDA graphs (graphs: capture) at depths
    -1 and 8 and batches 32 and 8; one captured run profiled (torch.profiler: the GPU's busy share
    of a step); then, last, as far as the budget allows, torch.compile reduce-overhead (graphs:
    compile) at depth -1, batch 32. The smoke (CPU, no CUDA graphs): eager at its depth, bucketed and
    random, then compiled with the eager backend."""
    if s.get("paper_runs"):
        runs = [parse_run(text) for text in s["paper_runs"]]
        late = ("compiled", "graphs-compile")
        return [r for r in runs if mode_of(r) not in late], [r for r in runs if mode_of(r) in late]
    first = s["depths"][0]
    if s["device"] != "cuda":
        eager = [{"compile": False, "bucketing": True, "depth": d} for d in s["depths"]]
        eager.append({"compile": False, "bucketing": False, "depth": first})
        return eager, [{"compile": True, "bucketing": True, "depth": first}]
    early = [{"compile": False, "bucketing": True, "depth": first}]
    for batch in s["graph_batch_sizes"]:
        for depth in s["depths"]:
            run = {"compile": False, "bucketing": True, "depth": depth, "graphs": "capture"}
            early.append(run if batch == s["batch_size"] else {**run, "batch_size": batch})
    early.append(
        {
            "compile": False,
            "bucketing": True,
            "depth": first,
            "graphs": "capture",
            "profile": True,
            "steps": s["warmup"] + PROFILE_STEPS,
        }
    )
    return early, [{"compile": False, "bucketing": True, "depth": first, "graphs": "compile"}]


def batch_of(s: dict, run: dict) -> int:
    return run.get("batch_size", s["batch_size"])


def parse_run(text: str) -> dict:
    """bucketed|random:MODE:DEPTH[:bN][:padN][:profile][:cudagraphs], e.g. bucketed:capture:-1:b8;
    MODE eager, compiled (compile: true), capture (graphs: capture) or graphs-compile (graphs:
    compile); bN: batch N instead of the check's; cudagraphs: a compiled run in torch.compile's mode
    "reduce-overhead" patched in by the worker (graphs-compile is the project's own setting)."""
    usage = "expected bucketed|random:eager|compiled|capture|graphs-compile:DEPTH[:bN][:padN][:profile][:cudagraphs]"
    batches, mode, depth, *extra = text.split(":")
    if batches not in ("bucketed", "random") or mode not in MODES:
        raise SystemExit(f"--paper-runs {text!r}: {usage}")
    run = {"compile": mode == "compiled", "bucketing": batches == "bucketed", "depth": int(depth)}
    if mode in ("capture", "graphs-compile"):
        run["graphs"] = "capture" if mode == "capture" else "compile"
    for item in extra:
        if item == "profile":
            run["profile"] = True
        elif item == "cudagraphs" and run["compile"]:
            run["compile_mode"] = "reduce-overhead"
        elif item.startswith("pad") and item[3:].isdigit():
            run["pad_multiple"] = int(item[3:])
        elif item.startswith("b") and item[1:].isdigit():
            run["batch_size"] = int(item[1:])
        else:
            raise SystemExit(
                f"--paper-runs {text!r}: unknown {item!r} (bN, padN, profile, or cudagraphs on a compiled run)"
            )
    return run


def planned(s: dict, run: dict, profile: dict) -> dict:
    """The plan's seconds for this job shape: xlt.cost.estimate.job_cost on a `finetune` job of
    the same model shape, steps, batch, depth, padding and compile flag, with no dev set (no
    evaluation) and less the job's start-up (profile overhead_s) and compile time (compile_s)."""
    from gpu_worker import XNLI

    from xlt.core.job_spec import JobSpec
    from xlt.cost import estimate

    shape = SHAPES[s["shape"]]
    # a config model (results/models/NAME) carries its shape; the dataset is XNLI by its hub path
    # under a name no prepared data has, so the plan reads the length table the sample was drawn from
    config = {
        "models": {
            "bench": {"source": "local", "vocab_size": shape.vocab, "hidden_size": shape.hidden, "layers": shape.layers}
        },
        "datasets": {"gpu-check-xnli": {"path": XNLI, "sizes": {"train": 392702}}},
    }
    job = [
        ("model", "results/models/bench"),
        ("train", "results/data/gpu-check-xnli/en/train.jsonl"),
        ("max_steps", s["steps"]),
        ("batch_size", batch_of(s, run)),
        ("max_length", s["max_length"]),
        ("freeze_depth", run["depth"]),
        ("length_bucketing", str(run["bucketing"])),
        ("compile", str(run["compile"])),
    ]
    cost = estimate.job_cost(config, "freeze_depth", "finetune", "gpu-check", JobSpec("finetune", job), profile)
    compile_s = profile.get("compile_s", estimate.COMPILE_S) if run["compile"] else 0.0
    steps_s = cost.seconds - profile["overhead_s"] - compile_s
    return {
        "step_s": steps_s / s["steps"],
        "compile_s": compile_s,
        "padded_tokens_per_example": cost.train_tokens / (s["steps"] * batch_of(s, run)),
    }


def summarise(result: dict, warmup: int, batch_size: int) -> dict:
    """Steady state = steps `warmup`.. end; startup excess = the whole training's wall time
    beyond its steps at the steady median (first-step allocation, compiling, recompiles)."""
    starts, end = result["step_starts"], result["end"]
    bounds = starts + [end]
    durations = [b - a for a, b in zip(bounds, bounds[1:])]
    timed = len(starts) - warmup
    median_s = statistics.median(durations[warmup:])
    return {
        "steps": len(starts),
        "timed_steps": timed,
        "step_s": (end - starts[warmup]) / timed,
        "median_step_s": median_s,
        "first_steps_s": starts[warmup] - result["train_start"],
        "startup_excess_s": end - result["train_start"] - len(starts) * median_s,
        "slow_steps_after_warmup": sum(d > 3 * median_s for d in durations[warmup:]),
        "padded_tokens_per_example": statistics.mean(result["padded_tokens"]) / batch_size,
        "useful_tokens_per_example": statistics.mean(result["useful_tokens"]) / batch_size,
        "setup_s": result["setup_s"],
        "peak_gib": result["peak_gib"],
        "threads": result["threads"],
    }


def aggregate(results: list[dict], warmup: int) -> dict:
    """Tokens/s of processes running together, summed over the window in which every one of them
    was past its warm-up and not yet done; a step's tokens count in proportion to its time inside."""
    import numpy as np

    start = max(r["step_starts"][warmup] for r in results)
    stop = min(r["end"] for r in results)
    out = {"window_s": stop - start}
    for key in ("useful_tokens", "padded_tokens"):
        done = 0.0
        for r in results:
            cumulative = np.concatenate([[0.0], np.cumsum(r[key], dtype=float)])
            done += float(np.diff(np.interp([start, stop], r["step_starts"] + [r["end"]], cumulative))[0])
        out[f"{key}_per_s"] = done / (stop - start) if stop > start else float("nan")
    return out


class Budget:
    def __init__(self, seconds: float):
        self.seconds, self.end = seconds, time.monotonic() + seconds

    def left(self) -> float:
        return self.end - time.monotonic()


def worker_spec(s: dict, run: dict, **extra) -> dict:
    return {
        "shape": s["shape"],
        "max_length": s["max_length"],
        "batch_size": s["batch_size"],
        "steps": s["steps"],
        "seed": 1,
        "warmup": s["warmup"],
        "device": s["device"],
        "threads": s["threads"],
        "compile_backend": s["compile_backend"],
        **run,
        **extra,
    }


def worker_env(spec: dict, scratch: Path) -> dict:
    env = _package_env()
    if spec["compile"]:  # a cold compile, as a job on a fresh node pays it
        cache = Path(tempfile.mkdtemp(prefix="inductor-", dir=scratch))
        env.update(TORCHINDUCTOR_CACHE_DIR=str(cache / "inductor"), TRITON_CACHE_DIR=str(cache / "triton"))
    if spec["threads"]:
        env["OMP_NUM_THREADS"] = str(spec["threads"])
    return env


def start_worker(spec: dict, scratch: Path) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, str(WORKER), json.dumps(spec)],
        env=worker_env(spec, scratch),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def finish(proc: subprocess.Popen, timeout: float) -> dict:
    """The worker's result, or {"error": why} (stopped at the budget, or failed)."""
    try:
        stdout, stderr = proc.communicate(timeout=max(timeout, 1))
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        return {"error": f"stopped at the budget after {timeout:.0f} s"}
    if proc.returncode != 0:
        return {"error": f"exit {proc.returncode}: {stderr.strip()[-1500:]}"}
    return json.loads(stdout.strip().splitlines()[-1])


def paper_run(s: dict, run: dict, profile: dict, budget: Budget, scratch: Path, eager: list[dict]) -> dict:
    row = dict(run)
    cost = cost_of(s, run)
    if budget.left() < cost:
        return {**row, "skipped": f"over budget: {budget.left():.0f} s left, a run takes ~{cost} s"}
    result = finish(start_worker(worker_spec(s, run), scratch), budget.left())
    if "error" in result:
        return {**row, "skipped": result["error"]}
    row["measured"] = summarise(result, s["warmup"], batch_of(s, run))
    row["pad_multiple"] = result["pad_multiple"]
    if result.get("profile"):
        row["profile"] = result["profile"]
        row["gpu_busy"] = result.get("gpu_busy")
    row["device_name"] = result["device_name"]
    row["planned"] = planned(s, run, profile)
    row["ratio"] = row["measured"]["step_s"] / row["planned"]["step_s"]
    row["within"] = 1 / WITHIN <= row["ratio"] <= WITHIN
    base = next(
        (
            e
            for e in eager
            if "measured" in e
            and mode_of(e) == "eager"
            and e["depth"] == run["depth"]
            and e["bucketing"] == run["bucketing"]
            and batch_of(s, e) == batch_of(s, run)
        ),
        None,
    )
    if mode_of(run) != "eager" and base:
        row["compile_step_ratio"] = row["measured"]["step_s"] / base["measured"]["step_s"]
        row["planned_compile_step_ratio"] = profile.get("compile_step_ratio", 1.0)
        row["compile_s"] = row["measured"]["startup_excess_s"] - base["measured"]["startup_excess_s"]
    return row


def concurrency_round(s: dict, n: int, batch_size: int, budget: Budget, scratch: Path) -> dict:
    cost = round_cost(s, n)
    if budget.left() < cost:
        return {
            "processes": n,
            "batch_size": batch_size,
            "skipped": f"over budget: {budget.left():.0f} s left, a round takes ~{cost} s",
        }
    barrier = Path(tempfile.mkdtemp(prefix=f"barrier-{n}-", dir=scratch))
    threads = s["threads"] or max(1, machine.cpus() // n)
    mode = s.get("concurrency_mode", "eager")
    run = {"compile": mode == "compiled", "bucketing": True, "depth": -1}
    if mode in ("capture", "graphs-compile"):
        run["graphs"] = "capture" if mode == "capture" else "compile"
    procs = [
        start_worker(
            worker_spec(
                s,
                run,
                steps=s["concurrency_steps"],
                threads=threads,
                barrier=str(barrier),
                index=i,
                barrier_timeout_s=budget.left(),
                batch_size=batch_size,
            ),
            scratch,
        )
        for i in range(n)
    ]
    while len(list(barrier.glob("ready-*"))) < n and budget.left() > 0 and all(p.poll() is None for p in procs):
        time.sleep(0.05)
    (barrier / "go").write_text("")
    results = [finish(p, budget.left()) for p in procs]
    errors = [r["error"] for r in results if "error" in r]
    if errors:
        return {"processes": n, "batch_size": batch_size, "skipped": errors[0]}
    each = [summarise(r, s["concurrency_warmup"], batch_size) for r in results]
    return {
        "processes": n,
        "batch_size": batch_size,
        "threads_each": threads,
        "timed_steps_each": each[0]["timed_steps"],
        "step_s_each": [e["step_s"] for e in each],
        "peak_gib_each": [e["peak_gib"] for e in each],
        **aggregate(results, s["concurrency_warmup"]),
    }


def round_cost(s: dict, n: int) -> float:
    """A concurrency round's estimate: start-up and steps, each process's own share, and a
    captured or compiled run's extra set-up (its own capture or compile, in parallel)."""
    e = s["estimates"]
    mode = s.get("concurrency_mode", "eager")
    extra = 0 if mode == "eager" else e["compile" if mode == "compiled" else mode] - e["eager"]
    return e["round"] + n * e["per_process"] + extra


def concurrency_table(rows: list[dict]) -> None:
    """Speed-up of each N's aggregate over one process of the same batch size, and its padded
    tokens/s as a share of the profile's saturating rate (the H100's batch-128 x 128 eager throughput)."""
    from xlt.cost.profile import H100_MEASURED

    for r in rows:
        if "skipped" in r:
            continue
        one = next(
            (o for o in rows if o["processes"] == 1 and o["batch_size"] == r["batch_size"] and "skipped" not in o), None
        )
        r["speedup_vs_one"] = r["useful_tokens_per_s"] / one["useful_tokens_per_s"] if one else float("nan")
        r["share_of_saturating"] = r["padded_tokens_per_s"] / H100_MEASURED["tokens_per_s"][1]


def environment() -> dict:
    import torch

    def command(*cmd):
        try:
            return subprocess.run(cmd, capture_output=True, text=True, timeout=30, cwd=REPO).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            return ""

    info = machine.machine_info()
    info["cuda"] = torch.version.cuda
    info["nvidia_smi"] = (
        command("nvidia-smi", "--query-gpu=name,memory.total,driver_version", "--format=csv,noheader")
        or "not available"
    )
    # a device machine's copy of the working tree may have no .git, or a stale one (seen: the
    # session's first commit, marked dirty): the caller's XLT_COMMIT, when given, names the code
    info["git_commit"] = (
        os.environ.get("XLT_COMMIT")
        or command("git", "rev-parse", "HEAD")
        or "unknown (no git checkout, no XLT_COMMIT)"
    )
    info["git_dirty"] = bool(command("git", "status", "--porcelain", "--untracked-files=no"))
    return info


def _f(value, fmt: str = ".3g") -> str:
    return "n/a" if value is None else format(value, fmt)


def markdown(results: dict) -> str:
    s, env = results["settings"], results.get("environment", {})
    lines = [
        f"# GPU check: {s['shape']} shape, batch {s['batch_size']}, max_length {s['max_length']}",
        "",
        f"Estimated {results['estimate_s']:.0f} s, budget {results['budget_s']:.0f} s, "
        f"took {results.get('elapsed_s', 0):.0f} s; plan profile `{s['plan_gpu']}`.",
        "",
        "## Environment",
        "",
    ]
    lines += [f"- {key}: {value}" for key, value in env.items()]
    lines += [
        "",
        "## 1. Paper shape: measured step time against the plan",
        "",
        f"Steady state over the steps after {s['warmup']} warm-up steps; planned = xlt.cost.estimate.job_cost "
        f"(start-up and compile_s left out); within = measured / planned in [1/{WITHIN}, {WITHIN}]. Compile s = "
        "what the first steps took beyond steady-state steps, less the eager run's (for graphs: capture, the "
        "captures); its step ratio = the step against the eager run's at that depth and batch. The plan has no "
        "figure for CUDA graphs yet: a graphs row is planned as eager.",
        "",
        "| depth | batches | mode | timed steps | measured ms/step | planned ms/step | measured / planned "
        f"| within {WITHIN}x | padded tokens/example (planned) | useful tokens/example "
        "| first steps s (slow steps after) "
        "| compile s (planned) | compile step ratio (planned) | peak GiB |",
        "|" + "---|" * 14,
    ]
    for r in results["paper_shape"]:
        head = f"| {r['depth']} | {batches_label(r)} | {mode_of(r)} "
        if "skipped" in r:
            lines.append(head + f"| skipped: {r['skipped'][:200]} |" + " |" * 10)
            continue
        m, p = r["measured"], r["planned"]
        compile_cells = (
            (
                f"{_f(r.get('compile_s'), '.1f')} ({p['compile_s']:.0f}) | {_f(r.get('compile_step_ratio'))} "
                f"({_f(r.get('planned_compile_step_ratio'))})"
            )
            if mode_of(r) != "eager"
            else "- | -"
        )
        lines.append(
            head + f"| {m['timed_steps']} | {1e3 * m['step_s']:.2f} | {1e3 * p['step_s']:.2f} | {r['ratio']:.2f} "
            f"| {'yes' if r['within'] else 'no'} | {m['padded_tokens_per_example']:.1f} "
            f"({p['padded_tokens_per_example']:.1f}) | {m['useful_tokens_per_example']:.1f} "
            f"| {m['first_steps_s']:.1f} ({m['slow_steps_after_warmup']}) | {compile_cells} "
            f"| {_f(m['peak_gib'], '.1f')} |"
        )
    lines += [
        "",
        "## 2. Concurrency: N training processes on one GPU",
        "",
        f"{s.get('concurrency_mode', 'eager')}, bucketed, depth -1; tokens/s summed over the window all N were in "
        "steady state; "
        "saturating = the profile's H100 batch-128 x 128 eager rate (xlt.cost.profile.H100_MEASURED).",
        "",
        "| batch | N | threads each | timed steps each | window s | useful tokens/s | padded tokens/s "
        "| speed-up vs N=1 | padded / saturating | ms/step each | peak GiB each |",
        "|" + "---|" * 11,
    ]
    for r in results["concurrency"]:
        if "skipped" in r:
            lines.append(f"| {r['batch_size']} | {r['processes']} | skipped: {r['skipped'][:200]} |" + " |" * 8)
            continue
        lines.append(
            f"| {r['batch_size']} | {r['processes']} | {r['threads_each']} | {r['timed_steps_each']} "
            f"| {r['window_s']:.1f} "
            f"| {r['useful_tokens_per_s']:.0f} | {r['padded_tokens_per_s']:.0f} | {r['speedup_vs_one']:.2f} "
            f"| {r['share_of_saturating']:.2f} | {', '.join(f'{1e3 * x:.1f}' for x in r['step_s_each'])} "
            f"| {', '.join(_f(x, '.1f') for x in r['peak_gib_each'])} |"
        )
    for r in results["paper_shape"]:
        if r.get("profile"):
            busy = r.get("gpu_busy")
            lines += ["", f"## Profile: depth {r['depth']}, {batches_label(r)}, {mode_of(r)}", ""]
            if busy:
                lines += [
                    f"GPU busy {busy['share']:.0%} of the profiled steps' device span: {busy['busy_ms']:.2f} ms of "
                    f"kernels a step in {busy['span_ms']:.2f} ms (the union of the kernels' intervals).",
                    "",
                ]
            lines += ["```", r["profile"], "```"]
    return "\n".join(lines) + "\n"


def batches_label(r: dict) -> str:
    label = "bucketed" if r["bucketing"] else "random"
    if "batch_size" in r:
        label += f", batch {r['batch_size']}"
    if r.get("pad_multiple", 1) > 1:
        label += f", padded to x{r['pad_multiple']}"
    graphs = {"capture": ", graphs: capture", "compile": ", graphs: compile"}.get(r.get("graphs", "none"), "")
    return (
        label + (", profiled" if r.get("profile") else "") + (", CUDA graphs" if r.get("compile_mode") else "") + graphs
    )


def one_line(r: dict) -> str:
    what = f"depth {r['depth']}, {batches_label(r)}, {mode_of(r)}"
    if "skipped" in r:
        return f"{what}: skipped ({r['skipped'][:300]})"
    extra = f"; compile {r['compile_s']:.1f} s, step ratio {r['compile_step_ratio']:.3f}" if "compile_s" in r else ""
    if r.get("gpu_busy"):
        extra += f"; GPU busy {r['gpu_busy']['share']:.0%} of a step"
    return (
        f"{what}: {1e3 * r['measured']['step_s']:.2f} ms/step measured, {1e3 * r['planned']['step_s']:.2f} "
        f"planned (measured / planned {r['ratio']:.2f}){extra}"
    )


def write(out: Path, results: dict, started: float) -> None:
    results["elapsed_s"] = time.monotonic() - started
    (out / "gpu_check.json").write_text(json.dumps(results, indent=1))
    (out / "gpu_check.md").write_text(markdown(results))


def estimate_s(s: dict) -> float:
    early, late = paper_runs(s)
    rounds = len(s["concurrency_batch_sizes"]) * sum(round_cost(s, n) for n in s["concurrency"])
    return sum(cost_of(s, r) for r in early + late) + rounds


def estimate_lines(s: dict) -> list[str]:
    """What the call will run, each with its estimate (printed before it starts)."""
    early, late = paper_runs(s)
    lines = [f"  {mode_of(r)} depth {r['depth']}, {batches_label(r)}: ~{cost_of(s, r)} s" for r in early]
    lines += [
        f"  concurrency ({s.get('concurrency_mode', 'eager')}) batch {b} N={n}: ~{round_cost(s, n)} s"
        for b in s["concurrency_batch_sizes"]
        for n in s["concurrency"]
    ]
    lines += [f"  {mode_of(r)} depth {r['depth']}, {batches_label(r)}: ~{cost_of(s, r)} s (last)" for r in late]
    return lines


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="benchmarks/gpu_check.py", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--out", required=True, help="folder for gpu_check.json and gpu_check.md")
    p.add_argument("--smoke", action="store_true", help="CPU, tiny shape, a handful of steps (tests)")
    p.add_argument(
        "--budget-s",
        type=float,
        default=DEVICE_BUDGET_S,
        help=f"stop starting runs beyond this many seconds (default {DEVICE_BUDGET_S}: one device call)",
    )
    p.add_argument("--steps", type=int, default=200, help="timed steps of each paper-shape run")
    p.add_argument("--warmup", type=int, default=20, help="warm-up steps before them")
    p.add_argument(
        "--paper-runs",
        nargs="+",
        help="paper-shape runs instead of the default set (and then no concurrency rounds unless "
        "--concurrency names them): bucketed|random:eager|compiled|capture|graphs-compile:DEPTH"
        "[:bN][:padN][:profile][:cudagraphs]",
    )
    p.add_argument(
        "--concurrency",
        type=int,
        nargs="*",
        default=None,
        help="processes per round (default 1 4 8, none with --paper-runs; no value: no rounds)",
    )
    p.add_argument(
        "--concurrency-mode",
        choices=("eager", "compiled", "capture", "graphs-compile"),
        default=None,
        help="the rounds' training steps (default capture on the device, eager in the smoke)",
    )
    p.add_argument(
        "--concurrency-batch-sizes",
        type=int,
        nargs="+",
        default=[32, 8],
        help="batch sizes of the concurrency rounds (every N at each)",
    )
    p.add_argument("--concurrency-steps", type=int, default=60, help="timed steps of each concurrent process")
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    started, budget = time.monotonic(), Budget(args.budget_s)
    s = settings(args)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    results = {
        "settings": {k: v for k, v in s.items() if k != "estimates"},
        "estimate_s": estimate_s(s),
        "budget_s": args.budget_s,
        "environment": {},
        "paper_shape": [],
        "concurrency": [],
    }
    print(
        f"# GPU check: estimated {results['estimate_s']:.0f} s of device time (budget {args.budget_s:.0f} s); "
        f"results in {out}",
        *estimate_lines(s),
        sep="\n",
        flush=True,
    )
    write(out, results, started)
    results["environment"] = environment()
    print(machine.describe(), flush=True)
    write(out, results, started)

    from xlt.cost.profile import load

    profile = load(s["plan_gpu"])
    eager, compiled = paper_runs(s)
    with tempfile.TemporaryDirectory(prefix="gpu-check-") as scratch:
        for run in eager:
            results["paper_shape"].append(paper_run(s, run, profile, budget, Path(scratch), results["paper_shape"]))
            write(out, results, started)
            print(f"{one_line(results['paper_shape'][-1])}; {budget.left():.0f} s of budget left", flush=True)
        for batch_size in s["concurrency_batch_sizes"]:
            for n in s["concurrency"]:
                results["concurrency"].append(concurrency_round(s, n, batch_size, budget, Path(scratch)))
                concurrency_table(results["concurrency"])
                write(out, results, started)
                r = results["concurrency"][-1]
                got = (
                    r.get("skipped")
                    or f"{r['useful_tokens_per_s']:.0f} useful tokens/s, x{r['speedup_vs_one']:.2f} one process"
                )
                print(f"concurrency batch {batch_size} N={n}: {got}; {budget.left():.0f} s of budget left", flush=True)
        for run in compiled:
            results["paper_shape"].append(paper_run(s, run, profile, budget, Path(scratch), results["paper_shape"]))
            write(out, results, started)
            print(f"{one_line(results['paper_shape'][-1])}; {budget.left():.0f} s of budget left", flush=True)
    print(markdown(results), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
