"""Benchmark sparse prediction: adapt's MLM training step and perplexity batch with the vocabulary
head at every position (the full logits, as before) and at the masked positions only
(xlt.families.adapt.masked_head).

Random-init BertForMaskedLM at mBERT's vocabulary (119,547 word pieces) with a smaller encoder by
default (hidden 256, 2 layers: quick on a CPU; --mbert for the real 768 x 12 shape, a GPU's work),
random full-length sequences masked BERT-style (xlt.families.adapt.mlm.mask_tokens). For each path
it reports the median time of --steps timed training steps (forward, backward, AdamW step) and of
--steps perplexity batches, the FLOPs torch counts for one of each (torch.utils.flop_counter: the
matrix products, forward and backward), the logits each holds, and the two paths' losses (equal
but for rounding).

    PYTHONPATH=src python benchmarks/sparse_mlm_head.py
    # on a shared, oversubscribed CPU: CPU time of one thread instead of wall time
    PYTHONPATH=src python benchmarks/sparse_mlm_head.py --threads 1 --clock process
"""

from __future__ import annotations

import argparse
import statistics
import time
from functools import partial

import torch
import torch.nn.functional as F
from machine import load_average
from torch.utils.flop_counter import FlopCounterMode

from xlt.families.adapt.mlm import IGNORE_INDEX, TokenizerInfo, mask_tokens, perplexity
from xlt.families.adapt.mlm_objective import mlm_loss

CLOCKS = {"wall": time.perf_counter, "process": time.process_time}


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="benchmarks/sparse_mlm_head.py", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--mbert", action="store_true", help="mBERT's encoder too: hidden 768, 12 layers, 12 heads")
    parser.add_argument("--hidden", type=int, default=256)
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--heads", type=int, default=4)
    parser.add_argument("--vocab", type=int, default=119547)
    parser.add_argument("--seq-len", type=int, default=128)
    parser.add_argument("--batch-size", type=int, default=8, help="training batch (seed 003: 8)")
    parser.add_argument("--eval-batch-size", type=int, default=32, help="perplexity batch (the paper config: 128)")
    parser.add_argument("--mlm-probability", type=float, default=0.15)
    parser.add_argument("--steps", type=int, default=3, help="timed steps (and evaluation batches) per path")
    parser.add_argument("--warmup", type=int, default=1)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--clock",
        choices=["wall", "process"],
        default="wall",
        help="process = CPU time of this process (use with --threads 1 on a shared CPU); wall for GPUs",
    )
    args = parser.parse_args(argv)
    if args.clock == "process" and args.device != "cpu":
        parser.error("--clock process measures CPU time; use --clock wall on a GPU")
    if args.mbert:
        args.hidden, args.layers, args.heads = 768, 12, 12
    return args


def full_mlm_loss(model, batch: dict) -> torch.Tensor:
    """The loss as adapt computed it before sparse prediction: the head at every position."""
    logits = model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"]).logits
    labels = batch["labels"]
    loss_sum = F.cross_entropy(
        logits.reshape(-1, logits.shape[-1]).float(), labels.reshape(-1), ignore_index=IGNORE_INDEX, reduction="sum"
    )
    return loss_sum / max(1, int((labels != IGNORE_INDEX).sum()))


@torch.no_grad()
def full_perplexity_loss(model, batch: dict) -> float:
    """A perplexity batch's summed loss as `perplexity` computed it before: full logits, then the masked rows."""
    logits = model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"]).logits
    selected = batch["labels"] != IGNORE_INDEX
    return float(F.cross_entropy(logits[selected].float(), batch["labels"][selected], reduction="sum"))


def sparse_perplexity_loss(model, batch: dict) -> float:
    result = perplexity(model, [batch], next(model.parameters()).device)
    return result.loss * result.tokens


def masked_batch(rows: int, args, generator: torch.Generator, device) -> dict:
    info = TokenizerInfo(mask_token_id=4, pad_token_id=0, vocab_size=args.vocab, special_ids=(0, 1, 2, 3, 4))
    ids = torch.randint(5, args.vocab, (rows, args.seq_len), generator=generator)
    special = torch.zeros_like(ids)
    ids[:, 0], ids[:, -1], special[:, 0], special[:, -1] = 2, 3, 1, 1  # [CLS] ... [SEP]
    masked, labels = mask_tokens(ids, special, info, generator, args.mlm_probability)
    return {
        "input_ids": masked.to(device),
        "attention_mask": torch.ones_like(ids).to(device),
        "labels": labels.to(device),
    }


def build_model(args, device):
    from transformers import BertConfig, BertForMaskedLM

    torch.manual_seed(args.seed)
    config = BertConfig(
        vocab_size=args.vocab,
        hidden_size=args.hidden,
        num_hidden_layers=args.layers,
        num_attention_heads=args.heads,
        intermediate_size=4 * args.hidden,
        max_position_embeddings=max(512, args.seq_len),
    )
    return BertForMaskedLM(config).to(device)


def sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize()


def counted_flops(fn) -> int:
    with FlopCounterMode(display=False) as counter:
        fn()
    return int(counter.get_total_flops())


def measure(args) -> dict:
    """Per path: median seconds and counted FLOPs of a training step and of a perplexity batch,
    the logits each holds, and its losses."""
    torch.set_num_threads(args.threads)
    device = torch.device(args.device)
    model = build_model(args, device)
    model.train()
    optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-5)
    generator = torch.Generator().manual_seed(args.seed)
    train_batches = [masked_batch(args.batch_size, args, generator, device) for _ in range(args.warmup + args.steps)]
    eval_batch = masked_batch(args.eval_batch_size, args, generator, device)
    clock = CLOCKS[args.clock]
    paths = {"full": (full_mlm_loss, full_perplexity_loss), "sparse": (mlm_loss, sparse_perplexity_loss)}
    state = {k: v.detach().clone() for k, v in model.state_dict().items()}
    out = {}

    def train_step(loss_fn, batch):
        optimizer.zero_grad(set_to_none=True)
        loss = loss_fn(model, batch)
        loss.backward()
        optimizer.step()
        return float(loss.detach())

    def one_backward(loss_fn):
        loss_fn(model, train_batches[0]).backward()

    for name, (loss_fn, eval_fn) in paths.items():
        model.load_state_dict(state)  # both paths step from the same weights
        times, eval_times = [], []
        losses = []
        torch.manual_seed(args.seed)  # the same dropout draws on both paths
        for i, batch in enumerate(train_batches):
            sync(device)
            start = clock()
            losses.append(train_step(loss_fn, batch))
            sync(device)
            if i >= args.warmup:
                times.append(clock() - start)
        model.load_state_dict(state)
        model.eval()  # perplexity's mode (it switches to it itself; the full path is put there)
        for i in range(args.warmup + args.steps):
            sync(device)
            start = clock()
            eval_loss = eval_fn(model, eval_batch)
            sync(device)
            if i >= args.warmup:
                eval_times.append(clock() - start)
        model.train()
        train_flops = counted_flops(partial(one_backward, loss_fn))
        model.zero_grad(set_to_none=True)
        model.eval()
        eval_flops = counted_flops(partial(eval_fn, model, eval_batch))
        model.train()
        masked = int((train_batches[0]["labels"] != IGNORE_INDEX).sum())
        eval_masked = int((eval_batch["labels"] != IGNORE_INDEX).sum())
        out[name] = {
            "train_s": statistics.median(times),
            "eval_s": statistics.median(eval_times),
            "train_flops": train_flops,
            "eval_flops": eval_flops,
            "train_logits": (args.batch_size * args.seq_len if name == "full" else masked) * args.vocab,
            "eval_logits": (args.eval_batch_size * args.seq_len if name == "full" else eval_masked) * args.vocab,
            "first_loss": losses[0],
            "eval_loss": eval_loss,
        }
    out["masked_share"] = {
        "train": masked / (args.batch_size * args.seq_len),
        "eval": eval_masked / (args.eval_batch_size * args.seq_len),
    }
    return out


def table(result: dict) -> str:
    full, sparse = result["full"], result["sparse"]
    rows = [
        ("training step, s", "train_s", "{:.3f}"),
        ("training step, GFLOP", "train_flops", "{:.1f}"),
        ("training logits, M values", "train_logits", "{:.1f}"),
        ("perplexity batch, s", "eval_s", "{:.3f}"),
        ("perplexity batch, GFLOP", "eval_flops", "{:.1f}"),
        ("perplexity logits, M values", "eval_logits", "{:.1f}"),
    ]
    scale = {"train_flops": 1e-9, "eval_flops": 1e-9, "train_logits": 1e-6, "eval_logits": 1e-6}
    lines = ["| | full logits | masked rows only | sparse / full |", "|---|---|---|---|"]
    for label, key, fmt in rows:
        f, s = full[key] * scale.get(key, 1), sparse[key] * scale.get(key, 1)
        lines.append(f"| {label} | {fmt.format(f)} | {fmt.format(s)} | {s / f:.2f} |")
    lines.append(f"| first training loss | {full['first_loss']:.6f} | {sparse['first_loss']:.6f} | |")
    lines.append(f"| perplexity batch's summed loss | {full['eval_loss']:.4f} | {sparse['eval_loss']:.4f} | |")
    return "\n".join(lines)


def main(argv: list[str] | None = None, echo=print) -> dict:
    args = parse_args(argv)
    echo(
        f"BertForMaskedLM L{args.layers} H{args.hidden} A{args.heads} V{args.vocab}; train batch "
        f"{args.batch_size} x {args.seq_len}, perplexity batch {args.eval_batch_size} x {args.seq_len}, "
        f"mlm_probability {args.mlm_probability}; device={args.device} threads={args.threads} clock={args.clock} "
        f"steps={args.steps} (+{args.warmup} warm-up); load {load_average()}"
    )
    result = measure(args)
    share = result["masked_share"]
    echo(f"masked share of positions: training batch {share['train']:.3f}, perplexity batch {share['eval']:.3f}")
    echo(table(result))
    return result


if __name__ == "__main__":
    main()
