"""Benchmarks: our training loop vs transformers.Trainer, frozen-prefix caching, MFU, workflow wall times.

    python benchmarks/bench.py [--loop] [--prefix-cache] [--finetune-cache] [--shared-prefix] [--mfu]
                               [--dry-run] [--demo] [--tests]

Each benchmark prints a Markdown table; results are figures, not pass/fail tests. This script
imports `xlt` as installed (or with PYTHONPATH=src); the processes it starts (loop workers,
`xlt finetune` jobs, snakemake runs) import <repo>/src. The modules next to it run on their own
too: benchmarks/prefix_cache.py, loop.py, mfu.py (= --mfu), workflow.py (= --dry-run),
loop_vs_trainer.py (= --loop); cli_help.py (how long `xlt --help` takes) runs only on its own.
"""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path

import loop
import mfu

REPO = Path(__file__).resolve().parents[1]
SECTIONS = ("loop", "prefix_cache", "finetune_cache", "shared_prefix", "mfu", "dry_run", "demo", "tests")
DEFAULT_SECTIONS = ("loop", "prefix_cache", "dry_run")


def add_arguments(p: argparse.ArgumentParser) -> None:
    what = p.add_argument_group("what to run (default: --loop --prefix-cache --dry-run)")
    what.add_argument(
        "--loop",
        action="store_true",
        help="xlt.core.training.train vs transformers.Trainer: samples/s and peak memory (--loop-configs)",
    )
    what.add_argument(
        "--prefix-cache",
        action="store_true",
        help="frozen-prefix caching: step speed-up per depth and the whole-sweep saving",
    )
    what.add_argument(
        "--finetune-cache",
        action="store_true",
        help="the same end to end: demo-sized `xlt finetune` jobs with and without --cache-frozen-prefix",
    )
    what.add_argument(
        "--shared-prefix",
        action="store_true",
        help="the whole -1..12 sweep of demo-sized jobs: every depth uncached vs one `xlt prefix-states` "
        "pass read by every depth (ratio and dev accuracies)",
    )
    what.add_argument("--mfu", action="store_true", help="tokens/s and MFU of an mBERT-config model (--mfu-* options)")
    what.add_argument("--dry-run", action="store_true", help="`snakemake -n` on the paper-scale config")
    what.add_argument(
        "--demo",
        action="store_true",
        help="the default demo run, `snakemake --cores 2` on config.yaml in a scratch copy (minutes)",
    )
    what.add_argument("--tests", action="store_true", help="wall time of `pytest tests`")
    what.add_argument("--all", action="store_true", help="every benchmark above")

    p.add_argument(
        "--repo",
        default=str(REPO),
        help="repository root (Snakefile, config/, src/, tests/); default: this script's checkout",
    )
    p.add_argument("--device", default="cpu", help="cpu, cuda or auto (loop and MFU benchmarks)")
    p.add_argument(
        "--threads",
        type=int,
        default=1,
        help="torch threads per run (1, as in a Snakemake job, which sets OMP_NUM_THREADS=1)",
    )
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--json", default=None, help="also write every measurement to this JSON file")

    g = p.add_argument_group("loop benchmark")
    g.add_argument("--loop-configs", default="demo,small", help=f"comma-separated, from {sorted(loop.CONFIGS)}")
    g.add_argument("--repeats", type=int, default=3, help="fresh-process runs per runner and configuration")
    g.add_argument("--loop-steps", type=int, default=0, help="override the configurations' step counts")

    g = p.add_argument_group("frozen-prefix caching")
    g.add_argument(
        "--prefix-cache-args",
        default="--epochs 3 --threads 1 --clock process",
        help="arguments for benchmarks/prefix_cache.py (see its --help)",
    )
    g.add_argument("--finetune-depths", default="0,6,12", help="depths for --finetune-cache (-1 is added)")
    g.add_argument(
        "--shared-storage-dtype",
        default="float16",
        choices=["float16", "float32"],
        help="the store's dtype for --shared-prefix",
    )

    g = p.add_argument_group("MFU")
    mfu.add_arguments(g)

    g = p.add_argument_group("workflow")
    g.add_argument("--dry-run-config", default="config/paper.yaml")
    g.add_argument("--cores", type=int, default=2, help="snakemake --cores for --demo")
    g.add_argument("--demo-keep", default=None, help="copy the demo's results/ (tables, plots, report) here")
    g.add_argument("--pytest-args", default="", help="extra pytest arguments for --tests, e.g. \"-m 'not slurm'\"")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="benchmarks/bench.py", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    add_arguments(parser)
    return parser


def chosen_sections(args: argparse.Namespace) -> set[str]:
    """The benchmarks to run: the flags given, all with --all, the defaults with none."""
    if args.all:
        return set(SECTIONS)
    return {s for s in SECTIONS if getattr(args, s, False)} or set(DEFAULT_SECTIONS)


def run(args: argparse.Namespace) -> dict:
    import machine

    import workflow

    chosen = chosen_sections(args)
    repo = Path(args.repo).resolve()
    if chosen & {"dry_run", "demo", "tests"} and not (repo / "Snakefile").is_file():
        raise SystemExit(f"benchmarks/bench.py: error: no Snakefile in {repo}: pass the repository root as --repo")

    def echo(line=""):
        print(line, flush=True)

    results = {"machine": machine.machine_info()}
    echo(machine.describe())
    if "loop" in chosen:
        echo("\n## Training loop: xlt.core.training.train vs transformers.Trainer\n")
        results["loop"] = loop.run(
            argparse.Namespace(
                configs=args.loop_configs,
                repeats=args.repeats,
                steps=args.loop_steps,
                device=args.device,
                threads=args.threads,
                seed=args.seed,
                json=None,
            ),
            echo=echo,
        )
    if chosen & {"prefix_cache", "finetune_cache", "shared_prefix"}:
        import prefix_cache  # imports torch and transformers at the top
    if "prefix_cache" in chosen:
        echo("\n## Frozen-prefix caching: training steps per depth\n")
        results["prefix_cache"] = prefix_cache.main(shlex.split(args.prefix_cache_args), echo=echo)
    if "finetune_cache" in chosen:
        echo("\n## Frozen-prefix caching: `xlt finetune` jobs\n")
        depths = [-1] + [int(d) for d in args.finetune_depths.split(",") if d]
        results["finetune_cache"] = prefix_cache.finetune_comparison(
            depths, threads=args.threads, seed=args.seed, echo=echo
        )
    if "shared_prefix" in chosen:
        echo("\n## Frozen-prefix caching: the whole sweep with one shared prefix pass\n")
        results["shared_prefix"] = prefix_cache.shared_sweep_comparison(
            threads=args.threads, seed=args.seed, storage_dtype=args.shared_storage_dtype, echo=echo
        )
    if "mfu" in chosen:
        echo("\n## Throughput and MFU\n")
        results["mfu"] = mfu.run(args, echo=echo)
    if "dry_run" in chosen:
        echo("\n## Dry run of the paper-scale sweep\n")
        results["dry_run"] = workflow.dry_run(repo, args.dry_run_config, echo=echo)
    if "demo" in chosen:
        echo("\n## Demo run\n")
        results["demo"] = workflow.demo_run(
            repo, args.cores, keep=Path(args.demo_keep) if args.demo_keep else None, echo=echo
        )
    if "tests" in chosen:
        echo("\n## Test suite\n")
        results["tests"] = workflow.test_suite(repo, shlex.split(args.pytest_args), echo=echo)
    if args.json:
        from xlt.core.io import write_json

        write_json(args.json, results)
    return results


def main(argv: list[str] | None = None) -> int:
    run(build_parser().parse_args(argv))
    return 0


if __name__ == "__main__":
    sys.exit(main())
