"""`xlt calibrate`: this machine's throughput profile (xlt.cost.profile), measured: FLOP rates of a
small BERT's forward and training step, the per-step and per-batch overheads of xlt's own training
loop, and a job's start-up."""

from __future__ import annotations

import os
import subprocess
import sys
import time

from xlt.core.io import write_json
from xlt.core.train_args import TrainArgs
from xlt.core.train_inputs import LayerSchedule, Objective
from xlt.cost import formulas
from xlt.cost.profile import OVERHEADS
from xlt.data import demo
from xlt.data.demo_model import build_tokenizer


def _startup_seconds(threads: int | None = None) -> float:
    """What every job pays before its first batch: a fresh interpreter importing torch, transformers'
    BERT and xlt's model loading and training code (every model-running `xlt` verb imports them)."""
    env = {**os.environ, "OMP_NUM_THREADS": str(threads)} if threads else None
    started = time.perf_counter()
    subprocess.run(
        [
            sys.executable,
            "-c",
            "import torch, transformers.models.bert.modeling_bert, xlt.core.models, xlt.core.training",
        ],
        check=True,
        env=env,
    )
    return time.perf_counter() - started


def least_squares(rows: list[list[float]], values: list[float]) -> list[float]:
    """Coefficients of values ~ rows (one column per coefficient), each clamped at 0: an overhead
    cannot be negative, and on a busy machine a noisy slope can come out below 0."""
    import numpy as np  # deferred: numpy: only where arrays are made

    solution = np.linalg.lstsq(np.asarray(rows, dtype=float), np.asarray(values, dtype=float), rcond=None)[0]
    return [max(float(c), 0.0) for c in solution]


def loop_overheads(
    train_flops: float,
    eval_flops: float,
    device: str = "cpu",
    hidden_size: int = 16,
    layers: tuple[int, int] = (1, 8),
    batch_sizes: tuple[int, int] = (8, 32),
    steps: int = 16,
    eval_batches: int = 8,
    max_length: int = 48,
) -> dict:
    """What a training step and an evaluation batch cost besides their FLOPs, on a BERT classifier
    so narrow (`hidden_size`) that its FLOPs hardly count: xlt's own training loop
    (xlt.core.training.train: AdamW, clipping, schedule) over demo NLI pairs tokenised in the
    collate as the classifier's fine-tuning does, at two depths and two batch sizes; evaluation batches of 64
    in eval mode without gradients at the two depths. Each timing less its FLOP time (at the
    measured rates, over the batches' padded tokens) is fitted to step_s + step_layer_s x layers
    + step_example_layer_s x examples x layers, and eval_batch_s + eval_batch_layer_s x layers."""
    import torch  # deferred: imports torch
    from transformers import BertConfig, BertForSequenceClassification  # deferred: imports torch

    from xlt.core.classification import classification_loss, make_collate  # deferred: imports torch
    from xlt.core.training import train  # deferred: imports torch

    records = demo.generate("nli", "en", "train", 64 * eval_batches, 1)
    tokenizer = build_tokenizer([r["text"] for r in records[:200]], 120)
    collate = make_collate(tokenizer, max_length)
    train_rows, train_values, eval_rows, eval_values, measured = [], [], [], [], []
    for depth in layers:
        torch.manual_seed(0)
        model = BertForSequenceClassification(
            BertConfig(
                vocab_size=len(tokenizer),
                hidden_size=hidden_size,
                num_hidden_layers=depth,
                num_attention_heads=1,
                intermediate_size=4 * hidden_size,
                max_position_embeddings=max_length + 2,
                num_labels=3,
            )
        )
        params = formulas.encoder_params(hidden_size, depth)
        for batch_size in batch_sizes:
            marks, tokens = [], []

            def counted(examples, tokens=tokens):
                batch = collate(examples)
                tokens.append(batch["input_ids"].numel())
                return batch

            def on_step(step, epoch, marks=marks):
                marks.append(time.perf_counter())

            train(
                model,
                Objective(records, counted, classification_loss),
                TrainArgs(
                    max_steps=steps,
                    batch_size=batch_size,
                    lr=1e-3,
                    max_length=max_length,
                    device=device,
                    precision="fp32",
                    log_every=10**9,
                ),
                layers=LayerSchedule(on_step=on_step),  # (no schedule: the hook times each step's start)
            )
            warm = 2  # the first steps allocate and warm kernels up: not timed
            per_step = (marks[-1] - marks[warm]) / (len(marks) - 1 - warm)
            flop_s = (
                formulas.training_flops(params, params, sum(tokens[warm:-1])) / (len(tokens) - 1 - warm) / train_flops
            )
            train_rows.append([1.0, depth, batch_size * depth])
            train_values.append(per_step - flop_s)
            measured.append(
                {
                    "mode": "train",
                    "layers": depth,
                    "batch_size": batch_size,
                    "seconds_per_step": per_step,
                    "flop_seconds": flop_s,
                }
            )
        model.eval()
        device_model = model.to(device)
        batches = [records[i : i + 64] for i in range(0, len(records), 64)]
        with torch.no_grad():
            for i, chunk in enumerate(batches):
                if i == 1:  # the first batch warms up: not timed
                    started, tokens = time.perf_counter(), 0
                batch = {k: v.to(device) for k, v in collate(chunk).items()}
                device_model(**batch).logits.float().cpu()
                if i >= 1:
                    tokens += batch["input_ids"].numel()
        per_batch = (time.perf_counter() - started) / (len(batches) - 1)
        flop_s = formulas.forward_flops(params, tokens) / (len(batches) - 1) / eval_flops
        eval_rows.append([1.0, depth])
        eval_values.append(per_batch - flop_s)
        measured.append(
            {"mode": "eval", "layers": depth, "batch_size": 64, "seconds_per_batch": per_batch, "flop_seconds": flop_s}
        )
    step_s, step_layer_s, step_example_layer_s = least_squares(train_rows, train_values)
    eval_batch_s, eval_batch_layer_s = least_squares(eval_rows, eval_values)
    return {
        "step_s": step_s,
        "step_layer_s": step_layer_s,
        "step_example_layer_s": step_example_layer_s,
        "eval_batch_s": eval_batch_s,
        "eval_batch_layer_s": eval_batch_layer_s,
        "measured": measured,
        "probe": {
            "hidden_size": hidden_size,
            "layers": list(layers),
            "batch_sizes": list(batch_sizes),
            "steps": steps,
            "max_length": max_length,
        },
    }


def calibrate(
    seq_lengths=(32, 64, 128),
    hidden_size: int = 256,
    layers: int = 4,
    batch_size: int = 16,
    budget_s: float = 30.0,
    device: str = "auto",
    threads: int | None = None,
    loop_steps: int = 16,
) -> dict:
    """Time forward and forward+backward of a small BERT at a few sequence lengths; FLOP/s from
    2 x params x tokens (forward) and 6 x params x tokens (forward+backward). Then the per-step
    and per-batch overheads (loop_overheads, `loop_steps` steps a setting) and a job's start-up.
    `threads`: torch's CPU threads (the workflow's jobs use their rule's `threads:`)."""
    import torch  # deferred: imports torch
    from transformers import BertConfig, BertModel  # deferred: imports torch

    if threads:
        torch.set_num_threads(threads)
    if device == "auto":
        device = "cuda" if torch.cuda.is_available() else "cpu"
    torch.manual_seed(0)
    model = BertModel(
        BertConfig(
            vocab_size=1000,
            hidden_size=hidden_size,
            num_hidden_layers=layers,
            num_attention_heads=max(1, hidden_size // 64),
            intermediate_size=4 * hidden_size,
            max_position_embeddings=max(seq_lengths),
        )
    ).to(device)
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
    train = sum(formulas.training_flops(params, params, r["train_tokens_per_s"]) for r in rows) / len(rows)
    forward = sum(formulas.forward_flops(params, r["forward_tokens_per_s"]) for r in rows) / len(rows)
    loop = loop_overheads(train, forward, device=device, steps=loop_steps)
    return {
        "name": f"calibrated-{device}",
        "gpu": device != "cpu",
        "train_flops": train,
        "eval_flops": forward,
        "overhead_s": _startup_seconds(threads),
        "threads": torch.get_num_threads(),
        **{key: loop[key] for key in OVERHEADS[1:]},
        "loop_measured": loop["measured"],
        "loop_probe": loop["probe"],
        "memory_gib": (torch.cuda.get_device_properties(0).total_memory / 2**30 if device == "cuda" else None),
        "measured": rows,
        "probe": {
            "hidden_size": hidden_size,
            "layers": layers,
            "batch_size": batch_size,
            "non_embedding_params": params,
        },
        "source": f"measured: xlt calibrate on this machine ({device}, {torch.get_num_threads()} threads), "
        f"{time.strftime('%Y-%m-%d')}",
    }


def main(args):
    """`xlt calibrate` (declared in xlt.cost.commands): measure, save the profile, print its rates."""
    result = calibrate(budget_s=args.seconds, device=args.device, threads=args.threads)
    write_json(args.out, result)
    print(
        f"saved {args.out}: train {result['train_flops']:.3g} FLOP/s, forward {result['eval_flops']:.3g} FLOP/s, "
        f"job start-up {result['overhead_s']:.1f} s; besides FLOPs a training step costs "
        f"{result['step_s'] * 1e3:.1f} ms + {result['step_layer_s'] * 1e3:.2f} ms a layer + "
        f"{result['step_example_layer_s'] * 1e3:.3f} ms an example a layer, an evaluation batch "
        f"{result['eval_batch_s'] * 1e3:.1f} ms + "
        f"{result['eval_batch_layer_s'] * 1e3:.2f} ms a layer ({result['threads']} threads)"
    )
