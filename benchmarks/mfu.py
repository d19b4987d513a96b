"""Training throughput (tokens/s) and model FLOPs utilisation of our loop on an mBERT-sized model.

A random-init BERT classifier with mBERT's configuration (or a smaller preset), random token
sequences of exactly `seq_len` tokens (no padding, so every token is real work), trained with
xlt.core.training.train (bf16 autocast and fused AdamW on CUDA, optionally torch.compile):

    tokens/s = timed steps * batch * seq_len / wall time (steps after `warmup`)
    MFU      = 6 * params * tokens/s / peak FLOP/s

6 * params is the usual forward+backward FLOPs per token (2 for the forward, 4 for the
backward). With all parameters, as asked, mBERT's 92M-row word-embedding matrix counts
although a lookup does no multiplications, which overstates the work; the table therefore
also gives the PaLM-paper count (6 * non-embedding params + 12 * layers * hidden * seq_len
for attention scores), the stricter figure.

The peak is a flag (`--peak-tflops`) or, on a GPU, looked up by device name in PEAK_TFLOPS
(dense bf16 tensor-core peaks from the vendors' datasheets); without either, MFU is n/a.

    python benchmarks/mfu.py [benchmarks/bench.py options]    (same as: benchmarks/bench.py --mfu ...)
"""

from __future__ import annotations

import argparse

from machine import load_average
from shapes import SHAPES

# Dense (no sparsity) BF16 tensor-core peak per GPU, TFLOP/s, from NVIDIA's datasheets.
PEAK_TFLOPS = {
    "A100": 312.0,  # A100 SXM4 and PCIe
    "H100-SXM": 989.4,  # H100 SXM5
    "H100-PCIE": 756.5,  # H100 PCIe
    "H200": 989.4,  # H200 SXM: H100's compute, more memory
}


def peak_for_device(name: str) -> tuple[float, str] | None:
    """(peak TFLOP/s, table key) for a CUDA device name such as 'NVIDIA H100 80GB HBM3'."""
    upper = name.upper()
    if "H200" in upper:
        return PEAK_TFLOPS["H200"], "H200"
    if "H100" in upper:
        key = "H100-PCIE" if "PCIE" in upper else "H100-SXM"
        return PEAK_TFLOPS[key], key
    if "A100" in upper:
        return PEAK_TFLOPS["A100"], "A100"
    return None


def flops_per_token(model, seq_len: int) -> dict:
    """Training FLOPs per token: 6 * all params (the issue's formula) and the PaLM count."""
    from xlt.core.models import encoder_parts

    total = sum(p.numel() for p in model.parameters())
    embedding = sum(p.numel() for p in encoder_parts(model).embeddings.parameters())
    config = model.config
    attention = 12 * config.num_hidden_layers * config.hidden_size * seq_len
    return {
        "params": total,
        "params_non_embedding": total - embedding,
        "six_n": 6 * total,
        "palm": 6 * (total - embedding) + attention,
    }


def measure(
    shape_name: str = "mbert",
    seq_len: int = 128,
    batch_size: int = 32,
    steps: int = 20,
    warmup: int = 5,
    device: str = "auto",
    precision: str = "auto",
    compile: bool = False,
    threads: int = 0,
    seed: int = 1,
    peak_tflops: float | None = None,
) -> dict:
    import torch
    from loop import Clock, pad_collate, random_token_examples
    from shapes import random_classifier

    from xlt.core.classification import classification_loss
    from xlt.core.models import pick_device
    from xlt.core.train_args import TrainArgs
    from xlt.core.train_inputs import LayerSchedule, Objective
    from xlt.core.training import train

    if threads:
        torch.set_num_threads(threads)
    if warmup >= steps:
        raise ValueError("warmup must be smaller than steps")
    torch_device = pick_device(device)
    shape = SHAPES[shape_name]
    model = random_classifier(shape, seed)
    flops = flops_per_token(model, seq_len)
    examples = random_token_examples(batch_size * steps, seq_len, shape.vocab, seed)
    clock = Clock(torch_device)

    def on_step(step, epoch):
        if step == warmup:
            clock.start()

    args = TrainArgs(
        max_steps=steps,
        batch_size=batch_size,
        lr=2e-5,
        max_length=seq_len,
        seed=seed,
        precision=precision,
        device=str(torch_device),
        log_every=10**9,
        compile=compile,
    )
    train(model, Objective(examples, pad_collate, classification_loss), args, layers=LayerSchedule(on_step=on_step))
    wall, _ = clock.stop()
    tokens_per_s = (steps - warmup) * batch_size * seq_len / wall

    peak_source = "--peak-tflops"
    if peak_tflops is None and torch_device.type == "cuda":
        found = peak_for_device(torch.cuda.get_device_name(torch_device))
        if found:
            peak_tflops, key = found
            peak_source = f"table: {key}"
    result = {
        "shape": shape_name,
        "model": shape.describe(),
        "seq_len": seq_len,
        "batch_size": batch_size,
        "device": str(torch_device),
        "device_name": torch.cuda.get_device_name(torch_device) if torch_device.type == "cuda" else "cpu",
        "precision": precision,
        "compile": compile,
        "timed_steps": steps - warmup,
        "wall_s": wall,
        "tokens_per_s": tokens_per_s,
        **flops,
        "model_tflops_6n": flops["six_n"] * tokens_per_s / 1e12,
        "model_tflops_palm": flops["palm"] * tokens_per_s / 1e12,
        "peak_tflops": peak_tflops,
        "peak_source": peak_source if peak_tflops else "none",
        "load": load_average(),
    }
    if peak_tflops:
        result["mfu_6n"] = result["model_tflops_6n"] / peak_tflops
        result["mfu_palm"] = result["model_tflops_palm"] / peak_tflops
    return result


def count(n: int) -> str:
    return f"{n / 1e6:.1f}M" if n >= 1e6 else f"{n / 1e3:.1f}k"


def table(result: dict) -> str:
    def pct(key):
        return f"{100 * result[key]:.2f}%" if key in result else "n/a"

    peak = f"{result['peak_tflops']:g} ({result['peak_source']})" if result["peak_tflops"] else "n/a (no --peak-tflops)"
    return "\n".join(
        [
            "| model | params (non-emb.) | device | precision | compile | batch x len | timed steps | tokens/s "
            "| model TFLOP/s 6N | MFU 6N | MFU PaLM | peak TFLOP/s | load |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
            f"| {result['shape']} {result['model']} "
            f"| {count(result['params'])} ({count(result['params_non_embedding'])}) "
            f"| {result['device_name']} | {result['precision']} | {result['compile']} "
            f"| {result['batch_size']} x {result['seq_len']} | {result['timed_steps']} | {result['tokens_per_s']:.0f} "
            f"| {result['model_tflops_6n']:.4g} | {pct('mfu_6n')} | {pct('mfu_palm')} | {peak} | {result['load']} |",
        ]
    )


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--mfu-shape",
        default="mbert",
        choices=sorted(SHAPES),
        help="model preset (mbert = bert-base-multilingual-cased's configuration)",
    )
    parser.add_argument("--mfu-seq-len", type=int, default=128)
    parser.add_argument("--mfu-batch-size", type=int, default=32)
    parser.add_argument("--mfu-steps", type=int, default=20)
    parser.add_argument("--mfu-warmup", type=int, default=5)
    parser.add_argument("--mfu-precision", default="auto", choices=["auto", "fp32", "bf16"])
    parser.add_argument("--mfu-compile", action="store_true", help="train through torch.compile")
    parser.add_argument(
        "--peak-tflops",
        type=float,
        default=None,
        help=f"peak FLOP/s of the device in TFLOP/s; on a GPU default from {sorted(PEAK_TFLOPS)}",
    )


def run(args: argparse.Namespace, echo=print) -> dict:
    result = measure(
        args.mfu_shape,
        args.mfu_seq_len,
        args.mfu_batch_size,
        args.mfu_steps,
        args.mfu_warmup,
        args.device,
        args.mfu_precision,
        args.mfu_compile,
        args.threads,
        args.seed,
        args.peak_tflops,
    )
    echo(table(result))
    return result


if __name__ == "__main__":
    import sys

    from bench import main

    sys.exit(main(["--mfu", *sys.argv[1:]]))
