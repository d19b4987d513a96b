"""TensorBoard event files of a training run, to watch it live (`monitor: {tensorboard: true}`).

A training verb opens the run's monitor around its training (`run`): with it on, every
xlt.core.training.train call of that process writes into one event-file writer per call in the
run's output directory (results/runs/<family>/<run_id>/), indexed by optimiser step:

- `train/loss`, `train/learning_rate`, `train/samples_per_s`: the numbers of the log's progress
  lines, at the same steps; `train/grad_norm`: the mean gradient norm (before clipping) of the
  steps since the previous line, when the run clips (`max_grad_norm` > 0, which computes it);
- `eval/<metric>` at every evaluation: its scalar metrics (`eval/score` is the one the run keeps
  its best parameters by, `eval/best_score` the best so far: the selected one at the end),
  `eval/loss` (the training loss on the dev examples the family passes) and, for metric records
  (xlt.core.metrics.record), `eval/<metric>/<dims>` (adapt's `eval/perplexity/qab/dev`, ...);
- `probe/<metric>/<dims>`: the records an evaluation returns under `probes`, measurements of the
  representations rather than of the task (adapt's CKA and distances to the reference model);
- the run's axes as an HParams session (`session_start_info`, at step 0): booleans and strings as
  they are, numbers as their text (hparam_value: TensorBoard would print 1 as 1.0000), the
  freeze depth -1 as "none", an axis without a value (None) left out; and the run's resolved
  settings as text (`settings`).

The HParams *experiment* (its columns and metrics) is the sweep's, not a run's: TensorBoard
takes the first experiment summary it finds, so one run's would hide every other family's
axes. xlt.core.monitor_sweep writes one for the whole sweep (`write_experiment` here): the union
of every training job's axes, with `eval/best_score` (selected) and `eval/score` (final) as its
metrics. Without it (a verb run by hand) TensorBoard builds the columns from the runs' sessions.

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
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from xlt.core.errors import XltError
from xlt.core.metrics import DIMENSIONS

INSTALL = 'pip install -e ".[monitor]"'
SELECTION_METRIC = "eval/score"  # the metric every family's evaluation picks the kept parameters by
BEST_METRIC = "eval/best_score"  # the best SELECTION_METRIC so far: at the end, the kept parameters'
DEPTH_AXIS = "freeze_depth"  # its -1 is no depth: HParams shows "none"
PROBES = "probes"  # an evaluation's records under this key are probes (`probe/...`), not task metrics

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
            _write_session(writer, self.axes)
            writer.add_text("settings", _settings_text(self.settings), global_step=0)
            writer.flush()
        return Board(writer, self)


class Board:
    """What one training call writes: progress lines and evaluations at its optimiser steps."""

    def __init__(self, writer, run: RunMonitor):
        self.writer, self.run, self.last_step = writer, run, 0

    def progress(self, step: int, loss: float, lr: float, samples_per_s: float, grad_norm: float | None = None) -> None:
        at = self.run.offset + step
        self.writer.add_scalar("train/loss", loss, at)
        self.writer.add_scalar("train/learning_rate", lr, at)
        self.writer.add_scalar("train/samples_per_s", samples_per_s, at)
        if grad_norm is not None:
            self.writer.add_scalar("train/grad_norm", grad_norm, at)
        self.writer.flush()
        self.last_step = max(self.last_step, step)

    def evaluation(self, step: int, metrics: dict, best_score: float | None = None, loss: float | None = None) -> None:
        """One evaluation's metrics, the best score so far (`best_score`) and the dev loss (`loss`)."""
        at = self.run.offset + step
        extra = {BEST_METRIC: best_score, "eval/loss": loss}
        written = scalars(metrics) | {tag: value for tag, value in extra.items() if value is not None}
        for tag, value in written.items():
            self.writer.add_scalar(tag, value, at)
        self.writer.flush()
        self.last_step = max(self.last_step, step)

    def close(self, steps: int) -> None:
        """Close after a call that trained `steps` steps; the process's next call continues after them."""
        self.writer.close()
        self.run.offset += steps


def scalars(metrics: dict) -> dict[str, float]:
    """The scalars of an evaluation's metrics: its numbers as `eval/<name>`, and the metric records
    (xlt.core.metrics.record) among its lists, tagged by metric and dimensions: `eval/...`, or
    `probe/...` for those under PROBES."""
    out = {}
    for key, value in metrics.items():
        if isinstance(value, bool):
            continue
        if isinstance(value, (int, float)):
            if math.isfinite(value):
                out[f"eval/{_tag(key)}"] = float(value)
        elif isinstance(value, list):
            prefix = "probe/" if key == PROBES else "eval/"
            for item in value:
                if isinstance(item, dict) and {"metric", "value"} <= set(item):
                    dims = [str(item[d]) for d in DIMENSIONS if d != "step" and d in item]
                    out[prefix + "/".join([_tag(item["metric"]), *map(_tag, dims)])] = float(item["value"])
    return out


def _tag(name: str) -> str:
    # TensorBoard tags are [-/\w.]: dual's "qaa xx->en" becomes qaa_xx_to_en
    return re.sub(r"[^-\w.]", "_", str(name).replace("->", "_to_"))


def hparam_value(axis: str, value):
    """An axis value as HParams shows it, or None to leave it out (an axis the run does not have).
    Booleans stay booleans and strings strings. Numbers become their shortest text (1, 0.3, 1e-05):
    every axis is a choice among the sweep's values, filtered by ticking them, and TensorBoard
    prints a number with five significant digits (an int 1 as 1.0000); the sweep's experiment
    orders them by value. The freeze depth -1 is no depth: "none". Anything else is JSON text."""
    if value is None:
        return None
    if isinstance(value, (bool, str)):
        return value
    if axis == DEPTH_AXIS and value == -1:
        return "none"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() else repr(value)
    return json.dumps(value, sort_keys=True)


def _order(value) -> tuple:
    # a column's choices: numbers (as hparam_value writes them) by value, then the other strings, then booleans
    if isinstance(value, bool):
        return 2, 0.0, str(value)
    try:
        return 0, float(value), value
    except ValueError:
        return 1, 0.0, value


def session_hparams(axes: dict) -> dict:
    """The run's axes as typed HParams values (hparam_value), without the ones it does not have."""
    values = {axis: hparam_value(axis, value) for axis, value in axes.items()}
    return {axis: value for axis, value in values.items() if value is not None}


def _write_session(writer, axes: dict) -> None:
    """The run's axes as an HParams session in the writer's own file (add_hparams would make a
    separate run, and write an experiment summary of this run's axes alone)."""
    from tensorboard.plugins.hparams import metadata, plugin_data_pb2

    start = plugin_data_pb2.SessionStartInfo(start_time_secs=time.time())
    for axis, value in session_hparams(axes).items():
        kind = "bool_value" if isinstance(value, bool) else "number_value" if isinstance(value, (int, float)) else ""
        setattr(start.hparams[axis], kind or "string_value", value)
    summary = _hparams_summary(
        metadata.SESSION_START_INFO_TAG, plugin_data_pb2.HParamsPluginData(session_start_info=start)
    )
    writer._get_file_writer().add_summary(summary, global_step=0)


def _hparams_summary(tag: str, data):
    # what tensorboard.plugins.hparams.summary writes (that module imports tensorflow)
    from tensorboard.compat.proto.summary_pb2 import Summary
    from tensorboard.plugins.hparams import metadata

    return Summary(value=[Summary.Value(tag=tag, metadata=metadata.create_summary_metadata(data))])


def experiment_summary(columns: dict[str, list]):
    """The HParams experiment of a sweep: one column per axis (`columns`: axis -> its values over
    the sweep's runs, as hparam_value gives them), typed by its values (numbers, booleans or
    strings; a column mixing them is a string column whose choices keep each value's type, so
    TensorBoard's filters match the runs' values), and the selected and final scores as metrics."""
    from google.protobuf import struct_pb2
    from tensorboard.plugins.hparams import api_pb2, metadata, plugin_data_pb2

    infos = []
    for axis, values in columns.items():
        distinct = sorted(set(values), key=_order)
        kinds = {bool if isinstance(v, bool) else (float if isinstance(v, (int, float)) else str) for v in distinct}
        kind = kinds.pop() if len(kinds) == 1 else str
        data_type = {bool: api_pb2.DATA_TYPE_BOOL, float: api_pb2.DATA_TYPE_FLOAT64}.get(kind, api_pb2.DATA_TYPE_STRING)
        domain = struct_pb2.ListValue()
        domain.extend(distinct)
        # differs: the columns whose values vary come first (the table shows five at first)
        info = api_pb2.HParamInfo(name=axis, type=data_type, domain_discrete=domain, differs=len(distinct) > 1)
        infos.append(info)
    metrics = [
        api_pb2.MetricInfo(
            name=api_pb2.MetricName(tag=BEST_METRIC),
            display_name="selected score",
            description=f"the best {SELECTION_METRIC}: the evaluation whose parameters the run keeps",
        ),
        api_pb2.MetricInfo(
            name=api_pb2.MetricName(tag=SELECTION_METRIC),
            display_name="final score",
            description=f"the last {SELECTION_METRIC} of the run",
        ),
    ]
    experiment = api_pb2.Experiment(hparam_infos=infos, metric_infos=metrics, time_created_secs=0)
    return _hparams_summary(metadata.EXPERIMENT_TAG, plugin_data_pb2.HParamsPluginData(experiment=experiment))


def write_experiment(directory: str | Path, columns: dict[str, list]) -> bool:
    """Write the sweep's HParams experiment (experiment_summary) as the only event file in
    `directory`; nothing when the file there already holds the same one (a TensorBoard that
    reads it keeps what it read first). Returns whether it wrote."""
    from tensorboard.backend.event_processing.event_file_loader import EventFileLoader
    from tensorboard.compat.proto.event_pb2 import Event
    from tensorboard.summary.writer.event_file_writer import EventFileWriter

    summary = experiment_summary(columns)
    directory = Path(directory)
    old = sorted(directory.glob("events.out.tfevents.*"))
    if len(old) == 1:
        written = [v for event in EventFileLoader(str(old[0])).Load() for v in event.summary.value]
        if [_content(v) for v in written] == [_content(v) for v in summary.value]:
            return False
    for path in old:
        path.unlink()
    directory.mkdir(parents=True, exist_ok=True)
    writer = EventFileWriter(str(directory), filename_suffix=".sweep")
    writer.add_event(Event(summary=summary, step=0, wall_time=time.time()))
    writer.close()
    return True


def _content(value) -> tuple:
    return value.tag, value.metadata.plugin_data.content


def _settings_text(settings: dict) -> str:
    # a markdown table (TensorBoard renders text summaries as markdown); the verb's arguments as resolved
    rows = [
        f"| {key} | `{value if isinstance(value, str) else json.dumps(value, default=str)}` |"
        for key, value in settings.items()
        if not callable(value)
    ]
    return "\n".join(["| setting | value |", "|---|---|", *rows])
