"""The positive-control job: which tables it reads and what the checks need from the config.

One job (`positive_control`, `xlt positive-control`) reads the tidy table of every enabled
family with checks and writes results/tables/positive_control.csv. Its `--spec` carries, from
the validated config, the demo world, the thresholds (`positive_control`) and per such family
what its checks need (its positive_control.spec: the source language, which runs pair with
which untrained baselines, and the data files whose size sets the chance level, the label
count of the evaluation sets, the number of candidate sentences in a test bitext, which the
job counts with the family's positive_control.resolve).
A check that the sweep cannot answer (e.g. no depth -1 in freeze_depth) is passed as
`not_run` with the reason, and reported as not run; rows the sweep promises but a table lacks
fail. Nothing here imports torch.
"""

from __future__ import annotations

import json

from xlt.core import registry, settings
from xlt.core.job_spec import JobSpec
from xlt.core.plan import RESULTS, Job
from xlt.report.positive_control.world import high_overlap as highest

SECTION = "positive_control"
TABLE = f"{RESULTS}/tables/{SECTION}.csv"
CATEGORY = "Positive control"
RULE = "positive_control"


def world(config: dict) -> dict:
    return settings.demo_world(config)


def high_overlap(config: dict) -> str:
    return highest(world(config))


def enabled_families(config: dict) -> list[str]:
    """The enabled families that have checks (a positive_control.py)."""
    return [
        name
        for name in registry.names()
        if settings.family(config, name) is not None and registry.positive_control(name) is not None
    ]


def check(config: dict) -> None:
    """The section's config check (xlt.core.settings.check_positive_control, which validation runs)."""
    settings.check_positive_control(config)


def spec(config: dict) -> dict:
    """What `xlt positive-control --spec` gets: world, thresholds and one entry per enabled
    family (a family without an entry is reported as not run). Data files appear by path
    (`label_files`, `bitext_files`); the job counts them."""
    thresholds = {k: v for k, v in config[SECTION].items() if k not in ("enabled", "known_failures")}
    out = {"world": world(config), "thresholds": thresholds, "known_failures": config[SECTION]["known_failures"]}
    for name in enabled_families(config):
        out[name] = registry.positive_control(name).spec(config)
    return out


def tables(config: dict) -> dict[str, str]:
    """family -> its tidy table, for every enabled family."""
    return {name: settings.plan_module(name).TABLE for name in enabled_families(config)}


def data_inputs(config: dict) -> list[str]:
    """The prepared datasets whose files the job counts (info.json: the prepare_data output)."""
    infos = [
        info
        for name in enabled_families(config)
        for info in getattr(registry.positive_control(name), "datasets", lambda config: [])(config)
    ]
    return list(dict.fromkeys(infos))


def jobs(config: dict) -> dict[str, dict[str, Job]]:
    """rule -> key -> Job: one `positive_control` job, keyed "" (its rule has no wildcards)."""
    if settings.family(config, SECTION) is None:
        return {RULE: {}}
    table_settings = [("table", f"{name}={path}") for name, path in tables(config).items()]
    job = Job(
        SECTION,
        inputs={"tables": list(tables(config).values()), "data": data_inputs(config)},
        spec=JobSpec("positive-control", [("spec", json.dumps(spec(config))), *table_settings, ("out", TABLE)]),
    )
    return {RULE: {"": job}}


def targets(config: dict) -> list[str]:
    return [TABLE] if settings.family(config, SECTION) is not None else []
