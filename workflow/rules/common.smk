# Config validation (every default filled in) and the plan every family's rules read.
import os
from functools import cache
from pathlib import Path

from snakemake.utils import min_version

from xlt import jobserver
from xlt.core.job_client import server_variables
from xlt.core import monitor_sweep, registry, settings
from xlt.core.cluster import gpu_job_resources
from xlt.core.metrics import examples_path
from xlt.core.plan import RESULTS, shared_jobs
from xlt.core.prefetch import cache_dir, cache_environment, check_offline
from xlt.cost.ledger import benchmark_pattern
from xlt.cost.sharing import rule_slots
from xlt.report import sections

min_version("8.10")

# the config file errors name (--configfile replaces config.yaml, see the Snakefile)
CONFIGFILE = (workflow.overwrite_configfiles or ["config.yaml"])[-1]

# shapes, allowed values and defaults, then every family's cross checks: before any job
# runs, so a bad config never wastes compute
settings.validate(config, CONFIGFILE)
settings.require_runs(config, CONFIGFILE)

# Hugging Face downloads live with the project unless HF_HUB_CACHE / HF_DATASETS_CACHE say
# otherwise: `xlt prefetch` fills resources/hf where there is internet, and every job (local
# or on SLURM, which exports this environment) reads the same cache. HF_HOME, which holds
# the hub login token, is left alone.
for variable, value in cache_environment(cache_dir()).items():
    os.environ.setdefault(variable, value)

# the conda environment of every job: a path from the Snakefile, as family rules live elsewhere
ENV = os.path.join(workflow.basedir, "envs", "xlt.yaml")

# `xlt aggregate`'s bootstrap settings (config statistics:)
STATISTICS = "--resamples {resamples} --seed {seed} --confidence {confidence}".format(**config["statistics"])


wildcard_constraints:
    run_id="[^/]+",
    dataset="[^/]+",
    model="[^/]+",
    lang="[^/]+",


def family_rule_files():
    """The rules file of every registered family (rules.smk in its folder, xlt.core.registry),
    for the Snakefile to include."""
    return [registry.rules_file(name) for name in registry.names()]


def check_hf_cache():
    """Offline (HF_HUB_OFFLINE=1), stop before any job if the cache lacks a model or dataset."""
    check_offline(config, CONFIGFILE)


def write_sweep_hparams():
    """With monitoring on, the sweep's HParams experiment (every family's axes as its columns)
    into results/runs/sweep/, before any job writes its runs (xlt.core.monitor_sweep)."""
    monitor_sweep.write(config)


JOB_SERVER_LOG = f"{RESULTS}/logs/job-server.log"


def start_job_server():
    """The `xlt` jobs Snakemake runs on this host fork from one `xlt job-server` beside it
    (xlt.jobserver): most of a light job's CPU was importing torch and transformers, once a job.
    It ends with Snakemake. On a cluster only the local rules (aggregates, plots, the demo
    models) fork: a job SLURM runs calls from its own SLURM job and runs in its own process
    (xlt.core.job_client.in_another_slurm_job). None when XLT_JOB_SERVER is set: a server
    already runs (`xlt job-server -- snakemake`), or 0 turns it off."""
    if os.environ.get(jobserver.VARIABLE):
        return
    os.makedirs(os.path.dirname(JOB_SERVER_LOG), exist_ok=True)
    path = jobserver.start_beside(JOB_SERVER_LOG, ["xlt", "job-server"])  # as every rule calls `xlt`
    if path:
        os.environ.update(server_variables(path))  # the jobs' shells inherit Snakemake's environment


@cache
def family_jobs(family):
    """rule -> run id -> xlt.core.plan.Job, for an enabled family ({} otherwise); family
    "shared" holds the demo models and datasets, keyed by name."""
    if family == "shared":
        return shared_jobs(config)
    if settings.family(config, family) is None:
        return {}
    return sections.plan_module(family).jobs(config)


def run_ids(family, rule):
    return list(family_jobs(family).get(rule, {}))


def job_key(wildcards):
    """Which job of a rule: its wildcards' values joined by "/" in the order its output names
    them, as its family's plan keys it (the run id; e.g. "RUN_ID/PAIR" for one job per run and pair)."""
    return "/".join(wildcards)


def job_inputs(family, rule):
    """Input function: the files a job of `rule` reads, named as in its plan."""

    def inputs(wildcards):
        return family_jobs(family)[rule][job_key(wildcards)].inputs

    return inputs


def job_args(family, rule):
    """Params function: the job's complete `xlt` arguments, from its plan."""

    def args(wildcards):
        return family_jobs(family)[rule][job_key(wildcards)].cli

    return args


def job_threads(family):
    """Threads of a model-loading job: the family's `resources.cpus` (torch uses that many)."""
    return settings.resources(config, family)["cpus"] if settings.family(config, family) else 1


@cache
def job_slots(family, rule):
    """Job key -> the slots of one GPU the job takes (config gpu_sharing, xlt.cost.sharing)."""
    return rule_slots(config, family, rule)


def job_resources(family, rule):
    """Resources of a model-loading job: the family's `resources:` under SLURM's names, and
    `gpu_slots` (`snakemake --resources gpu_slots=N` runs as many jobs on a GPU as fit; with
    gpu_sharing.slurm: shard, SLURM gets --gres=shard:<slots> instead of a whole GPU)."""
    if settings.family(config, family) is None:
        return {}

    def resource(name):
        return lambda wildcards: gpu_job_resources(config, family, job_slots(family, rule)[job_key(wildcards)])[name]

    return {name: resource(name) for name in gpu_job_resources(config, family, 1)}


def saved_model(run):
    """`model=<run>/model` as an output of a rule that saves no weights unless config keep_models
    asks (MonoX teachers and students: xlt.families.monox.plan.saved_model_settings)."""
    return {"model": directory(f"{run}/model")} if config["keep_models"] else {}


def model_dir(path):
    """A trained model's directory: temp(), deleted once every rule that reads it has run, unless
    config keep_models (alignment's freeze_depth models stay as workflow targets)."""
    return directory(path) if config["keep_models"] else temp(directory(path))


def examples_file(metrics_path):
    """The per-example outputs (predictions, gold labels, scores) an evaluation writes beside its
    metrics file (xlt.core.metrics): an output of the rule, so Snakemake checks, reruns and
    removes it with the metrics file that the aggregation and the paired tests read it beside."""
    return examples_path(metrics_path)


def checkpoint_examples(family, checkpoints):
    """The checkpoint choices' examples file as a named output, only with
    `<family>.checkpoint_selection` on: without tracking the choices have no examples."""
    section = settings.family(config, family)
    return {"checkpoint_examples": examples_file(checkpoints)} if section and section["checkpoint_selection"] else {}


def family_targets(family):
    if settings.family(config, family) is None:
        return []
    return sections.plan_module(family).targets(config)
