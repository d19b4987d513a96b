"""Download a sweep's Hugging Face models and datasets ahead of time, and check offline that
they are there.

Compute nodes of a cluster often have no internet. `xlt prefetch --config FILE` runs where
there is (a login node) and fills the project's cache, `resources/hf` (or `--cache`), which
the workflow also points the jobs at; a run with HF_HUB_OFFLINE=1 then checks the cache
before any job starts (`check_offline`) and stops with one line naming the missing models
and datasets and the prefetch command, instead of failing hours later inside a job.

The cache is Hugging Face's own layout (`<cache>/hub`, `<cache>/datasets`), so the usual
loading code finds it through HF_HUB_CACHE and HF_DATASETS_CACHE (`cache_environment`).
HF_HOME is left alone: it also holds the user's hub login token, which gated models need.
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from xlt.core import registry, settings
from xlt.core.errors import XltError
from xlt.core.settings import split_languages

DEFAULT_CACHE = Path("resources") / "hf"
OFFLINE_VARIABLES = ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_DATASETS_OFFLINE")
# weights in formats torch does not load, skipped to save disk and time
SKIPPED_WEIGHTS = ["*.h5", "*.msgpack", "*.ot", "*.onnx", "onnx/*", "*.tflite", "openvino/*", "coreml/*", "*.gguf"]


@dataclass(frozen=True)
class HubModel:
    name: str
    repo_id: str
    revision: str | None


@dataclass(frozen=True)
class HubDataset:
    name: str
    path: str
    config_name: str | None
    split: str
    revision: str | None

    def describe(self) -> str:
        config = f", config {self.config_name!r}" if self.config_name else ""
        return f"dataset {self.name} ({self.path!r}{config}, split {self.split!r})"

    @property
    def part(self) -> str:
        return f"{self.config_name}/{self.split}" if self.config_name else self.split


def hf_split(spec: dict, split: str) -> str:
    """The hub split a `source: hf` dataset reads for our `split`: a corpus drawn as sentences reads
    every split from its one pool of documents, others their split_names entry (default: the same name)."""
    return spec["sentences"]["pool"] if "sentences" in spec else spec.get("split_names", {}).get(split, split)


def plan(config: dict) -> tuple[list[HubModel], list[HubDataset]]:
    """Every hub model and every (config name, split) of every HF dataset the config declares."""
    models = [
        HubModel(name, spec["path"], spec.get("revision"))
        for name, spec in config.get("models", {}).items()
        if spec["source"] == "hub"
    ]
    loads: dict[tuple, HubDataset] = {}
    for name, spec in config.get("datasets", {}).items():
        if spec["source"] != "hf":
            continue
        for split, langs in split_languages(spec).items():
            split_name = hf_split(spec, split)
            for lang in langs:
                config_name = spec["name"].format(lang=lang) if spec.get("name") else None
                key = (spec["path"], config_name, split_name, spec.get("revision"))
                loads.setdefault(key, HubDataset(name, *key))
    # hub data a family reads outside `datasets:`: its optional hook prefetch.hub_datasets(config)
    for name in registry.names():
        hub_datasets = registry.hook(name, "prefetch", "hub_datasets") if settings.family(config, name) else None
        for load in hub_datasets(config) if hub_datasets else []:
            loads.setdefault((load.path, load.config_name, load.split, load.revision), load)
    return models, list(loads.values())


def cache_dir(explicit: str | os.PathLike | None = None) -> Path:
    """The cache the workflow's jobs use: explicit, else resources/hf."""
    return Path(explicit or DEFAULT_CACHE).resolve()


def cache_environment(cache: Path) -> dict[str, str]:
    """The variables that point the Hugging Face libraries at `cache` (hub models, datasets)."""
    return {"HF_HUB_CACHE": str(cache / "hub"), "HF_DATASETS_CACHE": str(cache / "datasets")}


def is_offline() -> bool:
    return any(os.environ.get(var, "").strip().lower() in ("1", "true", "yes", "on") for var in OFFLINE_VARIABLES)


def prefetch(config: dict, cache: Path, log: Callable[[str], None] = print) -> None:
    """Download everything `plan(config)` lists into `cache` (needs internet)."""
    os.environ.update(cache_environment(cache))  # before the Hugging Face libraries read them
    from huggingface_hub import list_repo_files, snapshot_download  # deferred: huggingface_hub: slow to import

    models, loads = plan(config)
    for model in models:
        files = list_repo_files(model.repo_id, revision=model.revision)
        # both formats are often published; torch needs one, and safetensors loads safely
        skipped = SKIPPED_WEIGHTS + (
            ["*.bin", "*.pt", "*.pth"] if any(f.endswith(".safetensors") for f in files) else []
        )
        path = snapshot_download(
            model.repo_id, revision=model.revision, cache_dir=cache / "hub", ignore_patterns=skipped
        )
        log(f"model {model.name}: {model.repo_id} -> {path}")
    if loads:
        import datasets  # deferred: datasets: seconds to import

        for load in loads:
            ds = datasets.load_dataset(
                load.path, load.config_name, split=load.split, revision=load.revision, cache_dir=str(cache / "datasets")
            )
            log(f"{load.describe()}: {len(ds)} rows")


def missing(config: dict, cache: Path) -> list[str]:
    """What `plan(config)` lists but `cache` lacks, found without any network access."""
    models, loads = plan(config)
    absent = [f"model {m.name} ({m.repo_id!r})" for m in models if not _model_cached(m, cache / "hub")]
    by_dataset: dict[tuple[str, str], list[str]] = {}
    for load in loads:
        if not _dataset_cached(load, cache / "datasets"):
            by_dataset.setdefault((load.name, load.path), []).append(load.part)
    for (name, path), parts in by_dataset.items():
        shown = ", ".join(parts[:3]) + (f", ... ({len(parts)} in all)" if len(parts) > 3 else "")
        absent.append(f"dataset {name} ({path!r}: {shown})")
    return absent


def check_offline(config: dict, config_path: str | os.PathLike, cache: str | os.PathLike | None = None) -> None:
    """With HF_HUB_OFFLINE=1 (or TRANSFORMERS_/HF_DATASETS_OFFLINE), fail at once when the
    cache lacks a model or dataset of the config; online, jobs download what they need."""
    if not is_offline():
        return
    cache = cache_dir(cache)
    absent = missing(config, cache)
    if absent:
        raise XltError(
            f"offline (HF_HUB_OFFLINE=1) and not in the Hugging Face cache {cache}: {'; '.join(absent)}. "
            f"Run `xlt prefetch --config {config_path}` where there is internet, with the same --cache"
        )


def _model_cached(model: HubModel, hub_cache: Path) -> bool:
    from huggingface_hub import try_to_load_from_cache  # deferred: huggingface_hub: slow to import

    config_file = try_to_load_from_cache(model.repo_id, "config.json", cache_dir=hub_cache, revision=model.revision)
    if not isinstance(config_file, str):
        return False
    snapshot = Path(config_file).parent
    return any(snapshot.glob("*.safetensors")) or any(snapshot.glob("*.bin"))


@contextlib.contextmanager
def _hub_offline():
    """The Hugging Face libraries in offline mode for a while, whatever the environment says: they
    read HF_HUB_OFFLINE once, at import, into these module attributes. Online, a dataset lookup
    would ask the hub first, and where it cannot be reached retry with backoff (23 s measured)."""
    import datasets.config  # deferred: datasets: seconds to import
    import huggingface_hub.constants  # deferred: huggingface_hub: slow to import

    modules = (datasets.config, huggingface_hub.constants)
    saved = [m.HF_HUB_OFFLINE for m in modules]
    for m in modules:
        m.HF_HUB_OFFLINE = True
    try:
        yield
    finally:
        for m, value in zip(modules, saved):
            m.HF_HUB_OFFLINE = value


def _dataset_cached(load: HubDataset, datasets_cache: Path) -> bool:
    # offline, the builder resolves from the local cache only, and fast
    import datasets

    try:
        with _hub_offline():
            builder = datasets.load_dataset_builder(
                load.path, load.config_name, revision=load.revision, cache_dir=str(datasets_cache)
            )
    except Exception:  # not cached: datasets raises ConnectionError / FileNotFoundError offline
        return False
    return Path(builder.cache_dir, "dataset_info.json").is_file()
