"""`manifest.json`: what made a run's numbers, beside its metrics (one per run directory).

Written by `MetricsFile.write`, the one place every verb that runs a model passes through, so
no verb can forget it. It records which xlt (version, git commit) and which libraries ran,
which model (the config's name, the path or hub id, the revision and the commit the hub cache
resolved it to), the sha256 of every input file named on the command line, the device,
precision and seed, a training job's effective batch (batch_size examples per optimiser step,
split into grad_accum micro-batches of at most micro_batch_size), and the job's wall time,
throughput and peak memory. A run directory that
holds several jobs' metrics files (train.json, then eval.json) gets one manifest with a
`jobs` entry per metrics file; the run-level fields are those of the latest job, except the
model: an evaluation of the model the run trained keeps the pretrained model its training named.
Torch-free at import: torch is only asked when the job already imported it.
"""

from __future__ import annotations

import hashlib
import resource
import sys
import time
from importlib import metadata
from pathlib import Path

from xlt import __version__
from xlt.core.io import read_json, write_json
from xlt.core.model_files import split_revision
from xlt.core.version import git_commit

NAME = "manifest.json"
LIBRARIES = ("torch", "transformers", "datasets", "sentence-transformers", "numpy")


def sha256(path: str | Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def library_versions() -> dict[str, str | None]:
    out = {}
    for name in LIBRARIES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    return out


def input_files(argv: list[str], outputs: set[Path]) -> list[Path]:
    """Every existing file named on the command line (`--train F`, `--bitext split=F`, positional
    files), outputs left out: what the job read, whatever its verb calls it."""
    found = []
    for arg in argv:
        for text in (arg, arg.split("=", 1)[-1]):  # `--bitext test=FILE`, `--table family=CSV`
            path = Path(text)
            if text and _is_file(path) and path.resolve() not in outputs and path not in found:
                found.append(path)
                break
    return found


def _is_file(path: Path) -> bool:
    """Path.is_file, False for an argument no file can be named (a JSON value such as --axes
    longer than a file name may be raises ENAMETOOLONG instead)."""
    try:
        return path.is_file()
    except OSError:
        return False


def peak_memory() -> dict[str, float | None]:
    """Peak resident memory of this process (MiB; Linux reports ru_maxrss in KiB, macOS in bytes)
    and, when the job ran on CUDA, torch's peak allocated GPU memory."""
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    rss_mib = rss / (1 << 20) if sys.platform == "darwin" else rss / 1024
    gpu = None
    torch = sys.modules.get("torch")
    if torch is not None and torch.cuda.is_available() and torch.cuda.is_initialized():
        gpu = round(torch.cuda.max_memory_allocated() / (1 << 20), 1)
    return {"cpu_rss_mib": round(rss_mib, 1), "gpu_allocated_mib": gpu}


def resolved_commit(hub_id: str, revision: str | None) -> str | None:
    """The commit the local hub cache resolves `revision` (default: main) to, or None when the
    cache does not hold the model (a local directory, or not downloaded)."""
    try:
        from huggingface_hub import try_to_load_from_cache  # deferred: huggingface_hub: slow to import
    except ImportError:
        return None
    try:
        found = try_to_load_from_cache(hub_id, "config.json", revision=revision)
    except Exception:  # an id the hub library rejects (a local path): nothing to resolve
        return None
    # <cache>/models--org--name/snapshots/<commit>/config.json
    return Path(found).parent.name if isinstance(found, str) else None


def model_fields(meta: dict, axes: dict, args) -> dict:

    path, revision = split_revision(str(getattr(args, "model", None) or meta.get("model") or ""))
    path = path or None
    name = axes.get("model") or getattr(args, "model_name", None)
    is_hub = bool(path) and not Path(str(path)).exists()
    return {
        "model": name,
        "model_path": path,
        "revision": revision,
        "resolved_commit": resolved_commit(str(path), revision) if is_hub else None,
    }


def _inside(path, directory: Path) -> bool:
    if not path:
        return False
    try:
        Path(str(path)).resolve().relative_to(directory.resolve())
    except ValueError:
        return False
    return True


def effective_batch(train: dict) -> dict | None:
    """What an optimiser step of a training job saw: `batch_size` examples in `grad_accum`
    micro-batches of at most `micro_batch_size` (xlt.core.training.effective_batch); None
    for a job that did not train."""
    if not train.get("batch_size"):
        return None
    batch, accum = int(train["batch_size"]), int(train.get("grad_accum") or 1)
    return {"batch_size": batch, "grad_accum": accum, "micro_batch_size": -(-batch // accum)}


def job_fields(meta: dict, args, started: float, metrics_path: Path) -> dict:
    wall_s = round(time.time() - started, 3)
    samples = meta.get("samples")
    samples_per_s = meta.get("samples_per_s")
    if samples_per_s is None and samples:
        samples_per_s = round(samples / max(wall_s, 1e-9), 2)
    train = meta.get("train") if isinstance(meta.get("train"), dict) else {}
    return {
        "metrics": metrics_path.name,
        "verb": getattr(args, "verb", None),
        "device": meta.get("device") or getattr(args, "device", None) or train.get("device"),
        "precision": getattr(args, "precision", None) or train.get("precision"),
        "seed": getattr(args, "seed", None) if getattr(args, "seed", None) is not None else train.get("seed"),
        "effective_batch": meta.get("effective_batch") or effective_batch(train),
        "wall_s": wall_s,
        "samples_per_s": samples_per_s,
        "peak_memory": peak_memory(),
    }


def write_manifest(
    metrics_path: str | Path, meta: dict, axes: dict, started: float, argv: list[str] | None = None, args=None
) -> Path:
    """Write (or update) `manifest.json` beside `metrics_path`; returns its path."""
    metrics_path = Path(metrics_path)
    path = metrics_path.parent / NAME
    argv = list(argv or [])  # None outside `xlt` (a library call): no command line to read inputs from
    outputs = {metrics_path.resolve(), path.resolve()}
    previous = read_json(path) if path.is_file() else {}
    jobs = previous.get("jobs", {})
    jobs[metrics_path.name] = job_fields(meta, args, started, metrics_path)
    inputs = {str(p): sha256(p) for p in input_files(argv, outputs)}
    model = model_fields(meta, axes, args)
    jobs[metrics_path.name]["model_path"] = model["model_path"]
    if previous.get("model_path") and _inside(model["model_path"], metrics_path.parent):
        # an evaluation of the model this run trained: the run still started from the
        # pretrained model its training job recorded
        model = {k: previous.get(k) for k in model}
    manifest = {
        "run_id": meta.get("run_id"),
        "family": meta.get("family"),
        "xlt_version": __version__,
        "git_commit": git_commit(),
        "libraries": library_versions(),
        "python": sys.version.split()[0],
        **model,
        "inputs": {**previous.get("inputs", {}), **inputs},
        **{
            k: v
            for k, v in jobs[metrics_path.name].items()
            if k in ("device", "precision", "seed", "wall_s", "samples_per_s", "peak_memory")
        },
        # an evaluation after training keeps the batch its run was trained with
        "effective_batch": jobs[metrics_path.name]["effective_batch"] or previous.get("effective_batch"),
        "jobs": jobs,
        "command": "xlt " + " ".join(argv),
    }
    write_json(path, manifest)
    return path
