"""`xlt prefix-states` (one frozen-prefix pass for the whole sweep) and `xlt finetune
--prefix-states`: a run reading the shared store trains what `--cache-frozen-prefix` trains
(bitwise with float32 storage), refuses a store written for other settings, and the store
refuses to exceed its size bound before the model loads."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from safetensors.torch import load_file

from xlt.cli import main
from xlt.core.io import read_json, write_jsonl

LAYERS = 3

pytestmark = pytest.mark.usefixtures("one_thread")


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    """A random-init BERT classifier with dropout 0.1, a WordPiece tokenizer, demo NLI data."""
    from transformers import BertConfig, BertForSequenceClassification

    from xlt.core.models import save_model
    from xlt.data import demo
    from xlt.data.demo_model import build_tokenizer, demo_corpus

    root = tmp_path_factory.mktemp("prefix-states")
    tokenizer = build_tokenizer(demo_corpus(["en"], 200, 1), 150)
    torch.manual_seed(0)
    config = BertConfig(
        vocab_size=len(tokenizer),
        hidden_size=32,
        num_hidden_layers=LAYERS,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=64,
        num_labels=3,
    )  # dropout 0.1: the default
    save_model(BertForSequenceClassification(config), tokenizer, root / "model")
    write_jsonl(root / "train.jsonl", demo.generate("nli", "en", "train", 40, 1))
    write_jsonl(root / "dev.jsonl", demo.generate("nli", "en", "dev", 12, 1))
    return root


def common(root, max_length=32):
    return [
        "--model",
        str(root / "model"),
        "--num-labels",
        "3",
        "--train",
        str(root / "train.jsonl"),
        "--max-length",
        str(max_length),
        "--batch-size",
        "8",
        "--device",
        "cpu",
    ]


def prefix_states(root, out, *extra, depths="0,1,3", max_gib="1"):
    return main(["prefix-states", *common(root), f"--depths={depths}", "--max-gib", max_gib, "--out", str(out), *extra])


def finetune(root, out, depth, *extra, max_length=32):
    argv = [
        "finetune",
        *common(root, max_length),
        "--dev",
        str(root / "dev.jsonl"),
        "--freeze-depth",
        str(depth),
        "--out",
        str(out),
        "--max-steps",
        "6",
        "--lr",
        "1e-3",
        "--eval-every",
        "3",
        "--seed",
        "3",
        *extra,
    ]
    assert main(argv) == 0
    return load_file(out / "model" / "model.safetensors"), read_json(out / "train.json")["meta"]


def test_finetune_from_a_float32_store_is_the_per_job_cache_bitwise(inputs, tmp_path):
    assert prefix_states(inputs, tmp_path / "store", "--storage-dtype", "float32") == 0
    meta = read_json(tmp_path / "store" / "meta.json")
    assert meta["depths"] == [0, 1, 3] and meta["storage_dtype"] == "float32" and meta["examples"] == 40
    initial = load_file(inputs / "model" / "model.safetensors")
    for depth in (1, LAYERS):
        shared, shared_meta = finetune(
            inputs, tmp_path / f"shared{depth}", depth, "--prefix-states", str(tmp_path / "store")
        )
        per_job, per_job_meta = finetune(inputs, tmp_path / f"per-job{depth}", depth, "--cache-frozen-prefix")
        assert shared.keys() == per_job.keys()
        for name in shared:
            assert torch.equal(shared[name], per_job[name]), name
        assert shared_meta["cache_frozen_prefix"] and shared_meta["prefix_states"] == str(tmp_path / "store")
        assert shared_meta["best_dev_score"] == per_job_meta["best_dev_score"]
        assert shared_meta["history"] == per_job_meta["history"]
        assert not torch.equal(shared["classifier.weight"], initial["classifier.weight"])


def test_a_store_is_computed_at_the_finetune_jobs_precision_and_refused_at_another(inputs, tmp_path, capsys):
    """bf16 autocast on a CPU stands in for a bf16 GPU: the store's pass runs under the autocast of
    its --precision, a finetune job of another precision refuses it, one of the same precision
    trains bitwise what its own per-job cache trains."""
    assert (
        prefix_states(inputs, tmp_path / "store", "--storage-dtype", "float32", "--precision", "bf16", depths="1") == 0
    )
    assert read_json(tmp_path / "store" / "meta.json")["precision"] == "bfloat16"
    argv = [
        "finetune",
        *common(inputs),
        "--dev",
        str(inputs / "dev.jsonl"),
        "--freeze-depth",
        "1",
        "--out",
        str(tmp_path / "fp32"),
        "--prefix-states",
        str(tmp_path / "store"),
        "--precision",
        "fp32",
    ]
    assert main(argv) == 2
    assert "was written for precision = 'bfloat16', this run has 'fp32'" in capsys.readouterr().err
    shared, shared_meta = finetune(
        inputs, tmp_path / "shared", 1, "--prefix-states", str(tmp_path / "store"), "--precision", "bf16"
    )
    per_job, per_job_meta = finetune(inputs, tmp_path / "per-job", 1, "--cache-frozen-prefix", "--precision", "bf16")
    for name in shared:
        assert torch.equal(shared[name], per_job[name]), name
    assert shared_meta["axes"]["prefix_precision"] == per_job_meta["axes"]["prefix_precision"] == "bfloat16"
    assert shared_meta["axes"]["cache_frozen_prefix"] is True


def test_a_float16_store_halves_the_disk_and_trains_the_top_only(inputs, tmp_path):
    assert prefix_states(inputs, tmp_path / "store", depths="2") == 0  # float16 is the default
    stored = np.load(tmp_path / "store" / "hidden_depth02.npy")
    assert stored.dtype == np.float16 and stored.shape[1] == 32
    params, meta = finetune(inputs, tmp_path / "run", 2, "--prefix-states", str(tmp_path / "store"))
    assert meta["cache_frozen_prefix"]
    initial = load_file(inputs / "model" / "model.safetensors")
    frozen = ("bert.embeddings.", "bert.encoder.layer.0.", "bert.encoder.layer.1.")
    for name in params:
        assert torch.equal(params[name], initial[name]) == name.startswith(frozen), name


def test_the_size_bound_stops_before_the_model_loads(inputs, tmp_path, capsys, monkeypatch):
    import xlt.families.freeze_depth.prefix_states as job

    def no_loading(*args, **kwargs):
        raise AssertionError("the model loaded before the size check")

    monkeypatch.setattr(job, "load_classifier", no_loading)
    assert prefix_states(inputs, tmp_path / "store", max_gib="0.00001") == 2
    error = capsys.readouterr().err
    assert "xlt prefix-states: error: the shared prefix states would take" in error
    assert "more than freeze_depth.prefix_states.max_gib = 1e-05" in error
    assert "raise freeze_depth.prefix_states.max_gib" in error
    assert not (tmp_path / "store").exists()


def test_a_store_for_other_settings_or_depths_is_refused(inputs, tmp_path, capsys):
    assert prefix_states(inputs, tmp_path / "store", depths="1") == 0
    argv = [
        "finetune",
        *common(inputs, 24),
        "--dev",
        str(inputs / "dev.jsonl"),
        "--freeze-depth",
        "1",
        "--out",
        str(tmp_path / "run"),
        "--max-steps",
        "2",
        "--prefix-states",
        str(tmp_path / "store"),
    ]
    assert main(argv) == 2
    assert "was written for max_length = 32, this run has 24" in capsys.readouterr().err
    argv[argv.index("24")], argv[argv.index("--freeze-depth") + 1] = "32", "2"
    assert main(argv) == 2
    assert "holds freeze depths [1], not 2" in capsys.readouterr().err
    assert prefix_states(inputs, tmp_path / "bad", depths="-1,2") == 2
    assert "store depths >= 0 only" in capsys.readouterr().err
