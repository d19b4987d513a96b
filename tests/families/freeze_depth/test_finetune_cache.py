"""`xlt finetune --cache-frozen-prefix` trains what the uncached run trains (dropout 0), and
falls back to uncached training where the prefix cannot be cached."""

from __future__ import annotations

import logging

import pytest
import torch
from helpers.numerics import adamw_drift, summation_order_bound
from safetensors.torch import load_file

from xlt.cli import main
from xlt.core.io import read_json, write_jsonl

LAYERS = 3
STEPS, LR = 6, 1e-3  # finetune()'s


def cached_drift(precision: str) -> tuple[float, float]:
    """(atol, rtol) between the cached and the uncached run's weights: the caching pass batches and pads
    otherwise than training, so the gradients' sums (forward and back through every layer and the head)
    may run in another order; AdamW's drift over finetune()'s steps."""
    gradient_error = summation_order_bound(2 * (LAYERS + 1), 64, bf16=precision == "bf16")
    return adamw_drift(STEPS, LR, gradient_error)


pytestmark = pytest.mark.usefixtures("one_thread")  # timings and bitwise comparisons on one thread


@pytest.fixture(scope="module")
def tiny_run_inputs(tmp_path_factory):
    """A random-init BERT classifier without dropout, a WordPiece tokenizer, demo NLI data."""
    from transformers import BertConfig, BertForSequenceClassification

    from xlt.core.models import save_model
    from xlt.data import demo
    from xlt.data.demo_model import build_tokenizer, demo_corpus

    root = tmp_path_factory.mktemp("finetune-cache")
    tokenizer = build_tokenizer(demo_corpus(["en"], 200, 1), 150)
    torch.manual_seed(0)
    config = BertConfig(
        vocab_size=len(tokenizer),
        hidden_size=32,
        num_hidden_layers=LAYERS,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=64,
        hidden_dropout_prob=0.0,
        attention_probs_dropout_prob=0.0,
        num_labels=3,
    )
    save_model(BertForSequenceClassification(config), tokenizer, root / "model")
    write_jsonl(root / "train.jsonl", demo.generate("nli", "en", "train", 40, 1))
    write_jsonl(root / "dev.jsonl", demo.generate("nli", "en", "dev", 12, 1))
    return root


def finetune(root, out, depth, *extra):
    argv = [
        "finetune",
        "--model",
        str(root / "model"),
        "--train",
        str(root / "train.jsonl"),
        "--dev",
        str(root / "dev.jsonl"),
        "--num-labels",
        "3",
        "--freeze-depth",
        str(depth),
        "--out",
        str(out),
        "--max-steps",
        str(STEPS),
        "--batch-size",
        "8",
        "--lr",
        str(LR),
        "--eval-every",
        "6",
        "--max-length",
        "32",
        "--device",
        "cpu",
        "--seed",
        "3",
        *extra,
    ]
    assert main(argv) == 0
    return load_file(out / "model" / "model.safetensors"), read_json(out / "train.json")["meta"]


@pytest.mark.numerics
@pytest.mark.parametrize("precision", ["fp32", "bf16"])
def test_cached_finetune_runs_the_prefix_at_the_training_precision(tiny_run_inputs, tmp_path, precision):
    """bf16 autocast on a CPU stands in for a bf16 GPU: the cached run's prefix computes under the
    same autocast as the uncached run's forward, so (dropout 0) both save the same parameters; the
    metrics record how the prefix ran as axes (table columns)."""
    flags = ("--precision", precision)
    plain, plain_meta = finetune(tiny_run_inputs, tmp_path / "plain", 1, *flags)
    cached, cached_meta = finetune(tiny_run_inputs, tmp_path / "cached", 1, "--cache-frozen-prefix", *flags)
    label = {"fp32": "fp32", "bf16": "bfloat16"}[precision]
    assert plain_meta["precision"] == cached_meta["precision"] == label
    assert plain_meta["axes"]["cache_frozen_prefix"] is False and cached_meta["axes"]["cache_frozen_prefix"] is True
    assert plain_meta["axes"]["prefix_precision"] == cached_meta["axes"]["prefix_precision"] == label
    atol, rtol = cached_drift(precision)  # measured bitwise in both precisions, AVX2 and default
    for name in plain:
        torch.testing.assert_close(cached[name], plain[name], atol=atol, rtol=rtol, msg=name)


@pytest.mark.numerics
@pytest.mark.parametrize("depth", [1, LAYERS])
def test_cached_finetune_saves_the_uncached_parameters(tiny_run_inputs, tmp_path, depth):
    initial = load_file(tiny_run_inputs / "model" / "model.safetensors")
    plain, plain_meta = finetune(tiny_run_inputs, tmp_path / "plain", depth)
    cached, cached_meta = finetune(tiny_run_inputs, tmp_path / "cached", depth, "--cache-frozen-prefix")
    assert not plain_meta["cache_frozen_prefix"] and cached_meta["cache_frozen_prefix"]
    assert cached_meta["cache_s"] > 0
    assert plain.keys() == cached.keys()
    atol, rtol = cached_drift("fp32")  # measured bitwise, AVX2 and default
    for name in plain:
        torch.testing.assert_close(cached[name], plain[name], atol=atol, rtol=rtol, msg=name)
    changed = [name for name in plain if not torch.equal(plain[name], initial[name])]
    # the layers above the depth and the head trained, the frozen prefix did not
    trained_layers = {f"bert.encoder.layer.{i}.output.dense.weight" for i in range(depth, LAYERS)}
    assert {"classifier.weight", "bert.pooler.dense.weight"} | trained_layers <= set(changed)
    frozen = ("bert.embeddings.",) + tuple(f"bert.encoder.layer.{i}." for i in range(depth))
    assert not any(name.startswith(frozen) for name in changed)
    assert plain_meta["best_dev_score"] == cached_meta["best_dev_score"]


def test_depth_minus_one_falls_back_to_uncached_training(tiny_run_inputs, tmp_path, caplog):
    with caplog.at_level(logging.INFO, logger="xlt.frozen_prefix.prefix_cache"):
        params, meta = finetune(tiny_run_inputs, tmp_path / "all", -1, "--cache-frozen-prefix")
    assert not meta["cache_frozen_prefix"]
    assert meta["axes"]["cache_frozen_prefix"] is False and meta["axes"]["prefix_precision"] == "fp32"
    assert "nothing is frozen" in caplog.text and "training uncached" in caplog.text
    initial = load_file(tiny_run_inputs / "model" / "model.safetensors")
    assert not torch.equal(
        params["bert.embeddings.word_embeddings.weight"], initial["bert.embeddings.word_embeddings.weight"]
    )


def test_wall_s_is_the_whole_job_not_the_metrics_files_lifetime(tiny_run_inputs, tmp_path, monkeypatch):
    """finetune used to report wall_s 0.001 for a job that trained for minutes: the clock
    started when the metrics file was created, after loading and training."""
    import time

    import xlt.families.freeze_depth.finetune as job

    load = job.load_classifier

    def slow_load(*args, **kwargs):
        time.sleep(0.5)  # stands in for loading a large model
        return load(*args, **kwargs)

    monkeypatch.setattr(job, "load_classifier", slow_load)
    _, meta = finetune(tiny_run_inputs, tmp_path / "timed", 1)
    assert meta["wall_s"] >= 0.5 + meta["train_wall_s"]


def test_the_freeze_depth_table_says_how_each_runs_prefix_ran(tiny_run_inputs, tmp_path):
    """finetune -> evaluate -> aggregate: the table has cache_frozen_prefix and prefix_precision
    columns, from the run's axes (depth -1 trains uncached even with --cache-frozen-prefix)."""
    from xlt.report.aggregate import aggregate

    evals = []
    for depth in (-1, 2):
        out = tmp_path / f"d{depth}"
        finetune(tiny_run_inputs, out, depth, "--cache-frozen-prefix")
        assert (
            main(
                [
                    "evaluate",
                    "--model",
                    str(out / "model"),
                    "--data",
                    str(tiny_run_inputs / "dev.jsonl"),
                    "--langs",
                    "en",
                    "--train-metrics",
                    str(out / "train.json"),
                    "--max-length",
                    "32",
                    "--device",
                    "cpu",
                    "--out",
                    str(out / "eval.json"),
                ]
            )
            == 0
        )
        evals.append(out / "eval.json")
    table = aggregate(evals, resamples=100)
    assert {"cache_frozen_prefix", "prefix_precision"} <= set(table.columns)
    runs = table.drop_duplicates("run_id")
    assert dict(zip(runs.freeze_depth, runs.cache_frozen_prefix)) == {-1: False, 2: True}
    assert set(runs.prefix_precision) == {"fp32"}
