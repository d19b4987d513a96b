"""Benchmark frozen-prefix caching: training steps/s uncached vs cached per freeze depth.

Random-init BERT classifier (default: mBERT-shaped but smaller, hidden 256, 12 layers, 4 heads;
--mbert for the real mBERT size), random token sequences of varying length, dynamic padding.
For each measured depth it times training steps (median of --steps timed steps after --warmup,
uncached and cached steps interleaved) with the prefix recomputed every step (uncached) and on
cached states (cached, collation included), plus the one-off caching pass over the whole
dataset. The depth-sweep total over -1..L for E epochs uses the measured depths and linear
interpolation in depth for the others
(step cost and caching cost are both linear in the number of layers run).

    PYTHONPATH=src python benchmarks/prefix_cache.py --epochs 3      (or: benchmarks/bench.py --prefix-cache)
    # on a shared, oversubscribed CPU: count CPU time of one thread instead of wall time
    PYTHONPATH=src python benchmarks/prefix_cache.py --epochs 3 --threads 1 --clock process
"""

from __future__ import annotations

import argparse
import copy
import statistics
import time
from pathlib import Path

import torch
from machine import load_average
from transformers import BertConfig, BertForSequenceClassification

from xlt.core.freezing import freeze
from xlt.frozen_prefix.cached_top import CachedTopModel
from xlt.frozen_prefix.prefix_cache import PrefixStateDataset, collate_prefix_states, compute_prefix_states


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="benchmarks/prefix_cache.py", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--mbert", action="store_true", help="real mBERT size: hidden 768, 12 heads, vocab 119547")
    parser.add_argument("--hidden", type=int, default=256)
    parser.add_argument("--layers", type=int, default=12)
    parser.add_argument("--heads", type=int, default=4)
    parser.add_argument("--vocab", type=int, default=10000)
    parser.add_argument("--seq-len", type=int, default=64, help="maximum sequence length; lengths vary in [len/4, len]")
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--examples", type=int, default=64, help="dataset size (one epoch)")
    parser.add_argument("--depths", default="0,3,6,9,12", help="freeze depths to measure (-1 is always measured)")
    parser.add_argument("--steps", type=int, default=3, help="timed training steps per depth and mode")
    parser.add_argument("--warmup", type=int, default=1)
    parser.add_argument("--epochs", type=int, default=3, help="epochs for the whole-sweep projection")
    parser.add_argument("--storage-dtype", default="float32", choices=["float32", "float16", "bfloat16"])
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--clock",
        choices=["wall", "process"],
        default="wall",
        help="process = CPU time of this process: robust on a shared, oversubscribed CPU "
        "(use with --threads 1 and --device cpu); wall for GPUs",
    )
    args = parser.parse_args(argv)
    if args.clock == "process" and args.device != "cpu":
        parser.error("--clock process measures CPU time; use --clock wall on a GPU")
    if args.mbert:
        args.hidden, args.heads, args.vocab = 768, 12, 119547
    return args


def make_batches(args, generator: torch.Generator) -> list[dict]:
    batches = []
    for start in range(0, args.examples, args.batch_size):
        size = min(args.batch_size, args.examples - start)
        lengths = torch.randint(args.seq_len // 4, args.seq_len + 1, (size,), generator=generator)
        width = int(lengths.max())
        ids = torch.zeros(size, width, dtype=torch.long)
        mask = (torch.arange(width) < lengths[:, None]).long()
        ids[mask.bool()] = torch.randint(1000, args.vocab, (int(lengths.sum()),), generator=generator)
        batches.append(
            {
                "input_ids": ids,
                "attention_mask": mask,
                "token_type_ids": torch.zeros_like(ids),
                "labels": torch.randint(0, 3, (size,), generator=generator),
            }
        )
    return batches


CLOCKS = {"wall": time.perf_counter, "process": time.process_time}


def sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize()


class Trainer:
    """One training step at a time (forward, backward, AdamW step), timed with the chosen clock."""

    def __init__(self, model, batches, args, device, collate=None):
        self.model, self.batches, self.device, self.collate = model, batches, device, collate
        self.clock = CLOCKS[args.clock]
        self.optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-5)
        self.timings: list[float] = []
        model.train()

    def step(self, index: int, record: bool) -> None:
        items = self.batches[index % len(self.batches)]
        sync(self.device)
        start = self.clock()
        batch = self.collate(items) if self.collate else items
        batch = {k: v.to(self.device) for k, v in batch.items()}
        self.optimizer.zero_grad(set_to_none=True)
        self.model(**batch).loss.backward()
        self.optimizer.step()
        sync(self.device)
        if record:
            self.timings.append(self.clock() - start)

    @property
    def seconds_per_step(self) -> float:
        return statistics.median(self.timings)


def run_interleaved(trainers: list[Trainer], args) -> None:
    # Alternating steps expose every mode to the same background load on a shared machine.
    for index in range(args.warmup + args.steps):
        for trainer in trainers:
            trainer.step(index, record=index >= args.warmup)


def measure(depth, base, batches, args, device) -> dict:
    uncached_model = copy.deepcopy(base).to(device)
    freeze(uncached_model, depth)
    uncached = Trainer(uncached_model, batches, args, device)
    if depth < 0:
        run_interleaved([uncached], args)
        return {"uncached": uncached.seconds_per_step, "cached": uncached.seconds_per_step, "cache_cost": 0.0}
    model = copy.deepcopy(base).to(device)
    freeze(model, depth)
    clock = CLOCKS[args.clock]
    sync(device)
    start = clock()
    states = compute_prefix_states(model, depth, batches, device, storage_dtype=args.storage_dtype)
    sync(device)
    cache_cost = clock() - start
    dataset = PrefixStateDataset(states)
    # Same batch composition as uncached; collation runs inside the timed step.
    index_batches, start_index = [], 0
    for batch in batches:
        size = batch["input_ids"].shape[0]
        index_batches.append([dataset[i] for i in range(start_index, start_index + size)])
        start_index += size
    cached = Trainer(CachedTopModel(model, depth), index_batches, args, device, collate=collate_prefix_states)
    run_interleaved([uncached, cached], args)
    return {
        "uncached": uncached.seconds_per_step,
        "cached": cached.seconds_per_step,
        "cache_cost": cache_cost,
        "cache_mb": states.nbytes / 2**20,
    }


def interpolate(depth: int, measured: dict[int, dict], key: str) -> float:
    if depth in measured:
        return measured[depth][key]
    known = sorted(d for d in measured if d >= 0)
    lower = max((d for d in known if d < depth), default=known[0])
    upper = min((d for d in known if d > depth), default=known[-1])
    if lower == upper:
        return measured[lower][key]
    weight = (depth - lower) / (upper - lower)
    return (1 - weight) * measured[lower][key] + weight * measured[upper][key]


def main(argv: list[str] | None = None, echo=print) -> dict:
    """Run the benchmark; print one table row per measured depth and the whole-sweep projection."""
    args = parse_args(argv)
    torch.set_num_threads(args.threads)
    device = torch.device(args.device)
    torch.manual_seed(args.seed)
    config = BertConfig(
        vocab_size=args.vocab,
        hidden_size=args.hidden,
        num_hidden_layers=args.layers,
        num_attention_heads=args.heads,
        intermediate_size=4 * args.hidden,
        max_position_embeddings=max(512, args.seq_len),
        num_labels=3,
    )
    base = BertForSequenceClassification(config)
    batches = make_batches(args, torch.Generator().manual_seed(args.seed))
    steps_per_epoch = len(batches)
    depths = sorted({-1, *(int(d) for d in args.depths.split(","))})
    if not all(-1 <= d <= args.layers for d in depths):
        raise SystemExit(f"--depths must lie in -1..{args.layers}")

    echo(
        f"BERT hidden={args.hidden} layers={args.layers} heads={args.heads} vocab={args.vocab} "
        f"seq_len<={args.seq_len} batch={args.batch_size} examples={args.examples} "
        f"({steps_per_epoch} steps/epoch) storage={args.storage_dtype} device={device} "
        f"threads={torch.get_num_threads()} clock={args.clock} epochs={args.epochs}\n"
    )
    echo(
        f"| depth | uncached steps/s | cached steps/s | step speed-up | cache pass s | cache MB "
        f"| uncached {args.epochs} ep s | cached {args.epochs} ep s (incl. cache pass) | run speed-up | load |"
    )
    echo("|---|---|---|---|---|---|---|---|---|---|")
    measured, rows = {}, []
    for depth in depths:
        m = measured[depth] = measure(depth, base, batches, args, device)
        run_uncached = args.epochs * steps_per_epoch * m["uncached"]
        run_cached = m["cache_cost"] + args.epochs * steps_per_epoch * m["cached"]
        rows.append(
            {"depth": depth, **m, "run_uncached_s": run_uncached, "run_cached_s": run_cached, "load": load_average()}
        )
        echo(
            f"| {depth} | {1 / m['uncached']:.2f} | {1 / m['cached']:.2f} | {m['uncached'] / m['cached']:.2f} "
            f"| {m['cache_cost']:.2f} | {m.get('cache_mb', 0.0):.1f} | {run_uncached:.1f} | {run_cached:.1f} "
            f"| {run_uncached / run_cached:.2f} | {rows[-1]['load']} |"
        )

    total_uncached = total_cached = 0.0
    for depth in range(-1, args.layers + 1):
        uncached = measured[-1]["uncached"] if depth < 0 else interpolate(depth, measured, "uncached")
        cached = measured[-1]["uncached"] if depth < 0 else interpolate(depth, measured, "cached")
        cache_cost = 0.0 if depth < 0 else interpolate(depth, measured, "cache_cost")
        total_uncached += args.epochs * steps_per_epoch * uncached
        total_cached += cache_cost + args.epochs * steps_per_epoch * cached
    interpolated = [d for d in range(0, args.layers + 1) if d not in measured]
    echo(
        f"\nWhole sweep -1..{args.layers}, {args.epochs} epochs x {steps_per_epoch} steps "
        f"(depths {interpolated} interpolated): uncached {total_uncached:.1f} s, cached {total_cached:.1f} s, "
        f"saving {total_uncached - total_cached:.1f} s ({100 * (1 - total_cached / total_uncached):.1f}%), "
        f"x{total_uncached / total_cached:.2f}"
    )
    return {"rows": rows, "sweep_uncached_s": total_uncached, "sweep_cached_s": total_cached}


# --- end to end: the real `xlt finetune` job, cached vs uncached -----------------------------

DEMO_FINETUNE_FLAGS = [
    "--max-steps",
    "120",
    "--batch-size",
    "32",
    "--lr",
    "5e-4",
    "--warmup-ratio",
    "0.1",
    "--eval-every",
    "40",
    "--max-length",
    "48",
    "--log-every",
    "20",
    "--device",
    "cpu",
]


def _demo_inputs(root: Path, layers: int, train_size: int, seed: int, dropout: float = 0.1) -> Path:
    """A random-init demo-shaped classifier (12 x hidden 64, the demo tokenizer) and demo NLI data."""
    from dataclasses import replace

    from loop import demo_tokenizer
    from shapes import SHAPES, random_classifier

    from xlt.core.io import write_jsonl
    from xlt.core.models import save_model
    from xlt.data import demo

    tokenizer = demo_tokenizer()
    shape = replace(SHAPES["demo"], layers=layers, vocab=len(tokenizer))
    save_model(random_classifier(shape, seed, dropout=dropout), tokenizer, root / "model")
    write_jsonl(root / "train.jsonl", demo.generate("nli", "en", "train", train_size, seed))
    write_jsonl(root / "dev.jsonl", demo.generate("nli", "en", "dev", 150, seed))
    return root


def run_xlt(verb_and_args: list[str], threads: int) -> float:
    """Wall seconds of one `xlt` job in a fresh process on `threads` threads."""
    import subprocess
    import sys

    from loop import _package_env

    started = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "xlt.cli", *verb_and_args],
        capture_output=True,
        text=True,
        env=_package_env() | {"OMP_NUM_THREADS": str(threads)},
    )
    wall = time.perf_counter() - started
    if proc.returncode != 0:
        raise RuntimeError(f"xlt {verb_and_args[0]} failed:\n{proc.stderr[-3000:]}")
    return wall


def finetune_job(root: Path, depth: int, cached: bool, out: Path, threads: int, extra: list[str] = ()) -> dict:
    import json

    wall = run_xlt(
        [
            "finetune",
            "--model",
            str(root / "model"),
            "--train",
            str(root / "train.jsonl"),
            "--dev",
            str(root / "dev.jsonl"),
            "--num-labels",
            "3",
            "--freeze-depth",
            str(depth),
            "--out",
            str(out),
            *DEMO_FINETUNE_FLAGS,
            *extra,
            *(["--cache-frozen-prefix"] if cached else []),
        ],
        threads,
    )
    meta = json.loads((out / "train.json").read_text())["meta"]
    return {
        "job_s": wall,
        "train_s": meta["train_wall_s"],
        "cache_s": meta.get("cache_s", 0.0),
        "cached": meta.get("cache_frozen_prefix", False),
        "dev_accuracy": meta["best_dev_score"],
    }


def finetune_comparison(
    depths: list[int], layers: int = 12, threads: int = 1, train_size: int = 1500, seed: int = 1, echo=print
) -> dict:
    """Demo-sized `xlt finetune` jobs (the demo config's settings) uncached and cached per depth,
    run alternately in fresh processes; the whole sweep -1..L is projected with linear
    interpolation in depth between measured depths (-1 is never cached)."""
    import tempfile

    rows = {}
    echo(
        f"Demo-shaped finetune jobs (12 x hidden 64 random init, demo NLI {train_size} train / 150 dev, "
        f"{' '.join(DEMO_FINETUNE_FLAGS)}, OMP_NUM_THREADS={threads}); 'train s' is train() alone, "
        "'cache s' the caching pass, 'job s' the whole process (imports, loading, evaluation, saving).\n"
    )
    echo(
        "| depth | uncached job s | cached job s | job speed-up | uncached train s | cached cache s + train s "
        "| training speed-up | dev acc uncached / cached | load |"
    )
    echo("|---|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory(prefix="xlt-bench-cache-") as tmp:
        root = _demo_inputs(Path(tmp), layers, train_size, seed)
        for depth in sorted(set(depths)):
            plain = finetune_job(root, depth, False, Path(tmp) / f"plain{depth}", threads)
            cached = finetune_job(root, depth, True, Path(tmp) / f"cached{depth}", threads)
            cached_train = cached["cache_s"] + cached["train_s"]
            rows[depth] = {"uncached": plain, "cached": cached, "load": load_average()}
            echo(
                f"| {depth} | {plain['job_s']:.1f} | {cached['job_s']:.1f} | {plain['job_s'] / cached['job_s']:.2f} "
                f"| {plain['train_s']:.1f} | {cached['cache_s']:.1f} + {cached['train_s']:.1f} "
                f"| {plain['train_s'] / cached_train:.2f} | {plain['dev_accuracy']:.3f} / {cached['dev_accuracy']:.3f} "
                f"| {rows[depth]['load']} |"
            )

    def at(depth: int, mode: str) -> float:
        if depth in rows:
            return rows[depth][mode]["job_s"]
        known = sorted(d for d in rows if d >= 0)
        lower = max((d for d in known if d < depth), default=known[0])
        upper = min((d for d in known if d > depth), default=known[-1])
        if lower == upper:
            return rows[lower][mode]["job_s"]
        w = (depth - lower) / (upper - lower)
        return (1 - w) * rows[lower][mode]["job_s"] + w * rows[upper][mode]["job_s"]

    sweep = list(range(-1, layers + 1))
    uncached_total = sum(at(d, "uncached") for d in sweep)
    cached_total = sum(at(d, "uncached") if d < 0 else at(d, "cached") for d in sweep)
    echo(
        f"\nWhole demo sweep -1..{layers} ({len(sweep)} finetune jobs, unmeasured depths interpolated): "
        f"uncached {uncached_total:.0f} s, cached {cached_total:.0f} s of job time, saving "
        f"{uncached_total - cached_total:.0f} s ({100 * (1 - cached_total / uncached_total):.0f}%)"
    )
    return {"rows": rows, "sweep_uncached_s": uncached_total, "sweep_cached_s": cached_total}


# --- the whole sweep: one shared prefix pass (`xlt prefix-states`) vs every depth uncached --------


def _flag(name: str) -> str:
    return DEMO_FINETUNE_FLAGS[DEMO_FINETUNE_FLAGS.index(name) + 1]


def prefix_states_job(root: Path, depths: list[int], out: Path, threads: int, storage_dtype: str) -> dict:
    import json

    wall = run_xlt(
        [
            "prefix-states",
            "--model",
            str(root / "model"),
            "--num-labels",
            "3",
            "--train",
            str(root / "train.jsonl"),
            f"--depths={','.join(map(str, depths))}",
            "--max-length",
            _flag("--max-length"),
            "--batch-size",
            _flag("--batch-size"),
            "--device",
            _flag("--device"),
            "--storage-dtype",
            storage_dtype,
            "--max-gib",
            "10",
            "--out",
            str(out),
        ],
        threads,
    )
    meta = json.loads((out / "meta.json").read_text())
    return {"job_s": wall, "compute_s": meta["compute_s"], "mb": meta["nbytes"] / 2**20}


def shared_sweep_comparison(
    layers: int = 12,
    threads: int = 1,
    train_size: int = 1500,
    seed: int = 1,
    storage_dtype: str = "float16",
    echo=print,
) -> dict:
    """The whole freeze-depth sweep -1..L as the workflow runs it, on this machine in one run:
    every depth's `xlt finetune` uncached, against one `xlt prefix-states` job plus every depth
    >= 0's `xlt finetune --prefix-states` (depth -1 trains uncached in both: one job, counted in
    both sums). Each depth's two jobs run back to back, so both see the same load. The model
    has dropout 0, so uncached training is exactly the eval-mode-prefix semantics of the store
    and the dev accuracies must agree up to the storage rounding."""
    import tempfile

    depths = list(range(-1, layers + 1))
    echo(
        f"Whole sweep -1..{layers}, demo-shaped ({layers} x hidden 64 random init, dropout 0), demo NLI "
        f"{train_size} train / 150 dev, {' '.join(DEMO_FINETUNE_FLAGS)}, OMP_NUM_THREADS={threads}, "
        f"store {storage_dtype}; job s is the whole process (imports, loading, training, evaluation, saving).\n"
    )
    rows = {}
    with tempfile.TemporaryDirectory(prefix="xlt-bench-shared-") as tmp:
        root = _demo_inputs(Path(tmp), layers, train_size, seed, dropout=0.0)
        store = prefix_states_job(root, [d for d in depths if d >= 0], Path(tmp) / "store", threads, storage_dtype)
        echo(
            f"`xlt prefix-states` (depths 0..{layers} in one pass): job {store['job_s']:.1f} s, "
            f"pass {store['compute_s']:.1f} s, store {store['mb']:.1f} MB\n"
        )
        echo("| depth | uncached job s | shared job s | dev acc uncached | dev acc shared | load |")
        echo("|---|---|---|---|---|---|")
        for depth in depths:
            plain = finetune_job(root, depth, False, Path(tmp) / f"plain{depth}", threads)
            shared = (
                plain
                if depth < 0
                else finetune_job(
                    root,
                    depth,
                    False,
                    Path(tmp) / f"shared{depth}",
                    threads,
                    ["--prefix-states", str(Path(tmp) / "store")],
                )
            )
            rows[depth] = {"uncached": plain, "shared": shared, "load": load_average()}
            echo(
                f"| {depth} | {plain['job_s']:.1f} | {shared['job_s']:.1f}{' (same job)' if depth < 0 else ''} "
                f"| {plain['dev_accuracy']:.4f} | {shared['dev_accuracy']:.4f} | {rows[depth]['load']} |"
            )
    uncached = sum(r["uncached"]["job_s"] for r in rows.values())
    shared = store["job_s"] + sum(r["shared"]["job_s"] for r in rows.values())
    same = sum(r["uncached"]["dev_accuracy"] == r["shared"]["dev_accuracy"] for r in rows.values())
    largest = max(abs(r["uncached"]["dev_accuracy"] - r["shared"]["dev_accuracy"]) for r in rows.values())
    echo(
        f"\nWhole sweep: uncached {uncached:.1f} s (sum of {len(depths)} jobs), shared {shared:.1f} s "
        f"(prefix-states {store['job_s']:.1f} s + {len(depths)} jobs): ratio {shared / uncached:.2f}x "
        f"(target <= 0.6x); dev accuracy equal at {same}/{len(depths)} depths, largest difference {largest:.4f}"
    )
    return {
        "rows": rows,
        "store": store,
        "sweep_uncached_s": uncached,
        "sweep_shared_s": shared,
        "ratio": shared / uncached,
        "equal_accuracies": same,
    }


# --- the dual encoder: `xlt train-dual` at a deep freeze depth, uncached vs --cache-frozen-prefix --------

DEMO_DUAL_FLAGS = [
    "--max-steps",
    "60",
    "--batch-size",
    "32",
    "--lr",
    "1e-3",
    "--eval-every",
    "30",
    "--max-length",
    "32",
    "--log-every",
    "20",
    "--device",
    "cpu",
    "--seed",
    "1",
]


def _dual_inputs(root: Path, layers: int, pairs: int, seed: int) -> Path:
    """A random-init demo-shaped encoder (layers x hidden 64, dropout 0, the demo tokenizer) and
    demo bitext in three languages (multi-way parallel: the English side repeats)."""
    from dataclasses import replace

    from loop import demo_tokenizer
    from shapes import SHAPES, random_classifier

    from xlt.core.io import write_jsonl
    from xlt.core.models import save_model
    from xlt.data import demo

    tokenizer = demo_tokenizer()
    shape = replace(SHAPES["demo"], layers=layers, vocab=len(tokenizer))
    save_model(random_classifier(shape, seed, dropout=0.0).bert, tokenizer, root / "model")
    for lang in ("qaa", "qab", "qac"):
        for split, size in (("train", pairs), ("dev", 50)):
            write_jsonl(root / lang / f"{split}.jsonl", demo.generate("bitext", lang, split, size, seed))
    return root


def dual_job(root: Path, depth: int, cached: bool, out: Path, threads: int) -> dict:
    import json

    files = [
        arg
        for lang in ("qaa", "qab", "qac")
        for split in ("train", "dev")
        for arg in (f"--{split}", str(root / lang / f"{split}.jsonl"))
    ]
    wall = run_xlt(
        [
            "train-dual",
            "--model",
            str(root / "model"),
            *files,
            "--freeze-depth",
            str(depth),
            "--out",
            str(out),
            *DEMO_DUAL_FLAGS,
            *(["--cache-frozen-prefix"] if cached else []),
        ],
        threads,
    )
    meta = json.loads((out / "train.json").read_text())["meta"]
    return {
        "job_s": wall,
        "train_s": meta["train_wall_s"],
        "cache_s": meta["cache_s"],
        "dev_score": meta["best_dev_score"],
        "loss_curve": meta["loss_curve"],
    }


def dual_comparison(
    depths: list[int], layers: int = 12, threads: int = 1, pairs: int = 400, seed: int = 1, echo=print
) -> dict:
    """`xlt train-dual` uncached and with --cache-frozen-prefix per depth, back to back in fresh
    processes. Dropout 0, so the two runs are the same training (equal loss curves and dev scores)."""
    import tempfile

    echo(
        f"Demo-shaped `xlt train-dual` ({layers} x hidden 64 random init, dropout 0), demo bitext 3 x {pairs} "
        f"train pairs / 3 x 50 dev, {' '.join(DEMO_DUAL_FLAGS)}, OMP_NUM_THREADS={threads}\n"
    )
    echo(
        "| depth | uncached job s | cached job s | uncached train s | cached cache s + train s | training speed-up "
        "| same loss curve | dev score uncached / cached | load |"
    )
    echo("|---|---|---|---|---|---|---|---|---|")
    rows = {}
    with tempfile.TemporaryDirectory(prefix="xlt-bench-dual-") as tmp:
        root = _dual_inputs(Path(tmp), layers, pairs, seed)
        for depth in depths:
            plain = dual_job(root, depth, False, Path(tmp) / f"plain{depth}", threads)
            cached = dual_job(root, depth, True, Path(tmp) / f"cached{depth}", threads)
            rows[depth] = {"uncached": plain, "cached": cached, "load": load_average()}
            echo(
                f"| {depth} | {plain['job_s']:.1f} | {cached['job_s']:.1f} | {plain['train_s']:.1f} "
                f"| {cached['cache_s']:.1f} + {cached['train_s']:.1f} "
                f"| {plain['train_s'] / (cached['cache_s'] + cached['train_s']):.2f} "
                f"| {plain['loss_curve'] == cached['loss_curve']} "
                f"| {plain['dev_score']:.4f} / {cached['dev_score']:.4f} | {rows[depth]['load']} |"
            )
    return rows


if __name__ == "__main__":
    import sys

    if "--dual" in sys.argv:  # python benchmarks/prefix_cache.py --dual [--depths 11] [--threads 1]
        sys.argv.remove("--dual")
        parser = argparse.ArgumentParser(prog="benchmarks/prefix_cache.py --dual")
        parser.add_argument("--depths", default="11", help="comma-separated freeze depths >= 0")
        parser.add_argument("--layers", type=int, default=12)
        parser.add_argument("--threads", type=int, default=1)
        parser.add_argument("--pairs", type=int, default=400, help="training pairs per language")
        opts = parser.parse_args()
        dual_comparison([int(d) for d in opts.depths.split(",")], opts.layers, opts.threads, opts.pairs)
    elif "--shared-sweep" in sys.argv:  # python benchmarks/prefix_cache.py --shared-sweep [--storage-dtype float32]
        sys.argv.remove("--shared-sweep")
        parser = argparse.ArgumentParser(prog="benchmarks/prefix_cache.py --shared-sweep")
        parser.add_argument("--storage-dtype", default="float16", choices=["float16", "float32"])
        parser.add_argument("--threads", type=int, default=1)
        parser.add_argument("--train-size", type=int, default=1500)
        parser.add_argument("--seed", type=int, default=1)
        opts = parser.parse_args()
        shared_sweep_comparison(
            threads=opts.threads, train_size=opts.train_size, seed=opts.seed, storage_dtype=opts.storage_dtype
        )
    else:
        main()
