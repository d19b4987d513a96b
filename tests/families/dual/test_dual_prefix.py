"""Frozen-prefix caching for the dual encoder: `xlt train-dual --cache-frozen-prefix` trains
what the uncached run with its frozen prefix in eval mode trains (bitwise at depth 0; deeper, up to
the summation order of the prefix pass, within the bound the arithmetic allows), `--prefix-states`
reads the same states from the sweep's store (`xlt dual-prefix-states`, bitwise with float32
storage), and bad input stops before training."""

from __future__ import annotations

import json

import pytest
import torch
from safetensors.torch import load_file

from xlt.cli import main
from xlt.core.io import read_json
from xlt.data import demo

LAYERS = 3

pytestmark = pytest.mark.usefixtures("one_thread")  # bitwise comparisons on one thread


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    """A random-init 3-layer BERT encoder with dropout 0.1, a WordPiece tokenizer, demo bitext in
    two languages (multi-way parallel: the English side repeats across languages)."""
    from transformers import BertConfig, BertModel

    from xlt.core.models import save_model
    from xlt.data.demo_model import build_tokenizer, demo_corpus

    root = tmp_path_factory.mktemp("dual-prefix")
    tokenizer = build_tokenizer(demo_corpus(["mixed"], 200, 1), 200)
    torch.manual_seed(0)
    config = BertConfig(
        vocab_size=len(tokenizer),
        hidden_size=32,
        num_hidden_layers=LAYERS,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=64,
    )  # dropout 0.1: the default
    save_model(BertModel(config), tokenizer, root / "model")
    for lang in ("qaa", "qac"):
        for split, size in (("train", 24), ("dev", 8)):
            path = root / lang / f"{split}.jsonl"
            path.parent.mkdir(exist_ok=True)
            path.write_text("".join(json.dumps(r) + "\n" for r in demo.generate("bitext", lang, split, size, 13)))
    return root


def files(root, split):
    return [str(root / lang / f"{split}.jsonl") for lang in ("qaa", "qac")]


def train_argv(root, out, depth, *extra, max_length=32):
    argv = [
        "train-dual",
        "--model",
        str(root / "model"),
        "--freeze-depth",
        str(depth),
        "--max-steps",
        "4",
        "--batch-size",
        "8",
        "--lr",
        "2e-3",
        "--eval-every",
        "2",
        "--log-every",
        "1",
        "--max-length",
        str(max_length),
        "--device",
        "cpu",
        "--seed",
        "3",
        "--out",
        str(out),
        *extra,
    ]
    for f in files(root, "train"):
        argv += ["--train", f]
    return argv + [arg for f in files(root, "dev") for arg in ("--dev", f)]


def train_dual(root, out, depth, *extra):
    assert main(train_argv(root, out, depth, *extra)) == 0
    return load_file(out / "model" / "model.safetensors"), read_json(out / "train.json")["meta"]


def store(root, out, *extra, depths="0,2", train=None):
    argv = [
        "dual-prefix-states",
        "--model",
        str(root / "model"),
        f"--depths={depths}",
        "--max-length",
        "32",
        "--batch-size",
        "8",
        "--device",
        "cpu",
        "--max-gib",
        "1",
        "--out",
        str(out),
        *extra,
    ]
    return main(argv + [arg for f in (train or files(root, "train")) for arg in ("--train", f)])


def eval_mode_prefix(model, depth):
    """The uncached reference: the frozen modules run in eval mode (cached mode's semantics)."""
    from xlt.core.models import encoder_parts

    def to_eval(module, _inputs):
        module.eval()

    parts = encoder_parts(model.encoder)
    for module in [parts.embeddings, *parts.layers[:depth]]:
        module.register_forward_pre_hook(to_eval)


def library_run(root, depth, mode, precision="auto"):
    """train_dual on the tiny inputs: uncached with the prefix in train or eval mode, or cached
    (`precision`: TrainArgs.precision; auto is fp32 on a CPU)."""
    from xlt.core.freezing import freeze
    from xlt.core.models import load_tokenizer
    from xlt.core.sentence_encoder import SentenceEncoder
    from xlt.core.train_args import TrainArgs
    from xlt.data.bitext_files import load_bitexts
    from xlt.families.dual.dual_encoder import DualSettings, pairs_from_bitexts, train_dual
    from xlt.families.dual.prefix import prepare_cached_dual

    tokenizer = load_tokenizer(str(root / "model"))
    model = SentenceEncoder.from_pretrained(str(root / "model"), pooling="mean", layer=-1)
    freeze(model.encoder, depth)
    bitexts = {split: load_bitexts(files(root, split), ["qaa", "qac"]) for split in ("train", "dev")}
    args = TrainArgs(
        max_steps=4, batch_size=8, lr=2e-3, max_length=32, eval_every=2, device="cpu", seed=3, precision=precision
    )
    cached = None
    if mode == "cached":
        cached = prepare_cached_dual(
            model, depth, pairs_from_bitexts(bitexts["train"]), tokenizer, 32, 8, "cpu", precision=precision
        )
    elif mode == "eval-prefix":
        eval_mode_prefix(model, depth)
    losses = []
    result = train_dual(model, tokenizer, bitexts["train"], bitexts["dev"], DualSettings(), args, losses, None, cached)
    return model, losses, result


FP32_EPS = 2.0**-24  # unit roundoff of fp32
BF16_SPACING = 2.0**-8  # relative distance of neighbouring bf16 numbers (8 significant bits)


def loss_tolerance_fp32(depth: int, steps: int) -> float:
    """How far the cached and the eval-mode uncached losses may drift apart in fp32, to first order.

    The prefix pass batches and pads distinct sentences otherwise than training does, so its sums run in
    another order: a sum of n products then differs by at most n * u relative to the magnitude of its
    terms (Higham, gamma_n), n = 64 the longest sum in a layer (the intermediate size), u = 2**-24; post-LN
    layers renormalise, so each frozen layer adds about that: eps = depth * 64 * u. The pooled vectors carry
    it to the cosines (|d cos| <= 2 eps), the logits are scale * cos (DualSettings.scale = 10), and the loss,
    two log-softmax directions each moving by at most 2 max |d logit|, by <= 4 * scale * 2 eps. Every step
    trained adds one such error at most (to first order), so after `steps` steps the bound is steps times it."""
    eps = depth * 64 * FP32_EPS
    return steps * 4 * 10.0 * 2 * eps


@pytest.mark.numerics
def test_cached_training_at_depth_0_is_the_eval_mode_prefix_run_bitwise(inputs):
    """Below boundary 0 every operation is per token (embedding lookups, their sum, LayerNorm over the
    hidden axis), so however the pass batches and pads, each value is computed by the same arithmetic:
    the same code path, so exactly equal (on any CPU)."""
    reference, reference_losses, reference_result = library_run(inputs, 0, "eval-prefix")
    cached, cached_losses, cached_result = library_run(inputs, 0, "cached")
    assert cached_losses == reference_losses
    assert cached_result.history == reference_result.history
    for (name, param), other in zip(cached.named_parameters(), reference.parameters()):
        assert torch.equal(param, other), name
    # the comparison can fail: dropout in the embeddings (plain uncached training) is another run
    _, plain_losses, _ = library_run(inputs, 0, "plain")
    assert plain_losses != reference_losses


@pytest.mark.numerics
def test_cached_training_at_depth_2_is_the_eval_mode_prefix_run_up_to_summation_order(inputs):
    """Two frozen layers hold sums whose order depends on the batch's shape and on the kernels torch
    picks for the CPU (AVX-512, AVX2 or none): the runs agree within the bound the arithmetic allows.
    Weights are not compared: AdamW moves a weight whose gradient is near zero by about lr either way
    under any perturbation, so the trained models are compared as functions (losses, dev scores)."""
    _, reference_losses, reference_result = library_run(inputs, 2, "eval-prefix")
    _, cached_losses, cached_result = library_run(inputs, 2, "cached")
    tolerance = loss_tolerance_fp32(depth=2, steps=len(reference_losses))  # 2.4e-3 after 4 steps
    torch.testing.assert_close(cached_losses, reference_losses, atol=tolerance, rtol=0)
    assert [h["step"] for h in cached_result.history] == [h["step"] for h in reference_result.history]
    for ours, theirs in zip(cached_result.history, reference_result.history):
        torch.testing.assert_close(ours.pop("loss"), theirs.pop("loss"), atol=tolerance, rtol=0)
        # retrieval ranks: the cosines move by <= 2 eps (1.5e-5), so a rank flips only at a tie that close
        assert ours == theirs
    # the bound can fail: dropout in the frozen layers (plain uncached training) is another run, at every step
    _, plain_losses, _ = library_run(inputs, 2, "plain")
    assert min(abs(a - b) for a, b in zip(plain_losses, reference_losses)) > tolerance


@pytest.mark.numerics
def test_cached_training_under_bf16_autocast_is_the_eval_mode_prefix_run(inputs):
    """bf16 autocast on a CPU stands in for a bf16 GPU: the cache runs the prefix under the
    training's autocast, so the cached run is the uncached bf16 run with its prefix in eval mode, up
    to bf16's resolution. Under autocast every matrix product is rounded to 8 significant bits, so
    two paths whose fp32 accumulators differ in the last bits (summation order, as in fp32) can round
    to neighbouring bf16 numbers: 2**-8 apart relative. The loss is a mean over the batch of such
    rounded logits' log-softmax, so its relative resolution is that spacing: the runs agree within one
    bf16 spacing of the loss at every step (measured: equal, or 4.7e-4 relative on AVX2)."""
    _, reference_losses, reference_result = library_run(inputs, 2, "eval-prefix", "bf16")
    _, cached_losses, cached_result = library_run(inputs, 2, "cached", "bf16")
    assert cached_result.precision == reference_result.precision == "bfloat16"
    torch.testing.assert_close(cached_losses, reference_losses, rtol=BF16_SPACING, atol=0)
    # the bound can fail: dropout in the frozen layers moves the loss by more than a bf16 spacing
    _, plain_losses, _ = library_run(inputs, 2, "plain", "bf16")
    assert max(abs(a - b) / abs(b) for a, b in zip(plain_losses, reference_losses)) > BF16_SPACING


def test_cli_cache_and_shared_store_train_the_same_top(inputs, tmp_path):
    from xlt.frozen_prefix.prefix_store import hidden_file

    initial = load_file(inputs / "model" / "model.safetensors")
    assert store(inputs, tmp_path / "store", "--storage-dtype", "float32") == 0
    meta = read_json(tmp_path / "store" / "meta.json")
    assert meta["depths"] == [0, 2] and meta["family"] == "dual" and meta["storage_dtype"] == "float32"
    # both sides of 48 pairs; the English side repeats across the two languages
    assert 24 + 24 <= meta["examples"] < 2 * 48
    assert sorted(p.name for p in (tmp_path / "store").iterdir()) == sorted(
        ["meta.json", "offsets.npy", "mask.npy", hidden_file(0), hidden_file(2)]
    )  # no labels

    per_job, per_job_meta = train_dual(inputs, tmp_path / "per-job", 2, "--cache-frozen-prefix")
    shared, shared_meta = train_dual(inputs, tmp_path / "shared", 2, "--prefix-states", str(tmp_path / "store"))
    assert per_job.keys() == shared.keys()
    for name in per_job:
        assert torch.equal(shared[name], per_job[name]), name
    assert per_job_meta["cache_frozen_prefix"] and per_job_meta["cache_s"] > 0
    assert shared_meta["prefix_states"] == str(tmp_path / "store")
    # how the prefix ran, as table columns; the store's precision is the run's (fp32 on a CPU)
    assert meta["precision"] == "fp32"
    for run_meta in (per_job_meta, shared_meta):
        assert (run_meta["axes"]["cache_frozen_prefix"], run_meta["axes"]["prefix_precision"]) == (True, "fp32")
    assert shared_meta["loss_curve"] == per_job_meta["loss_curve"] and shared_meta["history"] == per_job_meta["history"]
    # the layer above the boundary trained, the frozen prefix did not
    changed = {name for name in per_job if not torch.equal(per_job[name], initial[name])}
    assert "encoder.layer.2.output.dense.weight" in changed
    assert not any(name.startswith(("embeddings.", "encoder.layer.0.", "encoder.layer.1.")) for name in changed)


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--freeze-depth", "-1", "--cache-frozen-prefix"], "freezes nothing (the embeddings train)"),
        (["--freeze-depth", "-1", "--prefix-states", "STORE"], "freezes nothing (the embeddings train)"),
        (["--freeze-depth", "1", "--prefix-states", "STORE"], "holds freeze depths [0, 2], not 1"),
        (["--max-length", "16", "--prefix-states", "STORE"], "max_length = 32, this run has 16"),
        (["--prefix-states", "OTHER"], "sentences_sha256"),
        (["--prefix-states", "NOWHERE"], "not a prefix-state store"),
        (["--precision", "bf16", "--prefix-states", "STORE"], "precision = 'fp32', this run has 'bfloat16'"),
    ],
)
def test_bad_cache_input_stops_before_training(inputs, tmp_path_factory, tmp_path, capsys, extra, message):
    stores = tmp_path_factory.getbasetemp() / "dual-stores"
    if not stores.exists():
        assert store(inputs, stores / "store") == 0
        assert store(inputs, stores / "other", train=files(inputs, "train")[::-1]) == 0  # another sentence order
    names = {"STORE": stores / "store", "OTHER": stores / "other", "NOWHERE": tmp_path / "none"}
    extra = [str(names.get(arg, arg)) for arg in extra]
    assert main(train_argv(inputs, tmp_path / "run", 2) + extra) == 2  # the last --freeze-depth/--max-length wins
    assert message in capsys.readouterr().err
    assert not (tmp_path / "run" / "model").exists() and not (tmp_path / "run" / "checkpoint").exists()


def test_store_refuses_bad_depths_and_its_size_bound_before_the_model_runs(inputs, tmp_path, capsys):
    assert store(inputs, tmp_path / "a", depths="-1,2") == 2
    assert "depths >= 0 only" in capsys.readouterr().err
    assert store(inputs, tmp_path / "b", depths=str(LAYERS)) == 2
    assert "leaves nothing to train" in capsys.readouterr().err
    assert store(inputs, tmp_path / "c", "--max-gib", "0.000001") == 2
    err = capsys.readouterr().err
    assert "dual.prefix_states.max_gib" in err and "dual.freeze_depths" in err
    assert not any((tmp_path / name).exists() for name in "abc")
