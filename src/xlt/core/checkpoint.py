"""Resumable training checkpoints, so a killed, preempted or timed-out job continues where it
stopped instead of starting over.

A checkpoint is one file, `<directory>/checkpoint.pt`, holding everything that decides the
rest of a run: model, optimizer and scheduler state, the step and epoch, the position in
the epoch's data order (the loop's order is a permutation seeded by (seed, epoch), so the
seed, the epoch and the number of examples already consumed rebuild it), and the Python,
NumPy, torch and CUDA random number generator states. A resumed run therefore produces
exactly the parameters and metrics of an uninterrupted one (on the same device).

Saving is atomic: the file is written next to its final name and renamed over it, so a
kill at any moment leaves the previous checkpoint intact, and only the latest is kept.

The checkpoint directory must NOT lie inside a rule's declared outputs: Snakemake deletes
the outputs of a failed job before it reruns it, which would delete the checkpoint too.
Call `remove_checkpoint` once the job's final outputs are written.

Stopping in time on SLURM: SLURM sends SIGTERM at the time limit (and on preemption) and
SIGKILL `KillWait` seconds later; `#SBATCH --signal=USR1@300` (Snakemake:
`slurm_extra: "'--signal=USR1@300'"`) adds a SIGUSR1 five minutes earlier. `GracefulStop`
turns either signal into a flag that the loop checks after each optimizer step; the loop
then saves a checkpoint and exits with `EXIT_PREEMPTED`, and the retried job resumes.
Save periodic checkpoints too: a SIGKILL gives no warning.

A resume must never continue a different run: a rerun after editing the learning rate, a loss
setting or an input file would otherwise go on from the old run's state. So a checkpoint is keyed
(`run_identity`, `identity_key`): the caller names every setting that changes the result and the
files the job reads; the key is a sha256 of the settings and of those files' contents (read in
chunks on every start, nothing cached), and of the commit a hub model resolves to
(`model_inputs`). `load_checkpoint(..., identity=...)` resumes only a checkpoint with the same
key; another one is removed, with one log line naming what changed, and the run trains from the
start. A checkpoint written before keys existed counts as another run.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import random
import signal
import threading
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import Any, Iterable

import numpy as np
import torch

from xlt.core import faults
from xlt.core.io import atomic_path, remove_temporaries
from xlt.core.manifest import resolved_commit
from xlt.core.model_files import split_revision

log = logging.getLogger("xlt.core.checkpoint")

CHECKPOINT_FILE = "checkpoint.pt"
FORMAT_VERSION = 1
# EX_TEMPFAIL from sysexits.h: "try again later", which is what a stopped run means
EXIT_PREEMPTED = 75


def checkpoint_path(directory: str | os.PathLike) -> Path:
    return Path(directory) / CHECKPOINT_FILE


def rng_state() -> dict:
    """The global random number generator states that training consumes (dropout, shuffles)."""
    version, mt_state, gauss_next = random.getstate()
    kind, keys, pos, has_gauss, cached_gaussian = np.random.get_state()
    state = {
        "python": [version, list(mt_state), gauss_next],
        "numpy": [kind, keys.tolist(), int(pos), int(has_gauss), float(cached_gaussian)],
        "torch": torch.get_rng_state(),
        "cuda": torch.cuda.get_rng_state_all() if torch.cuda.is_available() else [],
    }
    return state


def set_rng_state(state: dict) -> None:
    version, mt_state, gauss_next = state["python"]
    random.setstate((version, tuple(mt_state), gauss_next))
    kind, keys, pos, has_gauss, cached_gaussian = state["numpy"]
    np.random.set_state((kind, np.asarray(keys, dtype=np.uint32), pos, has_gauss, cached_gaussian))
    torch.set_rng_state(state["torch"])
    if state["cuda"] and torch.cuda.is_available():
        if len(state["cuda"]) == torch.cuda.device_count():
            torch.cuda.set_rng_state_all(state["cuda"])
        else:
            log.warning(
                "checkpoint has CUDA RNG states for %d devices, this job sees %d; CUDA RNG not restored",
                len(state["cuda"]),
                torch.cuda.device_count(),
            )


def save_checkpoint(
    directory: str | os.PathLike,
    step: int,
    model: torch.nn.Module,
    optimizer: torch.optim.Optimizer,
    scheduler: Any | None = None,
    extra: dict | None = None,
    *,
    epoch: int = 0,
    position: int = 0,
    order_seed: int | None = None,
    identity: dict | None = None,
) -> Path:
    """Atomically replace the checkpoint in `directory` with the current training state.

    `epoch` and `position` locate the next example to train on: `position` examples of
    epoch `epoch`'s data order (rebuilt from `order_seed`) are consumed. `extra` holds the
    loop's own state (best score, history, best parameters keyed by name, ...): plain
    Python values, tensors and NumPy values only, since loading uses `weights_only=True`.
    `identity` (`run_identity`) keys the checkpoint to this run.
    """
    state = {
        "format": FORMAT_VERSION,
        "step": int(step),
        "epoch": int(epoch),
        "position": int(position),
        "order_seed": order_seed,
        "model": model.state_dict(),
        "optimizer": optimizer.state_dict(),
        "scheduler": scheduler.state_dict() if scheduler is not None else None,
        "rng": rng_state(),
        "extra": _plain(extra or {}, "extra"),
        "identity": identity,
        "key": identity_key(identity) if identity is not None else None,
    }
    path = checkpoint_path(directory)
    remove_temporaries(path)  # a SIGKILL mid-write leaves one
    with atomic_path(path) as tmp:
        with open(tmp, "wb") as f:
            torch.save(state, f)
            f.flush()
            os.fsync(f.fileno())
        faults.reached("checkpoint")  # the kill sweep's hook; nothing without XLT_FAULT
    _fsync_directory(path.parent)
    log.info("checkpoint at step %d (epoch %d, position %d) -> %s", step, epoch, position, path)
    return path


def load_checkpoint(
    directory: str | os.PathLike, map_location: str | torch.device = "cpu", identity: dict | None = None
) -> dict | None:
    """The saved state, or None when `directory` holds no checkpoint. With `identity`
    (`run_identity`), a checkpoint of another run is removed and None returned: resuming it
    would silently mix two runs."""
    path = checkpoint_path(directory)
    if not path.exists():
        return None
    state = torch.load(path, map_location=map_location, weights_only=True)
    if state.get("format") != FORMAT_VERSION:
        raise ValueError(
            f"{path}: checkpoint format {state.get('format')!r}, expected {FORMAT_VERSION}; delete it to start over"
        )
    if identity is not None and state.get("key") != identity_key(identity):
        log.warning(
            "discarding the checkpoint in %s (step %d): it belongs to another run (%s); training from the start",
            directory,
            state["step"],
            "; ".join(identity_changes(state.get("identity"), identity)),
        )
        remove_checkpoint(directory)
        return None
    return state


def file_sha256(path: str | os.PathLike) -> str:
    """sha256 of a file, read in 1 MiB chunks; of a directory (a local model, a MonoX split), of
    its files' relative names and contents in sorted order."""
    path = Path(path)
    digest = hashlib.sha256()
    if path.is_dir():
        for file in sorted(p for p in path.rglob("*") if p.is_file()):
            digest.update(f"{file.relative_to(path).as_posix()}\0{file_sha256(file)}\0".encode())
        return digest.hexdigest()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


@dataclass(frozen=True)
class HubCommit:
    """A hub model as a checkpoint input: the commit the local hub cache resolves its reference
    (`id` or `id@revision`) to. A branch or tag moves, so the id alone would resume a run of
    another commit; None: the cache does not hold it yet (the job will download whatever the
    revision names then)."""

    ref: str
    commit: str | None

    def digest(self) -> str:
        return f"commit {self.commit}" if self.commit else "commit unresolved (not in the hub cache)"


def model_inputs(name_or_path: str) -> list[Path | HubCommit]:
    """A local model directory is an input file set (it may be retrained under the same name);
    a hub model is the commit its `@revision` (default main) resolves to in the hub cache."""
    if Path(name_or_path).is_dir():
        return [Path(name_or_path)]
    return [HubCommit(name_or_path, resolved_commit(*split_revision(name_or_path)))]


def run_identity(settings: dict, inputs: Iterable[str | os.PathLike | HubCommit] = ()) -> dict:
    """What a checkpoint must match to be resumed: `settings` (every value that changes the
    result; JSON-able, Paths become strings) and the sha256 of each input file (a hub model's
    resolved commit), in order."""
    return {
        "settings": json.loads(json.dumps(settings, sort_keys=True, default=str)),
        "inputs": [[p.ref, p.digest()] if isinstance(p, HubCommit) else [str(p), file_sha256(p)] for p in inputs],
    }


def with_settings(identity: dict | None, **settings: Any) -> dict:
    """`identity` (None: no caller identity) with more settings, e.g. the training loop's own."""
    identity = identity or run_identity({})
    more = run_identity(settings)["settings"]
    return {"settings": {**identity["settings"], **more}, "inputs": identity["inputs"]}


def identity_key(identity: dict) -> str:
    """sha256 of the settings and the input contents (not the input paths: the same bytes
    under another spelling of the path are the same run; their order counts)."""
    content = {"settings": identity["settings"], "inputs": [digest for _, digest in identity["inputs"]]}
    return hashlib.sha256(json.dumps(content, sort_keys=True).encode()).hexdigest()


def identity_changes(old: dict | None, new: dict) -> list[str]:
    """What differs between a checkpoint's identity and this run's, for the log."""
    if not old:
        return ["the checkpoint was written before checkpoints were keyed"]
    was, now = _flat(old["settings"]), _flat(new["settings"])
    changes = [
        f"{k} {was.get(k, '(unset)')!r} -> {now.get(k, '(unset)')!r}"
        for k in sorted(was.keys() | now.keys())
        if was.get(k) != now.get(k)
    ]
    old_inputs, new_inputs = old["inputs"], new["inputs"]
    if len(old_inputs) != len(new_inputs):
        changes.append(f"{len(old_inputs)} input files -> {len(new_inputs)}")
    changes += [
        f"input {path} changed" + (f" ({was_digest} -> {digest})" if digest.startswith("commit ") else "")
        for (_, was_digest), (path, digest) in zip(old_inputs, new_inputs)
        if was_digest != digest
    ]
    return changes or ["same settings and inputs, another key"]


def _flat(settings: dict, prefix: str = "") -> dict:
    out = {}
    for k, v in settings.items():
        if isinstance(v, dict) and v:
            out.update(_flat(v, f"{prefix}{k}."))
        else:
            out[f"{prefix}{k}"] = v
    return out


def restore(
    state: dict, model: torch.nn.Module, optimizer: torch.optim.Optimizer, scheduler: Any | None = None
) -> dict:
    """Load `state` into the model, optimizer and scheduler and set the RNG states; returns
    `state` for its step/epoch/position/extra. Call it after building the optimizer and
    scheduler exactly as a fresh run does, and right before the first training step."""
    model.load_state_dict(state["model"])
    optimizer.load_state_dict(state["optimizer"])
    if scheduler is not None and state["scheduler"] is not None:
        scheduler.load_state_dict(state["scheduler"])
    set_rng_state(state["rng"])
    log.info("resumed from step %d (epoch %d, position %d)", state["step"], state["epoch"], state["position"])
    return state


def remove_checkpoint(directory: str | os.PathLike) -> None:
    """Delete the checkpoint (and leftovers of interrupted writes); the directory too if empty."""
    path = checkpoint_path(directory)
    path.unlink(missing_ok=True)
    remove_temporaries(path)
    try:
        path.parent.rmdir()
    except OSError:
        pass  # missing, or holds other files


class GracefulStop:
    """Turn SIGTERM/SIGUSR1 into a flag the training loop polls:

        with GracefulStop() as stop:
            for step in ...:
                ...optimizer step...
                if stop.requested:
                    save_checkpoint(...)
                    stop.exit()          # SystemExit(EXIT_PREEMPTED)

    The previous handlers come back on leaving the block. Outside the main thread signal
    handlers cannot be installed; then the flag simply never rises.
    """

    signals = (signal.SIGTERM, signal.SIGUSR1)

    def __init__(self) -> None:
        self.requested = False
        self.signal: int | None = None
        self._previous: dict[int, Any] = {}

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        self.requested = True
        self.signal = signum
        log.warning("received %s: stopping after this step with a checkpoint", signal.Signals(signum).name)

    def __enter__(self) -> "GracefulStop":
        if threading.current_thread() is threading.main_thread():
            for sig in self.signals:
                self._previous[sig] = signal.signal(sig, self._handle)
        return self

    def __exit__(self, *exc_info) -> None:
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)
        self._previous.clear()

    def exit(self) -> None:
        raise SystemExit(EXIT_PREEMPTED)


def _plain(value: Any, where: str) -> Any:
    """`value` with NumPy types turned into what `torch.load(weights_only=True)` accepts."""
    if isinstance(value, torch.Tensor) or value is None or isinstance(value, (bool, int, float, str, bytes)):
        return value
    if isinstance(value, np.ndarray):
        return torch.from_numpy(value.copy())
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, dict):
        return {k: _plain(v, f"{where}[{k!r}]") for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        items = [_plain(v, f"{where}[{i}]") for i, v in enumerate(value)]
        return items if isinstance(value, list) else tuple(items)
    raise TypeError(
        f"checkpoint {where}: cannot store {type(value).__name__}; use plain values, tensors or NumPy arrays"
    )


def _fsync_directory(directory: Path) -> None:
    # make the rename itself durable (a node crash right after it must not undo it)
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
