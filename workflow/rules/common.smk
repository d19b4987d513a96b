# Config validation and the sweep tables every family's rules read.
import os
from pathlib import Path

from snakemake.utils import min_version, validate

from xlt.core import settings as xlt_config
from xlt.core.cluster import slurm_resources
from xlt.core.prefetch import DEFAULT_CACHE, check_offline
from xlt.data.prepare import output_files as dataset_files
from xlt.core.train_args import train_flags

min_version("8.10")

# shapes and allowed values (with defaults filled in), then cross references and depth
# ranges: both before any job runs, so a bad config never wastes compute
validate(config, schema="../schemas/config.schema.yaml")
xlt_config.check(config)

RESULTS = "results"

# Hugging Face downloads live with the project unless HF_HOME says otherwise: `xlt prefetch`
# fills resources/hf where there is internet, and every job (local or on SLURM, which
# exports this environment) reads the same cache.
os.environ.setdefault("HF_HOME", str(Path(DEFAULT_CACHE).resolve()))


def check_hf_cache():
    """Offline (HF_HUB_OFFLINE=1), stop before any job if the cache lacks a model or dataset."""
    configfiles = workflow.overwrite_configfiles or ["config.yaml"]
    check_offline(config, configfiles[-1])
DEMO = config.get("report", {}).get("demo", False)

wildcard_constraints:
    run_id="[^/]+",
    dataset="[^/]+",
    model="[^/]+",
    lang="[^/]+",


def model_ref(name):
    """What `xlt` commands get as --model: a directory built here, a local path or a hub id."""
    spec = config["models"][name]
    return f"{RESULTS}/models/{name}" if spec["source"] == "demo" else spec["path"]


def model_input(name):
    """The file dependency of a model (none for hub ids: they are fetched by the job or prefetched)."""
    spec = config["models"][name]
    if spec["source"] == "demo":
        return f"{RESULTS}/models/{name}"
    if spec["source"] == "local":
        return spec["path"]
    return []


def data_file(dataset, lang, split):
    return f"{RESULTS}/data/{dataset}/{lang}/{split}.jsonl"


def data_input(dataset):
    return f"{RESULTS}/data/{dataset}/info.json"


def flags(family):
    return train_flags(xlt_config.training_settings(config, family))


# each family's rule file appends a function returning its final targets (tables, plots)
FAMILY_TARGETS = []


def by_run_id(rows):
    return {row["run_id"]: row for row in rows}
