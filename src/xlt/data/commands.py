"""Verbs of the data layer: the offline demo encoder, preparing a dataset, and prefetching a config's hub
models and datasets."""

from __future__ import annotations

import json

from xlt.core.verbs import DATA, Verb

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


def _build_demo_model(args):
    from xlt.core.io import write_json
    from xlt.data.demo_model import build_demo_model

    info = build_demo_model(
        args.out,
        args.languages.split(","),
        layers=args.layers,
        hidden_size=args.hidden_size,
        pretrain_steps=args.pretrain_steps,
        seed=args.seed,
        vocab_size=args.vocab_size,
        world=args.world,
    )
    write_json(f"{args.out}/xlt_demo_model.json", info)


def _prepare_data_arguments(p):
    p.add_argument("--dataset", required=True, help="the dataset's name (a key under `datasets:`)")
    source = p.add_mutually_exclusive_group(required=True)
    source.add_argument("--spec", help="the dataset's config entry as JSON (what the workflow passes)")
    source.add_argument("--config", help="a workflow config (YAML) that declares the dataset")
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


def _prepare_data(args):
    from xlt.core import settings
    from xlt.core.errors import XltError
    from xlt.data.prepare import prepare

    world = args.world
    if args.spec:
        spec = json.loads(args.spec)
    else:
        config = settings.load(args.config)
        datasets, world = config["datasets"], world or settings.demo_world(config)
        if args.dataset not in datasets:
            raise XltError(f"dataset {args.dataset!r} is not declared under datasets: in {args.config}")
        spec = datasets[args.dataset]
    info = prepare(args.dataset, spec, args.out, world=world, tokenizer=args.tokenizer)
    print(info["counts"])


def _prefetch_arguments(p):
    p.add_argument("--config", required=True, help="the workflow config whose models and datasets to fetch")
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


def _prefetch(args):
    import os

    from xlt.core.prefetch import cache_dir, cache_environment, check_offline, plan, prefetch
    from xlt.core.settings import load

    config = load(args.config)
    cache = cache_dir(args.cache)
    if args.check:
        for var in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE"):  # a check never touches the network
            os.environ[var] = "1"
        check_offline(config, args.config, cache)
        models, loads = plan(config)
        print(f"{len(models)} models and {len(loads)} dataset splits of {args.config} are in {cache}")
        return
    prefetch(config, cache)
    print(
        f"done; run the workflow with HF_HUB_OFFLINE=1 (its jobs read {cache} through "
        f"{' and '.join(cache_environment(cache))}; a --cache other than resources/hf: export those two)"
    )


VERBS = {
    "build-demo-model": Verb(
        "Build the offline demo encoder (WordPiece tokenizer + small BERT pretrained with MLM)",
        _build_demo_model_arguments,
        _build_demo_model,
    ),
    "prepare-data": Verb(
        "Normalise one dataset into {out}/{lang}/{split}.jsonl (spec from --spec JSON or from --config)",
        _prepare_data_arguments,
        _prepare_data,
    ),
    "prefetch": Verb(
        "Download a config's hub models and HF datasets into the cache (resources/hf) for offline runs",
        _prefetch_arguments,
        _prefetch,
    ),
}
