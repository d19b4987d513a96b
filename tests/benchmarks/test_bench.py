"""The benchmark code paths (benchmarks/bench.py and the modules next to it) on tiny sizes: the
figures they print are computed from what they measure (checked against independent counts),
not hard-coded. The benchmarks are scripts, not part of the package: their modules import
each other as plain modules, so this test puts <repo>/benchmarks on sys.path (not in a
conftest.py: a second module named `conftest` would shadow tests/conftest.py's helpers)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))

import bench  # noqa: E402
import loop  # noqa: E402
import mfu  # noqa: E402
from shapes import Shape, bert_config, random_classifier  # noqa: E402

import workflow  # noqa: E402

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


def test_bench_script_has_a_flag_per_benchmark_and_the_old_verbs_defaults():
    """benchmarks/bench.py replaces the `xlt bench` verb: one flag per benchmark, --all, the old
    default selection, the MFU options; and `xlt` no longer has a bench verb."""
    from xlt.cli import verbs

    parser = bench.build_parser()
    flags = {a.dest: a.option_strings for a in parser._actions}
    for section in bench.SECTIONS:
        assert flags[section] == ["--" + section.replace("_", "-")]
    assert bench.chosen_sections(parser.parse_args([])) == {"loop", "prefix_cache", "dry_run"}
    assert bench.chosen_sections(parser.parse_args(["--all"])) == set(bench.SECTIONS)
    assert bench.chosen_sections(parser.parse_args(["--mfu", "--tests"])) == {"mfu", "tests"}
    args = parser.parse_args(["--demo", "--demo-keep", "out", "--mfu-shape", "tiny", "--peak-tflops", "1"])
    assert (args.demo_keep, args.mfu_shape, args.peak_tflops) == ("out", "tiny", 1.0)
    assert bench.REPO == BENCHMARKS.parent and (bench.REPO / "Snakefile").is_file()
    assert "bench" not in verbs()


def test_bench_script_help_runs_without_importing_torch():
    """`python benchmarks/bench.py --help` works as a plain script, and building its parser
    imports no torch (the heavy imports wait for the benchmark that needs them)."""
    out = subprocess.run([sys.executable, str(BENCHMARKS / "bench.py"), "--help"], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert "--prefix-cache" in out.stdout and "--demo-keep" in out.stdout
    code = (
        f"import sys; sys.path.insert(0, {str(BENCHMARKS)!r}); import bench; bench.build_parser().parse_args([]); "
        "print('torch' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_loop_spawns_its_workers_from_the_script_file(monkeypatch):
    """Workers run benchmarks/loop.py itself (not a module of the package), importing <repo>/src."""
    calls = []

    def fake_run(cmd, env, **kwargs):
        calls.append((cmd, env))
        return subprocess.CompletedProcess(cmd, 0, stdout='{"ok": 1}\n', stderr="")

    monkeypatch.setattr(loop.subprocess, "run", fake_run)
    assert loop.spawn(loop.CONFIGS["tiny"], "ours", "cpu", 1, 1) == {"ok": 1}
    ((cmd, env),) = calls
    assert cmd[:3] == [sys.executable, str(BENCHMARKS / "loop.py"), "--worker"]
    assert env["PYTHONPATH"].split(os.pathsep)[0] == str(BENCHMARKS.parent / "src")


def test_sparse_mlm_head_benchmark_counts_the_head_on_the_masked_rows_only():
    """benchmarks/sparse_mlm_head.py on a tiny shape: the FLOPs torch counts differ between the
    full and the sparse path by exactly the head's matrix products on the unmasked rows (forward
    for a perplexity batch; forward, input and weight gradients for a training step), and the
    losses agree."""
    import sparse_mlm_head

    args = [
        "--hidden",
        "16",
        "--layers",
        "1",
        "--heads",
        "2",
        "--vocab",
        "300",
        "--seq-len",
        "16",
        "--batch-size",
        "4",
        "--eval-batch-size",
        "6",
        "--steps",
        "1",
        "--warmup",
        "0",
        "--threads",
        "1",
    ]
    lines = []
    result = sparse_mlm_head.main(args, echo=lines.append)
    full, sparse, share = result["full"], result["sparse"], result["masked_share"]
    head = 16 * 16 + 16 * 300  # transform + vocabulary projection, multiply-adds a row
    unmasked_train, unmasked_eval = round(4 * 16 * (1 - share["train"])), round(6 * 16 * (1 - share["eval"]))
    assert 0 < unmasked_train < 4 * 16 and 0 < unmasked_eval < 6 * 16
    assert full["eval_flops"] - sparse["eval_flops"] == 2 * unmasked_eval * head
    assert full["train_flops"] - sparse["train_flops"] == 6 * unmasked_train * head
    assert full["train_logits"] == 4 * 16 * 300 and sparse["train_logits"] == round(4 * 16 * share["train"]) * 300
    assert sparse["first_loss"] == pytest.approx(full["first_loss"], rel=1e-5)
    assert sparse["eval_loss"] == pytest.approx(full["eval_loss"], rel=1e-5)
    assert "| perplexity batch, GFLOP |" in "\n".join(lines)
