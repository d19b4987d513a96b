"""Benchmark frozen-prefix caching: training steps/s uncached vs cached per freeze depth.

Random-init BERT classifier (default: mBERT-shaped but smaller, hidden 256, 12 layers, 4 heads;
--mbert for the real mBERT size), random token sequences of varying length, dynamic padding.
For each measured depth it times training steps (median of --steps timed steps after --warmup,
uncached and cached steps interleaved) with the prefix recomputed every step (uncached) and on
cached states (cached, collation included), plus the one-off caching pass over the whole dataset. The depth-sweep total over
-1..L for E epochs uses the measured depths and linear interpolation in depth for the others
(step cost and caching cost are both linear in the number of layers run).

    PYTHONPATH=src python benchmarks/prefix_cache.py --epochs 3
    # on a shared, oversubscribed CPU: count CPU time of one thread instead of wall time
    PYTHONPATH=src python benchmarks/prefix_cache.py --epochs 3 --threads 1 --clock process
"""
from __future__ import annotations

import argparse
import copy
import math
import statistics
import time

import torch
from torch.utils.data import DataLoader
from transformers import BertConfig, BertForSequenceClassification

from xlt.freezing import freeze, trainable_parameters
from xlt.prefix_cache import CachedTopModel, PrefixStateDataset, collate_prefix_states, compute_prefix_states


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
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
    parser.add_argument("--clock", choices=["wall", "process"], default="wall",
                        help="process = CPU time of this process: robust on a shared, oversubscribed CPU "
                             "(use with --threads 1 and --device cpu); wall for GPUs")
    args = parser.parse_args()
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
        batches.append({"input_ids": ids, "attention_mask": mask,
                        "token_type_ids": torch.zeros_like(ids),
                        "labels": torch.randint(0, 3, (size,), generator=generator)})
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
    return {"uncached": uncached.seconds_per_step, "cached": cached.seconds_per_step,
            "cache_cost": cache_cost, "cache_mb": states.nbytes / 2**20}


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


def main() -> None:
    args = parse_args()
    torch.set_num_threads(args.threads)
    device = torch.device(args.device)
    torch.manual_seed(args.seed)
    config = BertConfig(vocab_size=args.vocab, hidden_size=args.hidden, num_hidden_layers=args.layers,
                        num_attention_heads=args.heads, intermediate_size=4 * args.hidden,
                        max_position_embeddings=max(512, args.seq_len), num_labels=3)
    base = BertForSequenceClassification(config)
    batches = make_batches(args, torch.Generator().manual_seed(args.seed))
    steps_per_epoch = len(batches)
    depths = sorted({-1, *(int(d) for d in args.depths.split(","))})
    if not all(-1 <= d <= args.layers for d in depths):
        raise SystemExit(f"--depths must lie in -1..{args.layers}")

    print(f"# BERT hidden={args.hidden} layers={args.layers} heads={args.heads} vocab={args.vocab} "
          f"seq_len<={args.seq_len} batch={args.batch_size} examples={args.examples} "
          f"({steps_per_epoch} steps/epoch) storage={args.storage_dtype} device={device} "
          f"threads={torch.get_num_threads()} clock={args.clock} epochs={args.epochs}")
    header = (f"{'depth':>5} {'uncached st/s':>13} {'cached st/s':>11} {'step x':>7} {'cache s':>8} "
              f"{'cache MB':>8} {'uncached ' + str(args.epochs) + 'ep s':>15} {'cached ' + str(args.epochs) + 'ep s':>13} "
              f"{'run x':>6}")
    print(header, flush=True)
    measured = {}
    for depth in depths:
        m = measured[depth] = measure(depth, base, batches, args, device)
        run_uncached = args.epochs * steps_per_epoch * m["uncached"]
        run_cached = m["cache_cost"] + args.epochs * steps_per_epoch * m["cached"]
        print(f"{depth:>5} {1 / m['uncached']:>13.2f} {1 / m['cached']:>11.2f} {m['uncached'] / m['cached']:>7.2f} "
              f"{m['cache_cost']:>8.2f} {m.get('cache_mb', 0.0):>8.1f} {run_uncached:>15.1f} {run_cached:>13.1f} "
              f"{run_uncached / run_cached:>6.2f}", flush=True)

    total_uncached = total_cached = 0.0
    for depth in range(-1, args.layers + 1):
        uncached = measured[-1]["uncached"] if depth < 0 else interpolate(depth, measured, "uncached")
        cached = measured[-1]["uncached"] if depth < 0 else interpolate(depth, measured, "cached")
        cache_cost = 0.0 if depth < 0 else interpolate(depth, measured, "cache_cost")
        total_uncached += args.epochs * steps_per_epoch * uncached
        total_cached += cache_cost + args.epochs * steps_per_epoch * cached
    interpolated = [d for d in range(0, args.layers + 1) if d not in measured]
    print(f"# sweep -1..{args.layers}, {args.epochs} epochs x {steps_per_epoch} steps "
          f"(depths {interpolated} interpolated): uncached {total_uncached:.1f} s, cached {total_cached:.1f} s, "
          f"saving {total_uncached - total_cached:.1f} s ({100 * (1 - total_cached / total_uncached):.1f}%), "
          f"x{total_uncached / total_cached:.2f}")


if __name__ == "__main__":
    main()
