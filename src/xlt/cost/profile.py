"""Throughput profiles: how many FLOP/s a machine delivers for training and for inference.

`xlt calibrate` measures one on this machine and saves it (DEFAULT_PROFILE); without a saved
profile `xlt plan --gpu NAME` reads KNOWN, whose figures are datasheet peaks times an assumed
utilisation (each entry says so in its `source`).
"""
from __future__ import annotations

import json
import os
import time
from pathlib import Path

from xlt.core.errors import XltError

DEFAULT_PROFILE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "xlt" / "throughput.json"

# train/eval: effective FLOP/s; memory_gib: accelerator memory; overhead_s: start-up of one job
KNOWN = {
    "h100": {"train_flops": 0.2 * 989e12, "eval_flops": 0.3 * 989e12, "memory_gib": 80, "overhead_s": 30,
             "gpu": True, "source": "NVIDIA H100 SXM datasheet, 989 TFLOP/s dense bf16; 20 % (train, batch 32 x 128 tokens) / 30 % (eval) utilisation assumed"},
    "a100": {"train_flops": 0.2 * 312e12, "eval_flops": 0.3 * 312e12, "memory_gib": 80, "overhead_s": 30,
             "gpu": True, "source": "NVIDIA A100 datasheet, 312 TFLOP/s dense bf16; 20 % / 30 % utilisation assumed"},
    "v100": {"train_flops": 0.2 * 125e12, "eval_flops": 0.3 * 125e12, "memory_gib": 32, "overhead_s": 30,
             "gpu": True, "source": "NVIDIA V100 datasheet, 125 TFLOP/s fp16 tensor cores; 20 % / 30 % utilisation assumed"},
    "cpu": {"train_flops": 2e10, "eval_flops": 3e10, "memory_gib": 16, "overhead_s": 6,
            "gpu": False, "source": "one x86 core with AVX2, fp32, measured order of magnitude; run `xlt calibrate` for this machine"},
}


def load(gpu: str | None = None, path: str | Path | None = None) -> dict:
    """The profile to plan with: --gpu NAME from KNOWN, else a saved calibration, else KNOWN['cpu']."""
    if gpu is not None:
        if gpu not in KNOWN:
            raise XltError(f"--gpu {gpu!r} is not a known accelerator; use one of {', '.join(KNOWN)} "
                           f"or run `xlt calibrate` on the machine and plan with --profile")
        return {"name": gpu, **KNOWN[gpu]}
    path = Path(path) if path is not None else DEFAULT_PROFILE
    if path.is_file():
        profile = json.loads(path.read_text())
        missing = {"train_flops", "eval_flops", "overhead_s"} - set(profile)
        if missing:
            raise XltError(f"{path} lacks {sorted(missing)}; rerun `xlt calibrate --out {path}`")
        return profile
    return {"name": "cpu", **KNOWN["cpu"], "source": KNOWN["cpu"]["source"] + f" (no calibration at {path})"}


def _startup_seconds() -> float:
    """What every job pays before its first batch: a fresh interpreter importing torch and transformers."""
    import subprocess
    import sys

    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", "import torch, transformers.models.bert.modeling_bert"], check=True)
    return time.perf_counter() - started


def calibrate(seq_lengths=(32, 64, 128), hidden_size: int = 256, layers: int = 4, batch_size: int = 16,
              budget_s: float = 30.0, device: str = "auto") -> dict:
    """Time forward and forward+backward of a small BERT at a few sequence lengths; FLOP/s from
    2 x params x tokens (forward) and 6 x params x tokens (forward+backward)."""
    import torch
    from transformers import BertConfig, BertModel

    if device == "auto":
        device = "cuda" if torch.cuda.is_available() else "cpu"
    torch.manual_seed(0)
    model = BertModel(BertConfig(vocab_size=1000, hidden_size=hidden_size, num_hidden_layers=layers,
                                 num_attention_heads=max(1, hidden_size // 64), intermediate_size=4 * hidden_size,
                                 max_position_embeddings=max(seq_lengths))).to(device)
    params = sum(p.numel() for name, p in model.named_parameters() if "embeddings" not in name)
    per_length = budget_s / (2 * len(seq_lengths))
    rows = []
    for seq in seq_lengths:
        ids = torch.randint(0, 1000, (batch_size, seq), device=device)
        row = {"seq_length": seq}
        for mode in ("forward", "train"):
            model.train(mode == "train")
            tokens, started, steps = 0, time.perf_counter(), 0
            while steps < 2 or time.perf_counter() - started < per_length:
                if mode == "train":
                    model(ids).last_hidden_state.float().pow(2).mean().backward()
                else:
                    with torch.no_grad():
                        model(ids)
                if device == "cuda":
                    torch.cuda.synchronize()
                tokens += ids.numel()
                steps += 1
                if steps == 1:  # the first step warms kernels and allocators up: not timed
                    tokens, started = 0, time.perf_counter()
            seconds = time.perf_counter() - started
            row[f"{mode}_tokens_per_s"] = tokens / seconds
        rows.append(row)
    train = sum(6 * params * r["train_tokens_per_s"] for r in rows) / len(rows)
    forward = sum(2 * params * r["forward_tokens_per_s"] for r in rows) / len(rows)
    return {"name": f"calibrated-{device}", "gpu": device != "cpu", "train_flops": train, "eval_flops": forward,
            "overhead_s": _startup_seconds(), "threads": torch.get_num_threads(),
            "memory_gib": (torch.cuda.get_device_properties(0).total_memory / 2**30 if device == "cuda" else None),
            "measured": rows, "probe": {"hidden_size": hidden_size, "layers": layers, "batch_size": batch_size,
                                        "non_embedding_params": params},
            "source": f"xlt calibrate on this machine ({device}, {torch.get_num_threads()} threads), {time.strftime('%Y-%m-%d')}"}
