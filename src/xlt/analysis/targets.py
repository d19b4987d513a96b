"""Which evaluation files each family's comparison reads, and the tables it writes (the
workflow's `compare` rule and `rule all` ask here). Torch-free, like the plans it reads."""

from __future__ import annotations

from xlt.core import registry, settings
from xlt.core.job_metrics import metrics_file
from xlt.core.plan import RESULTS

# no colon: snakemake --report appends ".. _<category>: javascript:..." to every caption, and a
# colon ends an RST target name ("Statistics" would clash with its own Statistics link)
CATEGORY = "Paired tests and seed spread"
TESTS = f"{RESULTS}/tables/{{family}}_tests.csv"
SEEDS = f"{RESULTS}/tables/{{family}}_seeds.csv"


def evaluated() -> list[str]:
    """The registered families with rules that write per-example outputs (their plan's
    EVALUATIONS, each in its LEDGER with the metrics file the job writes)."""
    return [f for f in registry.names() if registry.plan(f).EVALUATIONS]


def evaluation_files(config: dict, family: str) -> list[str]:
    jobs = settings.plan_module(family).jobs(config)
    return [metrics_file(family, rule, key) for rule in registry.plan(family).EVALUATIONS for key in jobs.get(rule, {})]


def training_files(config: dict, family: str) -> list[str]:
    """The training records the comparison reads beside the evaluations: the metrics file of each
    job of the family's TRAINING_RECORD rule (dual: train_dual's train.json), none without one."""
    rule = getattr(registry.plan(family), "TRAINING_RECORD", None)
    if rule is None:
        return []
    return [metrics_file(family, rule, key) for key in settings.plan_module(family).jobs(config).get(rule, {})]


def families(config: dict) -> list[str]:
    """The enabled families with at least one evaluation to compare."""
    return [f for f in evaluated() if settings.family(config, f) is not None and evaluation_files(config, f)]


def targets(config: dict) -> list[str]:
    return [path.format(family=f) for f in families(config) for path in (TESTS, SEEDS)]
