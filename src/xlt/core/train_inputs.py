"""What xlt.core.training.train takes besides the model and its TrainArgs, in small groups.

    train(model, Objective(examples, collate, loss_fn), args,
          dev=DevSelection(evaluate, initial_score, loss_examples),
          checkpoint=Resumable(directory, identity),
          layers=LayerSchedule(parameters, on_step))

Only the objective is required; each group says what it changes. Importable without torch (the
types name it only for checkers), as xlt.core.train_args is; callers import them from here.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Sequence

if TYPE_CHECKING:
    import torch


@dataclass(frozen=True)
class Objective:
    """What training minimises: `loss_fn(model, collate(list_of_examples))`, a scalar, over batches
    of `examples` (a list or a map-style Dataset) in a seeded order. `collate` turns a list of
    examples into a batch dict of tensors; for gradient accumulation and the short last batch a
    loss is best a mean over the batch's examples (xlt.core.training)."""

    examples: Sequence
    collate: Callable[[list], dict]
    loss_fn: Callable[[torch.nn.Module, dict], torch.Tensor]


@dataclass(frozen=True)
class DevSelection:
    """The dev set's part: what picks the parameters training ends with, and what monitoring writes.

    `evaluate(model) -> {"score": float, ...}` runs every `eval_every` optimiser steps (0: at the
    end of every epoch) and after the last; the parameters of the best "score" (higher is better)
    are restored at the end. `initial_score`: the caller's evaluation of the parameters before
    training (its step 0); they then compete for best as step 0, so a run whose evaluations only
    get worse keeps them. `loss_examples` (in the form Objective.examples has): with monitoring on,
    their loss under the objective is written at every evaluation (`eval/loss`, xlt.core.monitor);
    nothing else reads them."""

    evaluate: Callable[[torch.nn.Module], dict]
    initial_score: float | None = None
    loss_examples: Sequence | None = None


@dataclass(frozen=True)
class Resumable:
    """A resumable run (xlt.core.checkpoint): its state is saved in `directory` (outside the job's
    outputs; the caller removes it once its outputs are written) every `checkpoint_every` steps and
    on SLURM's SIGTERM/SIGUSR1, and a rerun continues from it to the same result. `identity`
    (xlt.core.checkpoint.run_identity: the caller's model, loss settings and input files) keys the
    checkpoint together with the TrainArgs: a checkpoint of another run is discarded. A `directory`
    of None (a caller's optional one, unset) is a run that is not resumable."""

    directory: str | Path | None
    identity: dict | None = None


@dataclass(frozen=True)
class LayerSchedule:
    """What the optimiser trains, step by step. `parameters`: the optimiser's (default: those that
    require grad when training starts; a schedule that unfreezes layers later lists them all
    here). `on_step(step, epoch)` runs before each optimiser step's forward passes, with the
    epoch of the batches that step consumes: a layer schedule sets requires_grad there (it is also
    a hook on the start of every step: a timing, a test's signal)."""

    parameters: Sequence[torch.nn.Parameter] | None = None
    on_step: Callable[[int, int], None] | None = None
