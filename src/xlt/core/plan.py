"""What a family's sweep asks of the workflow: one `Job` per Snakemake job.

Each family's `plan.py` turns the validated settings into `jobs(config)`: rule name ->
{run id -> Job}. A Job knows the files it reads and what runs it, as data: its spec, the `xlt`
verb and its settings (xlt.core.job_spec), from which its complete arguments are rendered, so a
rule is wiring only (`input: unpack(...)`, `shell: xlt VERB {params.args}`), the command a job
runs can be tested without Snakemake, and the cost plan (xlt.cost) prices the spec. Paths are built here and in
the families from the same templates the rules use for their outputs.
"""

from __future__ import annotations

import json
import shlex
from dataclasses import dataclass, field
from typing import Iterable

from xlt.core.job_spec import JobSpec
from xlt.core.model_files import pinned_ref

RESULTS = "results"


@dataclass(frozen=True)
class FamilyPaths:
    """The outputs every family names the same way, built from its name by `family_paths`."""

    runs: str  # the directory of the family's run directories
    run: str  # one run's directory ({run_id} wildcard)
    tables: str  # the stem of the family's tables: TABLE, SUMMARY and any `f"{tables}_<name>.csv"`
    table: str  # the tidy table (`xlt aggregate`)
    summary: str  # rows over several languages (lang avg, ...)
    checkpoint_table: str  # the checkpoint choices of every run (xlt.evaluate.checkpoint_choice)
    plots: str  # the directory of the family's figures
    plot: str  # one figure ({kind} wildcard)
    curves: str  # every training run's loss, learning rate and dev score against the step (xlt plot-curves)
    log: str  # one run's log ({run_id} wildcard)


def family_paths(family: str) -> FamilyPaths:
    """The standard output paths of `family` below RESULTS (one template each, shared by every family)."""
    runs, tables, plots = f"{RESULTS}/runs/{family}", f"{RESULTS}/tables/{family}", f"{RESULTS}/plots/{family}"
    return FamilyPaths(
        runs=runs,
        run=f"{runs}/{{run_id}}",
        tables=tables,
        table=f"{tables}.csv",
        summary=f"{tables}_summary.csv",
        checkpoint_table=f"{tables}_checkpoints.csv",
        plots=plots,
        plot=f"{plots}/{{kind}}.png",
        curves=f"{plots}/training-curves.png",
        log=f"{RESULTS}/logs/{family}/{{run_id}}.log",
    )


def standard_targets(paths: FamilyPaths, kinds, curves: list[str], extra: list[str] = ()) -> list[str]:
    """A family's usual workflow targets: its tidy and summary tables, then `extra`, one figure per plot
    kind, and the training-curves figure when the sweep has training `curves` to draw."""
    return (
        [paths.table, paths.summary, *extra]
        + [paths.plot.format(kind=kind) for kind in kinds]
        + ([paths.curves] if curves else [])
    )


def run_files(template: str, run_ids: Iterable[str]) -> list[str]:
    """`template`, a path with a {run_id} wildcard, for each run id in order: a file of every job a
    rule plans (`jobs(config)[rule]`), as the training curves and checkpoint choices that the
    generic rules read."""
    return [template.format(run_id=run_id) for run_id in run_ids]


@dataclass(frozen=True)
class Job:
    """One job of a sweep: its run id, what it runs (verb and settings), input files and sweep values."""

    run_id: str
    spec: JobSpec
    inputs: dict[str, str | list[str]] = field(default_factory=dict)
    axes: dict = field(default_factory=dict)

    @property
    def args(self) -> list:
        """The `xlt <verb>` arguments, rendered from the spec."""
        return self.spec.args

    @property
    def cli(self) -> str:
        """The arguments as one shell-quoted string, for a rule's `{params.args}`."""
        return shlex.join(str(a) for a in self.args)


def by_run_id(jobs: list[Job]) -> dict[str, Job]:
    out = {}
    for job in jobs:
        if job.run_id in out:
            raise ValueError(f"two jobs share run id {job.run_id!r}; every sweep point needs its own")
        out[job.run_id] = job
    return out


def data_file(dataset: str, lang: str, split: str) -> str:
    """A prepared dataset split (xlt prepare-data writes one JSONL per language and split)."""
    return f"{RESULTS}/data/{dataset}/{lang}/{split}.jsonl"


def data_info(dataset: str) -> str:
    """The file a prepared dataset is known by (its rule's output)."""
    return f"{RESULTS}/data/{dataset}/info.json"


def model_ref(config: dict, name: str) -> str:
    """What `xlt` commands get as --model: a directory built here, a local path, or a hub id with
    its pinned revision (`id@revision`, see xlt.core.model_files.pinned_ref)."""
    spec = config["models"][name]
    if spec["source"] == "demo":
        return f"{RESULTS}/models/{name}"
    return pinned_ref(spec["path"], spec.get("revision")) if spec["source"] == "hub" else spec["path"]


def prompt_settings(config: dict, name: str) -> list[tuple[str, str]]:
    """`--prompt TEXT` for a model configured with a prompt (models.<name>.prompt), else nothing:
    every verb that embeds text with that model (or a model trained from it) puts it first."""
    prompt = config["models"][name].get("prompt")
    return [("prompt", prompt)] if prompt else []


def head_settings(config: dict, name: str) -> list[tuple[str, str]]:
    """`--head` of a fine-tuning job: the model's configured classification head."""
    return [("head", config["models"][name].get("head", "auto"))]


def model_input(config: dict, name: str) -> list[str]:
    """The file dependency of a model (none for hub ids: they are fetched or prefetched)."""
    spec = config["models"][name]
    if spec["source"] == "demo":
        return [f"{RESULTS}/models/{name}"]
    if spec["source"] == "local":
        return [spec["path"]]
    return []


def config_settings(section: dict) -> list[tuple[str, str]]:
    """A config section's items as a job's settings, in the dict's order, each value as its text
    (the verb converts it, as it converts every flag)."""
    return [(key, str(value)) for key, value in section.items()]


def monitor_settings(config: dict) -> list[tuple[str, str]]:
    """The monitoring settings of every training job (`monitor:`): `--tensorboard true` when on, else
    none (a config without monitoring plans the command lines it planned before)."""
    return [("tensorboard", "true")] if config["monitor"]["tensorboard"] else []


def demo_model_monitoring(config: dict, name: str) -> list[tuple[str, str]]:
    """With monitoring on, a demo model's pretraining writes its curves like every training run, into
    results/runs/demo_models/<name>/ (xlt.core.monitor)."""
    on = monitor_settings(config)
    return [*on, ("run_dir", f"{RESULTS}/runs/demo_models/{name}")] if on else []


def shared_jobs(config: dict) -> dict[str, dict[str, Job]]:
    """The jobs every family reads: demo models by name, prepared datasets by name."""
    world = [("world", json.dumps(config["demo_world"]["languages"], sort_keys=True))]
    models = {
        name: Job(
            name,
            JobSpec(
                "build-demo-model",
                [
                    ("out", f"{RESULTS}/models/{name}"),
                    ("languages", ",".join(spec["languages"])),
                    ("layers", spec["layers"]),
                    ("hidden_size", spec["hidden_size"]),
                    ("pretrain_steps", spec["pretrain_steps"]),
                    ("vocab_size", spec["vocab_size"]),
                    *world,
                    *demo_model_monitoring(config, name),
                ],
            ),
        )
        for name, spec in config["models"].items()
        if spec["source"] == "demo"
    }
    # a hub model's tokenizer counts each dataset's token lengths for `xlt plan` (demo models are
    # built by the workflow itself, after the data: their configs plan from the cost tables)
    hub = [model_ref(config, name) for name, spec in config["models"].items() if spec["source"] == "hub"]
    tokenizer = [("tokenizer", hub[0])] if hub else []
    data = {
        name: Job(
            name,
            JobSpec(
                "prepare-data",
                [
                    ("dataset", name),
                    ("spec", json.dumps(spec, sort_keys=True)),
                    ("out", f"{RESULTS}/data/{name}"),
                    *(world if spec["source"] == "demo" else []),
                    *tokenizer,
                ],
            ),
        )
        for name, spec in config["datasets"].items()
    }
    return {"build_demo_model": models, "prepare_data": data}
