"""Our training loop (xlt.core.training.train) against transformers.Trainer: samples/s and peak memory.

Both runners train the same random-init BERT classifier (same seed, so the same initial
weights) on the same examples, with the same batch size, precision, optimiser settings
(AdamW, lr, weight decay, linear warm-up/decay, clipping at 1.0) and number of steps; no
evaluation, logging or saving. Each runner of each configuration runs in a fresh subprocess,
so one run's allocations cannot pollute another's peak memory:

* samples/s: timed from the start of step `warmup` to the end of training (wall clock), also
  per CPU-second of the process (robust on a shared, oversubscribed CPU) and as padded
  tokens/s (dynamic padding makes batch widths differ between data orders);
* peak memory: on GPU torch.cuda.max_memory_allocated (reset before training); on CPU the
  growth of the process's peak RSS (resource.getrusage ru_maxrss) from just before training
  (model, data and tokenizer already built) to its end.

Data: "text" = the demo NLI task (premise/hypothesis pairs) with the demo WordPiece
tokenizer; ours gets the raw records and tokenises in its collate exactly as `xlt finetune`
does, Trainer gets the Hugging Face recipe (tokenised once up front, DataCollatorWithPadding;
the up-front tokenisation is reported, not timed). "tokens" = random token ids of exactly
`seq_len`, the same examples and collate for both.

Runs alternate between the runners (ours, Trainer, Trainer, ours, ...) so both see the same
background load; the table shows medians over the repeats and ratios ours / Trainer.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from machine import load_average
from shapes import SHAPES, random_classifier


@dataclass
class LoopConfig:
    name: str
    shape: str
    data: str  # "text" (demo NLI + demo tokenizer) or "tokens" (random ids of exactly seq_len)
    batch_size: int
    seq_len: int  # max_length for text, exact length for tokens
    steps: int
    warmup: int
    examples: int
    lr: float = 5e-4


# "demo" is one demo freeze-depth job's shape; "mbert" is the mBERT fine-tuning job at batch 32 /
# length 128 (a few steps: on a CPU each step takes seconds).
CONFIGS = {
    "demo": LoopConfig("demo", "demo", "text", batch_size=32, seq_len=48, steps=60, warmup=10, examples=1500),
    "small": LoopConfig("small", "small", "tokens", batch_size=32, seq_len=128, steps=12, warmup=2, examples=512),
    "mbert": LoopConfig(
        "mbert", "mbert", "tokens", batch_size=32, seq_len=128, steps=4, warmup=1, examples=256, lr=2e-5
    ),
    "tiny": LoopConfig("tiny", "tiny", "text", batch_size=8, seq_len=32, steps=6, warmup=2, examples=64),
}
RUNNERS = ("ours", "trainer")


def demo_tokenizer():
    """The demo's WordPiece tokenizer, built offline exactly as `xlt build-demo-model` builds it."""
    from xlt.data import demo
    from xlt.data.demo_model import build_tokenizer, demo_corpus

    return build_tokenizer(demo_corpus(list(demo.LANGUAGES), 3000 // 4, 7), 1000)


def random_token_examples(n: int, length: int, vocab: int, seed: int) -> list[dict]:
    import torch

    g = torch.Generator().manual_seed(seed)
    ids = torch.randint(5, vocab, (n, length), generator=g)
    labels = torch.randint(0, 3, (n,), generator=g)
    return [{"input_ids": ids[i].tolist(), "label": int(labels[i])} for i in range(n)]


def pad_collate(examples: list[dict], multiple: int = 1) -> dict:
    """Right-pad token-id examples (pad id 0) to the longest in the batch, rounded up to `multiple`."""
    import torch

    width = -(-max(len(e["input_ids"]) for e in examples) // multiple) * multiple
    ids = torch.zeros(len(examples), width, dtype=torch.long)
    mask = torch.zeros(len(examples), width, dtype=torch.long)
    for row, e in enumerate(examples):
        ids[row, : len(e["input_ids"])] = torch.tensor(e["input_ids"])
        mask[row, : len(e["input_ids"])] = 1
    return {"input_ids": ids, "attention_mask": mask, "labels": torch.tensor([e["label"] for e in examples])}


class TokenCounter:
    """Wraps a collate function and records each batch's padded size (batch x width)."""

    def __init__(self, collate):
        self.collate, self.sizes = collate, []

    def __call__(self, examples):
        batch = self.collate(examples)
        self.sizes.append(int(batch["input_ids"].numel()))
        return batch

    @property
    def mean(self) -> float:
        return statistics.mean(self.sizes) if self.sizes else 0.0


class Clock:
    """Wall and process-CPU time from `start()` (called at step `warmup`) to `stop()`."""

    def __init__(self, device):
        self.device, self.wall0, self.cpu0 = device, None, None

    def _sync(self):
        import torch

        if self.device.type == "cuda":
            torch.cuda.synchronize()

    def start(self):
        self._sync()
        self.wall0, self.cpu0 = time.perf_counter(), time.process_time()

    def stop(self) -> tuple[float, float]:
        self._sync()
        return time.perf_counter() - self.wall0, time.process_time() - self.cpu0


def _maxrss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux reports KiB


def run_worker(cfg: LoopConfig, runner: str, device_name: str, threads: int, seed: int) -> dict:
    """One runner, one configuration, in this (fresh) process."""
    import torch

    from xlt.core.classification import classification_loss, make_collate
    from xlt.core.models import pick_device
    from xlt.core.train_args import TrainArgs
    from xlt.core.train_inputs import LayerSchedule, Objective
    from xlt.core.training import train
    from xlt.data import demo

    torch.set_num_threads(threads)
    device = pick_device(device_name)
    shape = SHAPES[cfg.shape]
    tokenizer = None
    if cfg.data == "text":
        tokenizer = demo_tokenizer()
        from dataclasses import replace

        shape = replace(shape, vocab=len(tokenizer))
        records = demo.generate("nli", "en", "train", cfg.examples, seed)
    else:
        records = random_token_examples(cfg.examples, cfg.seq_len, shape.vocab, seed)
    model = random_classifier(shape, seed)
    params = sum(p.numel() for p in model.parameters())
    use_bf16 = device.type == "cuda"
    prep_s = 0.0

    if runner == "ours":
        collate = TokenCounter(make_collate(tokenizer, cfg.seq_len) if tokenizer is not None else pad_collate)
        examples = records
    else:
        if tokenizer is not None:
            from transformers import DataCollatorWithPadding

            started = time.perf_counter()
            encoded = tokenizer(
                [r["text"] for r in records], [r["text_pair"] for r in records], truncation=True, max_length=cfg.seq_len
            )
            examples = [
                {**{k: encoded[k][i] for k in encoded.keys()}, "labels": r["label"]} for i, r in enumerate(records)
            ]
            prep_s = time.perf_counter() - started
            collate = TokenCounter(DataCollatorWithPadding(tokenizer))
        else:
            examples = records
            collate = TokenCounter(pad_collate)

    clock = Clock(device)
    if device.type == "cuda":
        model.to(device)
    if runner == "ours":
        args = TrainArgs(
            max_steps=cfg.steps,
            batch_size=cfg.batch_size,
            lr=cfg.lr,
            weight_decay=0.01,
            warmup_ratio=0.1,
            max_grad_norm=1.0,
            max_length=cfg.seq_len,
            seed=seed,
            precision="bf16" if use_bf16 else "fp32",
            device=str(device),
            log_every=10**9,
        )

        def on_step(step, epoch):
            if step == cfg.warmup:
                clock.start()

        def start_training():
            train(model, Objective(examples, collate, classification_loss), args, layers=LayerSchedule(on_step=on_step))
    else:
        from transformers import Trainer, TrainerCallback, TrainingArguments

        class StartClock(TrainerCallback):
            def on_step_begin(self, args, state, control, **kwargs):
                if state.global_step == cfg.warmup:
                    clock.start()

        out = tempfile.mkdtemp(prefix="xlt-bench-")
        args = TrainingArguments(
            output_dir=out,
            max_steps=cfg.steps,
            per_device_train_batch_size=cfg.batch_size,
            learning_rate=cfg.lr,
            weight_decay=0.01,
            warmup_steps=int(0.1 * cfg.steps),
            lr_scheduler_type="linear",
            max_grad_norm=1.0,
            logging_strategy="no",
            save_strategy="no",
            eval_strategy="no",
            report_to="none",
            disable_tqdm=True,
            dataloader_num_workers=0,
            use_cpu=device.type == "cpu",
            bf16=use_bf16,
            seed=seed,
            remove_unused_columns=False,
        )
        # constructed before the memory baseline, like ours' TrainArgs: optimiser state, gradients and
        # activations (what the comparison is about) are only allocated by train()
        trainer = Trainer(
            model=model, args=args, train_dataset=examples, data_collator=collate, callbacks=[StartClock()]
        )
        start_training = trainer.train

    # library imports (Trainer pulls in accelerate) happen above, so they are not counted as training memory
    if device.type == "cuda":
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
    baseline_mb = _maxrss_mb()
    start_training()
    wall, cpu = clock.stop()
    if runner == "trainer":
        import shutil

        shutil.rmtree(out, ignore_errors=True)

    timed = cfg.steps - cfg.warmup
    if device.type == "cuda":
        peak_mb, mem_kind = torch.cuda.max_memory_allocated() / 2**20, "cuda max_memory_allocated"
    else:
        peak_mb, mem_kind = _maxrss_mb() - baseline_mb, "peak RSS growth"
    return {
        "config": cfg.name,
        "runner": runner,
        "device": str(device),
        "threads": threads,
        "params": params,
        "shape": shape.describe(),  # the text configs' vocabulary is the demo tokenizer's, not the preset's
        "timed_steps": timed,
        "wall_s": wall,
        "cpu_s": cpu,
        "samples_per_s": timed * cfg.batch_size / wall,
        "samples_per_cpu_s": timed * cfg.batch_size / max(cpu, 1e-9),
        "padded_tokens_per_s": timed * collate.mean / wall,
        "mean_batch_width": collate.mean / cfg.batch_size,
        "peak_mb": peak_mb,
        "memory": mem_kind,
        "rss_baseline_mb": baseline_mb,
        "rss_peak_mb": _maxrss_mb(),
        "prep_s": prep_s,
        "load": load_average(),
    }


def _package_env() -> dict:
    """Environment for worker subprocesses: import this checkout's `xlt` package (<repo>/src), quietly."""
    src = str(Path(__file__).resolve().parents[1] / "src")
    env = dict(os.environ)
    env["PYTHONPATH"] = src + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env.setdefault("TOKENIZERS_PARALLELISM", "false")
    env.setdefault("HF_HUB_OFFLINE", "1")
    return env


def spawn(cfg: LoopConfig, runner: str, device: str, threads: int, seed: int) -> dict:
    payload = json.dumps({"config": asdict(cfg), "runner": runner, "device": device, "threads": threads, "seed": seed})
    # the script file itself (its directory, benchmarks/, is then first on the worker's sys.path)
    proc = subprocess.run(
        [sys.executable, str(Path(__file__).resolve()), "--worker", payload],
        env=_package_env(),
        capture_output=True,
        text=True,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"{runner} on {cfg.name} failed:\n{proc.stderr[-4000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def compare(
    configs: list[str],
    repeats: int = 3,
    device: str = "cpu",
    threads: int = 2,
    seed: int = 1,
    steps: int | None = None,
    echo=print,
) -> list[dict]:
    """Run every configuration `repeats` times per runner; one summary row per configuration."""
    rows = []
    echo(
        "| config | model | batch x len | timed steps | ours samples/s | Trainer samples/s | speed ratio "
        "| ours samples/CPU-s | Trainer samples/CPU-s | CPU ratio | ours peak MB | Trainer peak MB | memory ratio "
        "| load during runs |"
    )
    echo("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for name in configs:
        cfg = CONFIGS[name]
        if steps:
            from dataclasses import replace

            cfg = replace(cfg, steps=steps, warmup=min(cfg.warmup, steps - 1))
        runs = {runner: [] for runner in RUNNERS}
        loads = [load_average()]
        for r in range(repeats):
            order = RUNNERS if r % 2 == 0 else RUNNERS[::-1]
            for runner in order:
                runs[runner].append(spawn(cfg, runner, device, threads, seed))
                loads.append(runs[runner][-1]["load"])
        med = {
            runner: {
                k: statistics.median(run[k] for run in runs[runner])
                for k in ("samples_per_s", "samples_per_cpu_s", "peak_mb", "padded_tokens_per_s")
            }
            for runner in RUNNERS
        }
        ours, hf = med["ours"], med["trainer"]
        row = {
            "config": name,
            "shape": runs["ours"][0]["shape"],
            "batch": cfg.batch_size,
            "seq_len": cfg.seq_len,
            "timed_steps": cfg.steps - cfg.warmup,
            "repeats": repeats,
            "device": runs["ours"][0]["device"],
            "threads": threads,
            "ours": ours,
            "trainer": hf,
            "runs": runs,
            "speed_ratio": ours["samples_per_s"] / hf["samples_per_s"],
            "cpu_ratio": ours["samples_per_cpu_s"] / hf["samples_per_cpu_s"],
            "memory_ratio": ours["peak_mb"] / hf["peak_mb"] if hf["peak_mb"] > 0 else float("nan"),
            "loads": loads,
        }
        rows.append(row)
        echo(
            f"| {name} | {row['shape']} | {cfg.batch_size} x {cfg.seq_len} | {row['timed_steps']} x {repeats} "
            f"| {ours['samples_per_s']:.1f} | {hf['samples_per_s']:.1f} | {row['speed_ratio']:.2f} "
            f"| {ours['samples_per_cpu_s']:.1f} | {hf['samples_per_cpu_s']:.1f} | {row['cpu_ratio']:.2f} "
            f"| {ours['peak_mb']:.0f} | {hf['peak_mb']:.0f} | {row['memory_ratio']:.2f} | {loads[0]} .. {loads[-1]} |"
        )
    memory = runs["ours"][0]["memory"] if rows else ""
    echo(
        f"(device {rows[0]['device'] if rows else device}, {threads} threads; peak memory = {memory}; "
        "medians over repeats; ratio = ours / Trainer, > 1 means ours is faster / uses more memory)"
    )
    return rows


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--configs", default="demo,small", help=f"comma-separated, from {sorted(CONFIGS)}")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--steps", type=int, default=0, help="override every configuration's step count")
    parser.add_argument("--device", default="cpu")
    parser.add_argument(
        "--threads",
        type=int,
        default=1,
        help="torch threads per run (1, like a Snakemake job: it sets OMP_NUM_THREADS=1)",
    )
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", default=None, help="also write all runs to this JSON file")


def run(args: argparse.Namespace, echo=print) -> list[dict]:
    names = [n for n in args.configs.split(",") if n]
    unknown = [n for n in names if n not in CONFIGS]
    if unknown:
        from xlt.core.errors import XltError

        raise XltError(f"unknown loop benchmark configuration(s) {unknown}; choose from {sorted(CONFIGS)}")
    rows = compare(names, args.repeats, args.device, args.threads, args.seed, args.steps or None, echo=echo)
    if args.json:
        from xlt.core.io import write_json

        write_json(args.json, rows)
    return rows


def main(argv: list[str] | None = None) -> None:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["--worker"]:
        spec = json.loads(argv[1])
        result = run_worker(LoopConfig(**spec["config"]), spec["runner"], spec["device"], spec["threads"], spec["seed"])
        print(json.dumps(result), flush=True)
        return
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_arguments(parser)
    run(parser.parse_args(argv))


if __name__ == "__main__":
    main()
