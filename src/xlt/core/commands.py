"""Verbs every family shares: the demo models, data, tables, figures and the config itself."""
from __future__ import annotations

import json

from xlt.core.verbs import Verb


def _build_demo_model_arguments(p):
    p.add_argument("--out", required=True, help="output directory (save_pretrained layout)")
    p.add_argument("--languages", default="mixed,en,qaa,qab,qac", help="demo corpora to pretrain on; mixed = code-switched")
    p.add_argument("--layers", type=int, default=12, help="transformer layers of the demo BERT")
    p.add_argument("--hidden-size", type=int, default=64, help="hidden size of the demo BERT")
    p.add_argument("--pretrain-steps", type=int, default=300, help="MLM pretraining steps on the demo corpora")
    p.add_argument("--seed", type=int, default=7, help="random seed of the initialisation and pretraining")
    p.add_argument("--vocab-size", type=int, default=1000, help="WordPiece vocabulary size; another size gives another tokenizer")
    p.add_argument("--world", type=json.loads, default=None, help="the synthetic languages as JSON (config "
                   "demo_world.languages; default: xlt.data.demo.WORLD)")


def _build_demo_model(args):
    from xlt.core.demo_model import build_demo_model
    from xlt.core.io import write_json

    info = build_demo_model(args.out, args.languages.split(","), layers=args.layers, hidden_size=args.hidden_size,
                            pretrain_steps=args.pretrain_steps, seed=args.seed, vocab_size=args.vocab_size,
                            world=args.world)
    write_json(f"{args.out}/xlt_demo_model.json", info)


def _prepare_data_arguments(p):
    p.add_argument("--dataset", required=True, help="the dataset's name (a key under `datasets:`)")
    source = p.add_mutually_exclusive_group(required=True)
    source.add_argument("--spec", help="the dataset's config entry as JSON (what the workflow passes)")
    source.add_argument("--config", help="a workflow config (YAML) that declares the dataset")
    p.add_argument("--out", required=True, help="output directory for this dataset")
    p.add_argument("--world", type=json.loads, default=None, help="demo sources: the synthetic languages as JSON "
                   "(config demo_world.languages; with --config, read from it)")


def _prepare_data(args):
    from xlt.core import settings
    from xlt.data.prepare import prepare
    from xlt.core.errors import XltError

    world = args.world
    if args.spec:
        spec = json.loads(args.spec)
    else:
        config = settings.load(args.config)
        datasets, world = config["datasets"], world or settings.demo_world(config)
        if args.dataset not in datasets:
            raise XltError(f"dataset {args.dataset!r} is not declared under datasets: in {args.config}")
        spec = datasets[args.dataset]
    info = prepare(args.dataset, spec, args.out, world=world)
    print(info["counts"])


def _prefetch_arguments(p):
    p.add_argument("--config", required=True, help="the workflow config whose models and datasets to fetch")
    p.add_argument("--cache", default=None, help="cache directory, Hugging Face's layout (default: resources/hf, where the workflow's jobs look)")
    p.add_argument("--check", action="store_true",
                   help="download nothing: fail (exit 2) naming what the cache lacks for an offline run")


def _prefetch(args):
    import os

    from xlt.core.settings import load
    from xlt.core.prefetch import cache_dir, cache_environment, check_offline, plan, prefetch

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
    print(f"done; run the workflow with HF_HUB_OFFLINE=1 (its jobs read {cache} through "
          f"{' and '.join(cache_environment(cache))}; a --cache other than resources/hf: export those two)")


def _aggregate_arguments(p):
    p.add_argument("metrics", nargs="+", help="metrics JSON files")
    p.add_argument("--out", required=True, help="CSV path: one row per run, language and metric")
    p.add_argument("--summary", default=None, help="CSV path for the rows over several languages (lang avg, "
                   "multilingual); default: OUT with _summary before .csv")
    p.add_argument("--resamples", type=int, default=1000, help="bootstrap resamples per interval (config statistics.resamples)")
    p.add_argument("--seed", type=int, default=0, help="bootstrap seed (config statistics.seed)")
    p.add_argument("--confidence", type=float, default=0.95, help="interval level (config statistics.confidence)")


def _aggregate(args):
    from xlt.core.io import atomic_path
    from xlt.report.aggregate import aggregate, split_summary, summary_path

    per_language, summary = split_summary(aggregate(args.metrics, resamples=args.resamples, seed=args.seed,
                                                    confidence=args.confidence))
    summary_out = args.summary or summary_path(args.out)
    for table, out in ((per_language, args.out), (summary, summary_out)):
        with atomic_path(out) as tmp:
            table.to_csv(tmp, index=False)
    print(f"{len(per_language)} rows -> {args.out}, {len(summary)} summary rows -> {summary_out} "
          f"(from {len(args.metrics)} files)")


def _plot_arguments(p):
    # the kinds are checked when the verb runs: listing them here would import every family's
    # plotting module (matplotlib) and make `xlt --help` slow
    p.add_argument("kind", help="a plot kind of one family's plots.PLOTS, e.g. accuracy-vs-depth")
    p.add_argument("--table", required=True, help="tidy CSV from `xlt aggregate`")
    p.add_argument("--out", required=True, help="PNG path")
    p.add_argument("--title", default="", help="figure title (default: the plot kind's own)")


def _plot(args):
    from xlt.core.errors import XltError
    from xlt.core.io import atomic_path
    from xlt.report.aggregate import read_table
    from xlt.report.plots import plot_functions

    kinds = plot_functions()
    if args.kind not in kinds:
        raise XltError(f"unknown plot kind {args.kind!r}; choose one of {', '.join(sorted(kinds))}")
    table = read_table(args.table)
    with atomic_path(args.out) as tmp:
        kinds[args.kind](table, tmp, title=args.title)


def _plot_curves_arguments(p):
    p.add_argument("curves", nargs="+", help="training curve CSVs (<run>/train.curve.csv, written beside a run's metrics)")
    p.add_argument("--out", required=True, help="PNG path")
    p.add_argument("--title", default="", help="figure title (default 'Training curves')")


def _plot_curves(args):
    from xlt.core.io import atomic_path
    from xlt.report.curves import plot_curves, read_curves

    curves = read_curves(args.curves)
    with atomic_path(args.out) as tmp:
        plot_curves(curves, tmp, title=args.title)


def _config_arguments(p):
    p.add_argument("action", choices=["check", "show"],
                   help="check: validate and say so; show: print the effective config, every default filled in")
    p.add_argument("--config", required=True, help="a workflow config (YAML)")


def _config(args):
    import yaml

    from xlt.core.settings import load

    config = load(args.config)
    if args.action == "show":
        print(yaml.safe_dump(config, sort_keys=False), end="")
    else:
        print(f"{args.config}: valid")


def _sweep_arguments(p):
    p.add_argument("--config", required=True, help="a workflow config (YAML) whose runs to list")


def _sweep(args):
    import pandas as pd

    from xlt.core.settings import FAMILIES, load, plan_module

    config = load(args.config)
    for family in FAMILIES:
        rows = plan_module(family).runs(config)
        if rows:
            print(f"# {family}: {len(rows)} runs")
            print(pd.DataFrame(rows).to_string(index=False))


VERBS = {
    "build-demo-model": Verb("Build the offline demo encoder (WordPiece tokenizer + small BERT pretrained with MLM)", _build_demo_model_arguments, _build_demo_model),
    "prepare-data": Verb("Normalise one dataset into {out}/{lang}/{split}.jsonl (spec from --spec JSON or from --config)", _prepare_data_arguments, _prepare_data),
    "prefetch": Verb("Download a config's hub models and HF datasets into the cache (resources/hf) for offline runs", _prefetch_arguments, _prefetch),
    "aggregate": Verb("Collect metrics JSON files into one tidy CSV (run axes + dimensions + metric + value)", _aggregate_arguments, _aggregate),
    "plot": Verb("Draw one figure from a tidy metrics table", _plot_arguments, _plot),
    "plot-curves": Verb("Draw the training curves (loss, learning rate, dev score) of a family's runs in one figure", _plot_curves_arguments, _plot_curves),
    "config": Verb("Validate a config (check) or print it with every default filled in (show)", _config_arguments, _config),
    "sweep": Verb("Validate a config and print its sweep: one row per run", _sweep_arguments, _sweep),
}
