"""A toy version of xlt's training loop with resumable checkpoints, run as a subprocess by
tests/core/test_checkpoint.py (kill -9, SIGTERM) and as a SLURM job by tests/slurm/test_slurm.py.

Same ingredients as the real loop: AdamW with decay/no-decay groups, LambdaLR linear
warm-up and decay, gradient accumulation and clipping, a per-epoch permutation seeded by
(seed, epoch), evaluation every K steps with best-parameter selection; plus dropout and
NumPy/Python noise so that every random number generator the checkpoint restores matters.

    python tests/helpers/toy_training.py OUT_DIR --checkpoint-dir DIR [--checkpoint-every N]
        [--sleep S]

writes OUT_DIR/params.pt (final parameters) and OUT_DIR/metrics.json.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "src"))
from xlt.core.checkpoint import GracefulStop, load_checkpoint, remove_checkpoint, restore, save_checkpoint  # noqa: E402

N_EXAMPLES, DIM, BATCH, GRAD_ACCUM = 50, 8, 8, 2


def epoch_order(n: int, seed: int, epoch: int) -> list[int]:
    g = torch.Generator().manual_seed(seed * 1_000_003 + epoch)
    return torch.randperm(n, generator=g).tolist()


def linear_schedule(optimizer, warmup: int, total: int):
    def factor(step: int) -> float:
        if step < warmup:
            return (step + 1) / max(1, warmup)
        return max(0.0, (total - step) / max(1, total - warmup))

    return torch.optim.lr_scheduler.LambdaLR(optimizer, factor)


def make_data(seed: int = 1234) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(N_EXAMPLES, DIM, generator=g)
    y = (x @ torch.randn(DIM, 1, generator=g)).squeeze(1) + 0.1 * torch.randn(N_EXAMPLES, generator=g)
    return x, y


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser()
    p.add_argument("out_dir", type=Path)
    p.add_argument("--checkpoint-dir", type=Path, required=True)
    p.add_argument("--checkpoint-every", type=int, default=0)
    p.add_argument("--steps", type=int, default=30)
    p.add_argument("--eval-every", type=int, default=4)
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--sleep", type=float, default=0.0, help="seconds per step, to leave time for signals")
    args = p.parse_args(argv)

    torch.set_num_threads(1)
    x, y = make_data()
    x_dev, y_dev = x[:10] + 0.05, y[:10]
    random.seed(args.seed)
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)
    model = torch.nn.Sequential(
        torch.nn.Linear(DIM, 16), torch.nn.GELU(), torch.nn.Dropout(0.2), torch.nn.Linear(16, 1)
    )
    decay = [p for p in model.parameters() if p.ndim >= 2]
    no_decay = [p for p in model.parameters() if p.ndim < 2]
    optimizer = torch.optim.AdamW(
        [{"params": decay, "weight_decay": 0.01}, {"params": no_decay, "weight_decay": 0.0}], lr=3e-2
    )
    scheduler = linear_schedule(optimizer, warmup=3, total=args.steps)

    step, epoch, position = 0, 0, 0
    history: list[dict] = []
    best_score, best_step, best_params = None, 0, None
    state = load_checkpoint(args.checkpoint_dir)
    if state is not None:
        restore(state, model, optimizer, scheduler)
        step, epoch, position = state["step"], state["epoch"], state["position"]
        assert state["order_seed"] == args.seed
        extra = state["extra"]
        history, best_score, best_step, best_params = (
            extra["history"],
            extra["best_score"],
            extra["best_step"],
            extra["best_params"],
        )
        print(f"resumed at step {step}", file=sys.stderr, flush=True)

    with GracefulStop() as stop:
        print("training", file=sys.stderr, flush=True)  # signal handlers are in place
        model.train()
        while step < args.steps:
            total_loss = 0.0
            for _ in range(GRAD_ACCUM):
                order = epoch_order(N_EXAMPLES, args.seed, epoch)
                idx = order[position : position + BATCH]
                position += len(idx)
                if position >= N_EXAMPLES:
                    epoch, position = epoch + 1, 0
                # noise from NumPy and Python's random: their states must survive a restart too
                noise = torch.from_numpy(np.random.normal(0, 0.01, size=(len(idx), DIM)).astype(np.float32))
                scale = 1.0 + 0.01 * random.random()
                pred = model(x[idx] * scale + noise).squeeze(1)
                loss = torch.nn.functional.mse_loss(pred, y[idx])
                (loss / GRAD_ACCUM).backward()
                total_loss += loss.item()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            scheduler.step()
            optimizer.zero_grad(set_to_none=True)
            step += 1
            if step % args.eval_every == 0 or step == args.steps:
                model.eval()
                with torch.no_grad():
                    score = -torch.nn.functional.mse_loss(model(x_dev).squeeze(1), y_dev).item()
                model.train()
                history.append({"step": step, "loss": total_loss / GRAD_ACCUM, "score": score})
                if best_score is None or score > best_score:
                    best_score, best_step = score, step
                    best_params = {k: v.detach().clone() for k, v in model.state_dict().items()}
            if args.sleep:
                time.sleep(args.sleep)
            if (args.checkpoint_every and step % args.checkpoint_every == 0) or stop.requested:
                save_checkpoint(
                    args.checkpoint_dir,
                    step,
                    model,
                    optimizer,
                    scheduler,
                    extra={
                        "history": history,
                        "best_score": best_score,
                        "best_step": best_step,
                        "best_params": best_params,
                    },
                    epoch=epoch,
                    position=position,
                    order_seed=args.seed,
                )
                print(f"checkpoint at step {step}", file=sys.stderr, flush=True)
                if stop.requested:
                    print(f"stopping at step {step} on signal {stop.signal}", file=sys.stderr, flush=True)
                    stop.exit()

    if best_params is not None:
        model.load_state_dict(best_params)
    args.out_dir.mkdir(parents=True, exist_ok=True)
    torch.save(model.state_dict(), args.out_dir / "params.pt")
    (args.out_dir / "metrics.json").write_text(
        json.dumps(
            {"history": history, "best_step": best_step, "best_score": best_score, "epoch": epoch, "position": position}
        )
    )
    remove_checkpoint(args.checkpoint_dir)
    return 0


if __name__ == "__main__":
    sys.exit(main())
