"""xlt prefetch: what a config needs from the hub, downloading it into the project cache,
and the offline check that stops a run before any job when something was never fetched."""

from __future__ import annotations

import os
import subprocess
import sys
import types
from pathlib import Path

import pytest
import yaml

from xlt.cli import main as xlt_main
from xlt.core import prefetch, settings
from xlt.core.errors import XltError

REPO = Path(__file__).resolve().parents[2]
HUB_XNLI = {
    "source": "hf",
    "task": "nli",
    "path": "facebook/xnli",
    "name": "{lang}",
    "languages": ["en", "fr", "de"],
    "splits": {"train": ["en"], "dev": ["en"], "test": "all"},
    "split_names": {"dev": "validation"},
}


def _config(**models) -> dict:
    config = yaml.safe_load((REPO / "config" / "tiny.yaml").read_text())
    config["models"].update(models)
    return config


def test_plan_lists_hub_models_and_each_dataset_split_once():
    config = {
        "models": {
            "mbert": {"source": "hub", "path": "bert-base-multilingual-cased", "revision": "v1"},
            "demo": {"source": "demo"},
            "mine": {"source": "local", "path": "/m"},
        },
        "datasets": {
            "xnli": HUB_XNLI,
            "sst": {
                "source": "hf",
                "task": "sentiment",
                "path": "stanfordnlp/sst2",
                "languages": ["en", "de"],
                "splits": ["train"],
            },  # no config name: one load serves both languages
            "demo-nli": {"source": "demo", "task": "nli"},
        },
    }
    models, loads = prefetch.plan(config)
    assert models == [prefetch.HubModel("mbert", "bert-base-multilingual-cased", "v1")]
    assert [(d.path, d.config_name, d.split) for d in loads] == [
        ("facebook/xnli", "en", "train"),
        ("facebook/xnli", "en", "validation"),
        ("facebook/xnli", "en", "test"),
        ("facebook/xnli", "fr", "test"),
        ("facebook/xnli", "de", "test"),
        ("stanfordnlp/sst2", None, "train"),
    ]


def test_offline_check_fails_fast_naming_the_prefetch_command(tmp_path, monkeypatch, capsys):
    config_file = tmp_path / "run.yaml"
    config_file.write_text(
        yaml.safe_dump(_config(hubby={"source": "hub", "path": "xlt-test/not-cached-model", "layers": 2}))
    )
    config = settings.load(config_file)  # what the workflow checks: the validated config
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("TRANSFORMERS_OFFLINE", raising=False)
    monkeypatch.delenv("HF_DATASETS_OFFLINE", raising=False)
    prefetch.check_offline(config, config_file, tmp_path / "cache")  # online: jobs download, nothing to check

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(
        XltError, match=r"model hubby \('xlt-test/not-cached-model'\).*Run `xlt prefetch --config .*run\.yaml`"
    ):
        prefetch.check_offline(config, config_file, tmp_path / "cache")
    # the same check from the command line: one line, exit status 2
    assert xlt_main(["prefetch", "--config", str(config_file), "--cache", str(tmp_path / "cache"), "--check"]) == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert err.startswith("xlt prefetch: error: offline") and f"xlt prefetch --config {config_file}" in err


def _fake_cached_model(hub: Path, repo_id: str, weights: bool) -> None:
    # Hugging Face's cache layout: models--org--name/refs/main -> snapshots/<commit>/
    repo = hub / ("models--" + repo_id.replace("/", "--"))
    snapshot = repo / "snapshots" / ("0" * 40)
    snapshot.mkdir(parents=True)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text("0" * 40)
    (snapshot / "config.json").write_text("{}")
    if weights:
        (snapshot / "model.safetensors").write_bytes(b"x")


def test_cached_model_passes_and_one_without_weights_does_not(tmp_path):
    _fake_cached_model(tmp_path / "hub", "org/complete", weights=True)
    _fake_cached_model(tmp_path / "hub", "org/config-only", weights=False)
    config = {
        "models": {"a": {"source": "hub", "path": "org/complete"}, "b": {"source": "hub", "path": "org/config-only"}}
    }
    assert prefetch.missing(config, tmp_path) == ["model b ('org/config-only')"]


def test_prefetch_downloads_into_the_cache(tmp_path, monkeypatch):
    import huggingface_hub

    calls = []
    monkeypatch.setattr(
        huggingface_hub,
        "list_repo_files",
        lambda repo, revision=None: ["config.json", "model.safetensors", "pytorch_model.bin", "tf_model.h5"],
    )
    monkeypatch.setattr(
        huggingface_hub, "snapshot_download", lambda repo, **kw: calls.append(("model", repo, kw)) or "/snap"
    )
    fake_datasets = types.SimpleNamespace(load_dataset=lambda *a, **kw: calls.append(("data", a, kw)) or [1, 2])
    monkeypatch.setitem(sys.modules, "datasets", fake_datasets)
    monkeypatch.setenv("HF_HOME", "/elsewhere")
    config = {
        "models": {"mbert": {"source": "hub", "path": "bert-base-multilingual-cased"}},
        "datasets": {"xnli": {**HUB_XNLI, "languages": ["en"], "splits": {"test": ["en"]}}},
    }
    prefetch.prefetch(config, tmp_path, log=lambda line: None)
    # where the jobs will look; HF_HOME (the user's token) untouched
    assert (os.environ["HF_HUB_CACHE"], os.environ["HF_DATASETS_CACHE"]) == (
        str(tmp_path / "hub"),
        str(tmp_path / "datasets"),
    )
    assert os.environ["HF_HOME"] == "/elsewhere"
    (kind, repo, kw), (kind2, args, kw2) = calls
    assert (kind, repo, kw["cache_dir"]) == ("model", "bert-base-multilingual-cased", tmp_path / "hub")
    assert "*.bin" in kw["ignore_patterns"] and "*.h5" in kw["ignore_patterns"]  # safetensors is enough
    assert (kind2, args, kw2["split"], kw2["cache_dir"]) == (
        "data",
        ("facebook/xnli", "en"),
        "test",
        str(tmp_path / "datasets"),
    )


def test_offline_check_names_missing_datasets_from_the_command_line(tmp_path):
    config = _config()
    config["datasets"]["xnli"] = HUB_XNLI
    config_file = tmp_path / "run.yaml"
    config_file.write_text(yaml.safe_dump(config))
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "xlt.cli",
            "prefetch",
            "--config",
            str(config_file),
            "--check",
            "--cache",
            str(tmp_path / "cache"),
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert proc.returncode == 2, proc.stderr
    # en/train, en/validation and the test split of en, fr, de (in the order of the written YAML)
    assert "dataset xnli ('facebook/xnli': " in proc.stderr and "... (5 in all))" in proc.stderr
    assert f"xlt prefetch --config {config_file}" in proc.stderr


def test_missing_asks_no_network_even_online(tmp_path, monkeypatch):
    """`missing` reads the cache only: online (no offline variable), a dataset lookup would ask the
    hub and retry with backoff where it cannot be reached (23 s seen) before saying it is absent."""
    import socket

    import datasets.config
    import huggingface_hub.constants

    for var in prefetch.OFFLINE_VARIABLES:
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setattr(datasets.config, "HF_HUB_OFFLINE", False)
    attempts = []

    def no_network(*args, **kwargs):
        attempts.append(args)
        raise OSError("this test has no network")

    monkeypatch.setattr(socket, "getaddrinfo", no_network)  # a lookup of the hub's name comes first
    monkeypatch.setattr(socket.socket, "connect", no_network)
    config = {"models": {}, "datasets": {"xnli": HUB_XNLI}}
    assert prefetch.missing(config, tmp_path) == [
        "dataset xnli ('facebook/xnli': en/train, en/validation, en/test, ... (5 in all))"
    ]
    assert attempts == []
    assert huggingface_hub.constants.HF_HUB_OFFLINE is False and datasets.config.HF_HUB_OFFLINE is False
