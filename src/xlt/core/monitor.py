"""TensorBoard event files of a training run, to watch it live (`monitor: {tensorboard: true}`).

A training verb opens the run's monitor around its training (`run`): with it on, every
xlt.core.training.train call of that process writes into one event-file writer per call in the
run's output directory (results/runs/<family>/<run_id>/), indexed by optimiser step:

- `train/loss`, `train/learning_rate`, `train/samples_per_s`: the numbers of the log's progress
  lines, at the same steps;
- `eval/<metric>` at every evaluation: its scalar metrics (`eval/score` is the one the run keeps
  its best parameters by) and, for metric records (xlt.core.metrics.record), `eval/<metric>/<dims>`
  (adapt's perplexity of every evaluation set: `eval/perplexity/qab/dev`, ...);
- the run's axes (the columns of its table) as TensorBoard HParams with `eval/score` as their
  metric, written into the run's own event file (add_hparams would make a separate timestamped
  run; the summaries are written as pytorch-lightning's TensorBoardLogger writes them), and the
  run's resolved settings as text (`settings`).

Every progress line and evaluation flushes the file (SummaryWriter's default, 120 s, is too slow to
watch). A call starts its writer with `purge_step` at the first step it writes (a resumed run's
checkpoint step + 1; 0 for a run from scratch), so TensorBoard drops what a killed earlier attempt
wrote from there on and a killed and resumed run shows one curve. A process that trains more than once (MonoX's
self-training rounds) continues the step axis: each call's steps follow the previous call's.

With monitoring off nothing here imports tensorboard and no file is written. On, without the
package, `require` stops the config check (and a verb run by hand) before any job runs.
"""

from __future__ import annotations

import importlib.util
import json
import math
import re
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from xlt.core.errors import XltError
from xlt.core.metrics import DIMENSIONS

INSTALL = 'pip install -e ".[monitor]"'
SELECTION_METRIC = "eval/score"  # the metric every family's evaluation picks the kept parameters by

_active: RunMonitor | None = None


def available() -> bool:
    """Whether the tensorboard package (which torch.utils.tensorboard writes with) is installed."""
    return importlib.util.find_spec("tensorboard") is not None


def missing(asked: str, off: str) -> str | None:
    """Why the setting `asked` cannot be met (`off` turns it off), or None when tensorboard is installed."""
    if available():
        return None
    return (
        f"{asked} writes TensorBoard event files, but the tensorboard package is not installed; "
        f"install the monitor extra ({INSTALL}) or set {off}"
    )


def require(asked: str, off: str) -> None:
    """Raise XltError (naming the extra to install) unless tensorboard is installed."""
    problem = missing(asked, off)
    if problem:
        raise XltError(problem)


@contextmanager
def run(on: bool, run_dir: str | Path, axes: dict, settings: dict) -> Iterator[None]:
    """The training calls inside write event files into `run_dir` when `on`; `axes` become the
    run's HParams, `settings` (the verb's arguments) its settings text."""
    global _active
    if not on:
        yield
        return
    require("--tensorboard true", "--tensorboard false")
    _active = RunMonitor(Path(run_dir), axes, settings)
    try:
        yield
    finally:
        _active = None


def board(start_step: int) -> Board | None:
    """The writer of one training call starting at `start_step` (0, or a resumed run's step), or
    None when no monitor is open."""
    return _active.board(start_step) if _active is not None else None


class RunMonitor:
    """One run's monitoring: its directory, HParams and settings, and the step offset of the
    process's next training call."""

    def __init__(self, run_dir: Path, axes: dict, settings: dict):
        self.run_dir, self.axes, self.settings = run_dir, axes, settings
        self.offset = 0  # steps of the training calls this process finished before

    def board(self, start_step: int) -> Board:
        from torch.utils.tensorboard import SummaryWriter  # deferred: imports torch

        # A purge at step P drops what earlier attempts wrote at steps >= P: a resumed call writes
        # from start_step + 1 on; the run's first call from scratch also replaces their HParams and
        # settings (step 0), so it writes them anew
        fresh = self.offset == 0 and start_step == 0
        self.run_dir.mkdir(parents=True, exist_ok=True)
        purge = 0 if fresh else self.offset + start_step + 1
        writer = SummaryWriter(str(self.run_dir), purge_step=purge, flush_secs=10)
        if fresh:
            _write_hparams(writer, self.axes)
            writer.add_text("settings", _settings_text(self.settings), global_step=0)
            writer.flush()
        return Board(writer, self)


class Board:
    """What one training call writes: progress lines and evaluations at its optimiser steps."""

    def __init__(self, writer, run: RunMonitor):
        self.writer, self.run, self.last_step = writer, run, 0

    def progress(self, step: int, loss: float, lr: float, samples_per_s: float) -> None:
        at = self.run.offset + step
        self.writer.add_scalar("train/loss", loss, at)
        self.writer.add_scalar("train/learning_rate", lr, at)
        self.writer.add_scalar("train/samples_per_s", samples_per_s, at)
        self.writer.flush()
        self.last_step = max(self.last_step, step)

    def evaluation(self, step: int, metrics: dict) -> None:
        at = self.run.offset + step
        for tag, value in scalars(metrics).items():
            self.writer.add_scalar(tag, value, at)
        self.writer.flush()
        self.last_step = max(self.last_step, step)

    def close(self, steps: int) -> None:
        """Close after a call that trained `steps` steps; the process's next call continues after them."""
        self.writer.close()
        self.run.offset += steps


def scalars(metrics: dict) -> dict[str, float]:
    """The `eval/...` scalars of an evaluation's metrics: its numbers, and the metric records
    (xlt.core.metrics.record) among its lists, tagged by metric and dimensions."""
    out = {}
    for key, value in metrics.items():
        if isinstance(value, bool):
            continue
        if isinstance(value, (int, float)):
            if math.isfinite(value):
                out[f"eval/{_tag(key)}"] = float(value)
        elif isinstance(value, list):
            for item in value:
                if isinstance(item, dict) and {"metric", "value"} <= set(item):
                    dims = [str(item[d]) for d in DIMENSIONS if d != "step" and d in item]
                    out["/".join(["eval", _tag(item["metric"]), *map(_tag, dims)])] = float(item["value"])
    return out


def _tag(name: str) -> str:
    # TensorBoard tags are [-/\w.]: dual's "qaa xx->en" becomes qaa_xx_to_en
    return re.sub(r"[^-\w.]", "_", str(name).replace("->", "_to_"))


def hparam_value(value):
    """An HParams value: numbers, strings and booleans as they are, anything else as JSON text."""
    if isinstance(value, (bool, int, float, str)):
        return value
    return json.dumps(value, sort_keys=True)


def _write_hparams(writer, axes: dict) -> None:
    """The run's axes as HParams in the writer's own file (what add_hparams writes, without the
    separate run it makes)."""
    from torch.utils.tensorboard.summary import hparams  # deferred: imports torch

    experiment, session_start, session_end = hparams(
        {key: hparam_value(value) for key, value in axes.items()},
        {SELECTION_METRIC: 0.0},  # (only its name is written)
    )
    file_writer = writer._get_file_writer()
    for summary in (experiment, session_start, session_end):
        file_writer.add_summary(summary)


def _settings_text(settings: dict) -> str:
    # a markdown table (TensorBoard renders text summaries as markdown); the verb's arguments as resolved
    rows = [
        f"| {key} | `{value if isinstance(value, str) else json.dumps(value, default=str)}` |"
        for key, value in settings.items()
        if not callable(value)
    ]
    return "\n".join(["| setting | value |", "|---|---|", *rows])
