"""Training steps as CUDA graphs (the `graphs` training setting), so a step costs the GPU's time
and not the host's.

On an H200 at mBERT's shape an eager step at batch 8 took as long as one at batch 32 (40-47 ms;
BENCHMARKS.md, "GPU check on an H200"): the host (Python, kernel launches) bounds it, while the
GPU's own work is 9.3 ms. A CUDA graph replays a step's kernels with one launch. Padding to a
multiple of 8 on CUDA (xlt.core.padding) leaves at most max_length / 8 sequence lengths, so one
graph per batch shape is a handful of graphs.

- `none`: eager (or `compile: true`'s inductor with dynamic shapes), the default.
- `compile`: torch.compile(mode="reduce-overhead", dynamic=True): inductor compiles once with
  symbolic shapes and CUDA graph trees record its kernels once per concrete shape
  (xlt.core.train_step.compile_options says why not static shapes); the optimiser step stays eager
  (fused AdamW: a few launches).
- `capture`: the whole eager step (zeroing the gradients, forward, backward, clipping and a
  capturable fused AdamW step) captured with torch.cuda.graph, one graph per batch shape
  (StepGraphs). A batch's tensors are copied into the graph's static inputs; the learning rate is a
  device tensor the scheduler fills, so no step reads anything back to the host.

Both need CUDA; `check` refuses them elsewhere before the model is loaded.
"""

from __future__ import annotations

import logging
import weakref
from typing import Callable

import torch

from xlt.core.errors import XltError
from xlt.core.train_args import GRAPH_MODES

log = logging.getLogger(__name__)

# eager warm-up steps on a side stream before a capture (cuBLAS workspaces, the optimiser's state):
# the PyTorch documentation's whole-network example uses 3; they are undone (StepGraphs._undo)
WARMUP_STEPS = 3
# shapes a run captures at most; further shapes run eagerly. Classification batches have at most
# max_length / 8 (16 at 128 tokens) shapes at the full batch size; a pair of inputs (sbert's two
# sentences) can have up to that squared, which the cap bounds in memory and capture time
MAX_GRAPHS = 48


def check(graphs: str, compile_: bool, device: torch.device, grad_accum: int, amp_dtype) -> None:
    """A `graphs` setting that cannot run here is a one-line error before any training work."""
    if graphs not in GRAPH_MODES:
        raise XltError(f"training setting graphs: {graphs!r}; choose one of {', '.join(GRAPH_MODES)}")
    if graphs == "none":
        return
    if device.type != "cuda":
        raise XltError(
            f"graphs: {graphs} records CUDA graphs and this run is on {device.type}; set graphs: none "
            "(or --graphs none) off CUDA"
        )
    if graphs == "capture" and compile_:
        raise XltError(
            "graphs: capture captures the eager step and compile: true compiles it; set compile: false, "
            "or graphs: compile for compiled kernels in CUDA graphs"
        )
    if graphs == "capture" and grad_accum != 1:
        raise XltError(f"graphs: capture runs a batch as one micro-batch; set grad_accum: 1 (now {grad_accum})")
    if amp_dtype is torch.float16:
        raise XltError(
            f"graphs: {graphs} cannot run fp16's gradient scaler (it reads the gradients' finiteness on the "
            "host every step); set precision: bf16 or fp32"
        )


def batch_key(batch: dict) -> tuple:
    """What one graph serves: the batch's tensors' names, shapes and dtypes, and its other values."""
    return tuple((k, tuple(v.shape), v.dtype) if torch.is_tensor(v) else (k, repr(v)) for k, v in sorted(batch.items()))


def graph_step(
    model: torch.nn.Module,
    params: list,
    optimizer: torch.optim.Optimizer,
    loss_fn: Callable,
    batch: dict,
    amp_dtype,
    max_grad_norm: float,
) -> torch.Tensor:
    """One whole training step in a form a CUDA graph can record: the gradients zeroed in place
    (they keep their memory, which the graph reads), forward, backward, clipping, the optimiser."""
    for p in params:
        if p.grad is not None:
            p.grad.zero_()
    device = params[0].device
    # autocast's cast cache would free the captured casts at the context's exit (torch.cuda.graphs)
    with torch.autocast(
        device.type, dtype=amp_dtype or torch.bfloat16, enabled=amp_dtype is not None, cache_enabled=False
    ):
        loss = loss_fn(model, batch)
    loss.backward()
    if max_grad_norm > 0:
        torch.nn.utils.clip_grad_norm_(params, max_grad_norm)
    optimizer.step()
    return loss.detach()


class CudaGraph:
    """torch.cuda.graph's recording of `step(inputs)`, replayed on the same input buffers; graphs of
    one run share a memory pool (only one runs at a time)."""

    pool = None

    def __init__(self, step: Callable[[dict], torch.Tensor], inputs: dict):
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):  # warm-up off the capture's stream, as torch.cuda.graph asks
            for _ in range(WARMUP_STEPS):
                step(inputs)
        torch.cuda.current_stream().wait_stream(side)
        self.graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(self.graph, pool=CudaGraph.pool):
            self.output = step(inputs)
        CudaGraph.pool = self.graph.pool()

    def replay(self) -> torch.Tensor:
        self.graph.replay()
        return self.output


class StepGraphs:
    """The `capture` mode's steps: one recorded graph per batch shape (batch_key) at the full batch
    size, its static inputs reused by every batch of that shape; the epoch's short last batch, and
    shapes past MAX_GRAPHS, run the same step eagerly. A capture's warm-up steps train: their effect
    on the parameters, the optimiser's state and the random generator is undone (`_undo`), so a
    captured run takes the steps an eager run takes. `recorder` makes a graph of (step, inputs):
    CudaGraph on CUDA; a test passes one that replays eagerly."""

    def __init__(self, model, params, optimizer, loss_fn, amp_dtype, args, recorder=CudaGraph):
        self.model, self.params, self.optimizer = model, params, optimizer
        self.batch_size, self.limit = args.batch_size, MAX_GRAPHS
        self.recorder = recorder
        self.graphs: dict[tuple, tuple[dict, object]] = {}  # batch_key -> (static inputs, graph)
        self.eager_steps = 0
        self._tensor_lr = False

        def step(batch: dict) -> torch.Tensor:
            return graph_step(model, params, optimizer, loss_fn, batch, amp_dtype, args.max_grad_norm)

        self._step = step

    def _lr_on_device(self) -> None:
        """The learning rate as a device tensor the scheduler fills in place (torch's LRScheduler
        does for a tensor lr), so a replayed step reads the current one. Done at the first step,
        after a checkpoint's state was loaded."""
        if self._tensor_lr:
            return
        device = self.params[0].device
        for group in self.optimizer.param_groups:
            group["lr"] = torch.as_tensor(group["lr"], dtype=torch.float32, device=device).clone()
        self._tensor_lr = True

    def _snapshot(self) -> dict:
        state = self.optimizer.state
        return {
            "params": [p.detach().clone() for p in self.params],
            "state": {id(p): {k: v.clone() for k, v in state[p].items()} for p in self.params if p in state},
            "rng": random_state(self.params[0].device),
        }

    @torch.no_grad()
    def _undo(self, snapshot: dict) -> None:
        """Back to `snapshot` in place (the graphs hold these tensors' addresses): parameters, the
        optimiser's state (zero where it had none: AdamW's fresh state is zeros) and the generators."""
        for p, kept in zip(self.params, snapshot["params"]):
            p.copy_(kept)
        for p in self.params:
            kept = snapshot["state"].get(id(p))
            for k, v in self.optimizer.state.get(p, {}).items():
                if torch.is_tensor(v) and kept is not None:
                    v.copy_(kept[k])
                elif torch.is_tensor(v):
                    v.zero_()
        set_random_state(snapshot["rng"])

    def _graph(self, batch: dict, key: tuple):
        if key in self.graphs:
            return self.graphs[key]
        if len(batch_first(batch)) != self.batch_size or len(self.graphs) >= self.limit:
            return None
        inputs = {k: v.clone() if torch.is_tensor(v) else v for k, v in batch.items()}
        snapshot = self._snapshot()
        graph = self.recorder(self._step, inputs)
        self._undo(snapshot)
        self.graphs[key] = (inputs, graph)
        if len(self.graphs) == self.limit:
            log.info("graphs: %d batch shapes captured; further shapes run eagerly", self.limit)
        return self.graphs[key]

    def step(self, batch: dict) -> torch.Tensor:
        """One optimiser step on `batch` (on the device); its loss, on the device, not read."""
        self._lr_on_device()
        found = self._graph(batch, batch_key(batch))
        if found is None:
            self.eager_steps += 1
            return self._step(batch)
        inputs, graph = found
        for k, v in batch.items():
            if torch.is_tensor(v):
                inputs[k].copy_(v, non_blocking=True)
        # a copy: the next replay overwrites the graph's output
        return graph.replay().clone()


class ForwardGraphs:
    """The `capture` mode's evaluation forwards (xlt.core.classification.predict_logits): one
    recorded `model(**batch).logits` per batch shape in eval mode, without gradients, its static
    inputs reused; shapes past MAX_GRAPHS run eagerly. Registered for a model by the training
    loop (`register_forward`), so a run's dev evaluations replay graphs too."""

    def __init__(self, model, recorder=CudaGraph):
        self.model, self.recorder, self.limit = model, recorder, MAX_GRAPHS
        self.graphs: dict[tuple, tuple[dict, object]] = {}

    def _forward(self, batch: dict) -> torch.Tensor:
        return self.model(**batch).logits

    def __call__(self, batch: dict) -> torch.Tensor:
        key = (self.model.training, batch_key(batch))
        if key not in self.graphs:
            if len(self.graphs) >= self.limit:
                return self._forward(batch)
            inputs = {k: v.clone() if torch.is_tensor(v) else v for k, v in batch.items()}
            rng = random_state(batch_first(batch).device)
            self.graphs[key] = (inputs, self.recorder(self._forward, inputs))
            set_random_state(rng)  # the warm-up's draws (dropout in train mode) undone
        inputs, graph = self.graphs[key]
        for k, v in batch.items():
            if torch.is_tensor(v):
                inputs[k].copy_(v, non_blocking=True)
        return graph.replay().clone()


_FORWARDS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def register_forward(model: torch.nn.Module, recorder=CudaGraph) -> None:
    """Evaluate `model` through ForwardGraphs from now on (the training loop's graphs: capture)."""
    _FORWARDS[model] = ForwardGraphs(model, recorder)


def logits(model: torch.nn.Module, batch: dict) -> torch.Tensor:
    """`model(**batch).logits`, replayed from a graph where the model's run captures them."""
    graphs = _FORWARDS.get(model)
    return graphs(batch) if graphs is not None else model(**batch).logits


def random_state(device: torch.device) -> tuple:
    """The CPU generator's state and, on CUDA, the device's."""
    return torch.get_rng_state(), torch.cuda.get_rng_state(device) if device.type == "cuda" else None


def set_random_state(state: tuple) -> None:
    cpu, cuda = state
    torch.set_rng_state(cpu)
    if cuda is not None:
        torch.cuda.set_rng_state(cuda)


def batch_first(batch: dict) -> torch.Tensor:
    """A batch's first tensor (its first dimension is the batch's examples)."""
    for v in batch.values():
        if torch.is_tensor(v):
            return v
    raise XltError("a batch without tensors cannot run as a CUDA graph; set graphs: none")
