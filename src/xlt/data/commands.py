"""Verbs of the data layer: the offline demo encoder, preparing a dataset, and prefetching a config's hub
models and datasets."""

from __future__ import annotations

import json

from xlt.core.verbs import DATA, Verb, add_config_argument, add_run_arguments

GROUP = DATA


def _build_demo_model_arguments(p):
    p.add_argument("--out", required=True, help="output directory (save_pretrained layout)")
    p.add_argument(
        "--languages", default="mixed,en,qaa,qab,qac", help="demo corpora to pretrain on; mixed = code-switched"
    )
    p.add_argument("--layers", type=int, default=12, help="transformer layers of the demo BERT")
    p.add_argument("--hidden-size", type=int, default=64, help="hidden size of the demo BERT")
    p.add_argument("--pretrain-steps", type=int, default=300, help="MLM pretraining steps on the demo corpora")
    p.add_argument("--seed", type=int, default=7, help="random seed of the initialisation and pretraining")
    p.add_argument(
        "--vocab-size", type=int, default=1000, help="WordPiece vocabulary size; another size gives another tokenizer"
    )
    p.add_argument(
        "--world",
        type=json.loads,
        default=None,
        help="the synthetic languages as JSON (config demo_world.languages; default: xlt.data.demo.WORLD)",
    )
    add_run_arguments(p, "--tensorboard")
    p.add_argument(
        "--run-dir",
        default=None,
        help="with --tensorboard true: where its event files go (the workflow's: results/runs/demo_models/NAME)",
    )


def _prepare_data_arguments(p):
    p.add_argument("--dataset", required=True, help="the dataset's name (a key under `datasets:`)")
    source = p.add_mutually_exclusive_group(required=True)
    source.add_argument("--spec", help="the dataset's config entry as JSON (what the workflow passes)")
    add_config_argument(source, "that declares the dataset", required=False)
    p.add_argument("--out", required=True, help="output directory for this dataset")
    p.add_argument(
        "--world",
        type=json.loads,
        default=None,
        help="demo sources: the synthetic languages as JSON (config demo_world.languages; with --config, read from it)",
    )
    p.add_argument(
        "--tokenizer",
        default=None,
        help="a model (hub id or directory) whose tokenizer counts a sample of "
        "each split's token lengths into info.json, for `xlt plan` (default: none recorded)",
    )


def _prefetch_arguments(p):
    add_config_argument(p, "whose models and datasets to fetch")
    p.add_argument(
        "--cache",
        default=None,
        help="cache directory, Hugging Face's layout (default: resources/hf, where the workflow's jobs look)",
    )
    p.add_argument(
        "--check",
        action="store_true",
        help="download nothing: fail (exit 2) naming what the cache lacks for an offline run",
    )


VERBS = {
    "build-demo-model": Verb(
        "xlt.data.build_demo_model:main",
        "Build the offline demo encoder (WordPiece tokenizer + small BERT pretrained with MLM)",
        _build_demo_model_arguments,
    ),
    "prepare-data": Verb(
        "xlt.data.prepare_data:main",
        "Normalise one dataset into {out}/{lang}/{split}.jsonl (spec from --spec JSON or from --config)",
        _prepare_data_arguments,
    ),
    "prefetch": Verb(
        "xlt.data.prefetch:main",
        "Download a config's hub models and HF datasets into the cache (resources/hf) for offline runs",
        _prefetch_arguments,
    ),
}
