"""The benchmark code paths (`xlt bench`) on tiny sizes: the figures they print are computed
from what they measure (checked against independent counts), not hard-coded."""
from __future__ import annotations

import pytest
import torch

from xlt.bench import loop, mfu, workflow
from xlt.bench.shapes import Shape, random_classifier


pytestmark = pytest.mark.usefixtures("one_thread")  # timings and bitwise comparisons on one thread


def bert_classifier_params(v, h, layers, inter, positions=512, types=2, labels=3):
    """BERT parameter count by hand: embeddings, per-layer attention + FFN + 2 LayerNorms,
    pooler, classifier."""
    embeddings = v * h + positions * h + types * h + 2 * h
    layer = 4 * (h * h + h) + 2 * h + (h * inter + inter) + (inter * h + h) + 2 * h
    return embeddings + layers * layer + (h * h + h) + (h * labels + labels), embeddings


def test_flops_per_token_counts_parameters_like_the_bert_formula():
    shape = Shape(layers=2, hidden=32, heads=2, vocab=200)
    model = random_classifier(shape, seed=0)
    total, embeddings = bert_classifier_params(200, 32, 2, 128)
    flops = mfu.flops_per_token(model, seq_len=16)
    assert flops["params"] == total
    assert flops["params_non_embedding"] == total - embeddings
    assert flops["six_n"] == 6 * total
    assert flops["palm"] == 6 * (total - embeddings) + 12 * 2 * 32 * 16


def test_mbert_shape_has_mberts_parameter_count():
    # bert-base-multilingual-cased: 177.9M parameters in the encoder (+ pooler); here with a 3-way head
    total, _ = bert_classifier_params(119547, 768, 12, 3072)
    assert 177e6 < total < 179e6
    from transformers import BertForSequenceClassification

    from xlt.bench.shapes import bert_config

    with torch.device("meta"):  # shapes only, no 700 MB allocation
        model = BertForSequenceClassification(bert_config(mfu.SHAPES["mbert"]))
    config_total = sum(p.numel() for p in model.parameters())
    assert config_total == total


def test_peak_lookup_by_device_name():
    assert mfu.peak_for_device("NVIDIA A100-SXM4-80GB") == (312.0, "A100")
    assert mfu.peak_for_device("NVIDIA H100 80GB HBM3") == (mfu.PEAK_TFLOPS["H100-SXM"], "H100-SXM")
    assert mfu.peak_for_device("NVIDIA H100 PCIe") == (mfu.PEAK_TFLOPS["H100-PCIE"], "H100-PCIE")
    assert mfu.peak_for_device("NVIDIA H200") == (mfu.PEAK_TFLOPS["H200"], "H200")
    assert mfu.peak_for_device("Tesla T4") is None


def test_mfu_measurement_on_a_tiny_model_is_consistent():
    result = mfu.measure("tiny", seq_len=16, batch_size=4, steps=4, warmup=1, device="cpu", peak_tflops=0.1)
    assert result["timed_steps"] == 3
    assert result["tokens_per_s"] == pytest.approx(3 * 4 * 16 / result["wall_s"])
    assert result["mfu_6n"] == pytest.approx(6 * result["params"] * result["tokens_per_s"] / 0.1e12)
    assert 0 < result["mfu_palm"] < 1
    assert "n/a" not in mfu.table(result)
    no_peak = dict(result)
    for key in ("mfu_6n", "mfu_palm"):
        no_peak.pop(key)
    no_peak["peak_tflops"] = None
    assert "| n/a |" in mfu.table(no_peak)


@pytest.mark.parametrize("runner", loop.RUNNERS)
def test_loop_worker_trains_and_measures_both_runners(runner):
    cfg = loop.LoopConfig("t", "tiny", "tokens", batch_size=4, seq_len=16, steps=4, warmup=1, examples=16)
    result = loop.run_worker(cfg, runner, "cpu", threads=1, seed=1)
    assert result["timed_steps"] == 3
    assert result["samples_per_s"] == pytest.approx(3 * 4 / result["wall_s"])
    assert result["mean_batch_width"] == 16  # fixed-length token examples: no padding
    assert result["peak_mb"] >= 0 and result["rss_peak_mb"] >= result["rss_baseline_mb"]


def test_pad_collate_pads_right_with_zeros():
    batch = loop.pad_collate([{"input_ids": [5, 6, 7], "label": 1}, {"input_ids": [8], "label": 0}])
    assert batch["input_ids"].tolist() == [[5, 6, 7], [8, 0, 0]]
    assert batch["attention_mask"].tolist() == [[1, 1, 1], [1, 0, 0]]
    assert batch["labels"].tolist() == [1, 0]


def test_job_count_reads_snakemakes_job_stats():
    output = "Job stats:\njob        count\n-------  -------\nfinetune      14\ntotal         89\n\nReasons:"
    assert workflow.job_count(output) == 89
    assert workflow.job_count("nothing to be done") is None


def test_a_verb_builds_only_its_own_parser():
    import subprocess
    import sys

    from xlt.cli import COMMANDS, build_parser

    assert build_parser("aggregate")._subparsers._group_actions[0].choices.keys() == {"aggregate"}
    assert build_parser()._subparsers._group_actions[0].choices.keys() == COMMANDS.keys()
    # a light job's process never imports torch (every verb's module used to be imported)
    code = ("import sys; from xlt.cli import build_parser; build_parser('aggregate').parse_args(['aggregate', 'a.json', "
            "'--out', 'b.csv']); print('torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
