"""Trained model directories live only as long as a rule reads them (temp()), unless config
keep_models; alignment's freeze_depth models stay as workflow targets. The plan's disk follows."""

from __future__ import annotations

import re

import pytest
from helpers.workflow_runs import snakemake, workflow_copy

from xlt.core import settings
from xlt.cost import profile, retention, sweep


def _dry_run(work, *args) -> str:
    proc = snakemake(work, "-n", "--cores", "1", "--configfile", "config/paper.yaml", *args)
    return proc.stdout + proc.stderr


@pytest.mark.slow
def test_dry_run_removes_every_trained_model_but_the_kept_ones_and_carries_gpu_slots(tmp_path, dry_runs):
    config = settings.load("config/paper.yaml")
    planned = sweep.plan(config, profile.load("h100"))
    output = dry_runs.output("config/paper.yaml")
    removed = set(re.findall(r"^Would remove temporary output (\S+)$", output, re.M))
    kept = set(settings.plan_module("alignment").kept_models(config))
    temp = {
        retention.MODEL_DIR.format(family=j["family"], run_id=j["run_id"]) for j in planned["jobs"] if j["temp_gib"] > 0
    }
    assert len(kept) == 5 and not kept & removed
    # freeze_depth's runs (the cased mBERT's 42, the uncased one's 3) but alignment's 5 (the cased at
    # 4 depths, the uncased at -1), sbert's, dual's additive-margin runs (the grid's 20, the objective
    # comparison's 10 more: 2 more seeds from mBERT, 3 seeds from the teacher's checkpoint, 2 poolings),
    # its distilled student and that student's budget-matched twin at 3 seeds each
    assert removed == temp and len(removed) == 42 + 3 - 5 + 6 + 20 + 10 + 3 * 2
    # every model-loading job carries the slots the plan gives it, and asks SLURM for that many shards
    slots = {(j["rule"], j["run_id"]): j["slots"] for j in planned["jobs"]}
    seen = 0
    for rule, wildcards, resources in re.findall(
        r"^rule (\w+):\n(?:    .*\n)*?    wildcards: (.*)\n    resources: (.*)$", output, re.M
    ):
        found = re.search(r"gpu_slots=(\d+)", resources)
        if not found:
            continue
        key = "/".join(value for _, value in re.findall(r"(\w+)=([^,]+)", wildcards))
        assert int(found[1]) == slots[(rule, key)], (rule, key)
        assert f"gres=shard:{found[1]}" in resources and "gpu=" not in resources, resources
        seen += 1
    assert seen > 300
    # keep_models: nothing is removed, and MonoX teachers and students save their weights too
    kept_all = _dry_run(workflow_copy(tmp_path), "--config", "keep_models=True")
    assert "Would remove temporary output" not in kept_all
    outputs = dict(re.findall(r"^rule (train_teacher|distill):\n(?:    .*\n)*?    output: (.*)$", kept_all, re.M))
    assert set(outputs) == {"train_teacher", "distill"}
    assert all(
        re.search(r"results/runs/monox/(teachers|students)/[^/,]+/model(,|$)", line) for line in outputs.values()
    )
    assert "/model" not in " ".join(re.findall(r"^rule distill:\n(?:    .*\n)*?    output: (.*)$", output, re.M))


@pytest.mark.slow
def test_the_plans_disk_is_what_the_sweep_leaves():
    config = settings.load("config/paper.yaml")
    h100 = profile.load("h100")
    temp = sweep.plan(config, h100)
    keep = sweep.plan({**config, "keep_models": True}, h100)
    assert temp["total"]["temp_gib"] > 30 and keep["total"]["temp_gib"] == 0
    # with keep_models every trained model stays, MonoX teachers' and students' too (--save-model)
    weights = keep["families"]["monox"]["disk_gib"] - temp["families"]["monox"]["disk_gib"]
    assert keep["total"]["disk_gib"] == pytest.approx(temp["total"]["disk_gib"] + temp["total"]["temp_gib"] + weights)
    # without keep_models MonoX leaves its splits and teachers' logits only (xlt.cost.outputs)
    assert weights > 50 and 0 < temp["families"]["monox"]["disk_gib"] < 2
    # hub cache, prepared data, alignment's five freeze_depth models and the data-sized outputs: 11.6
    # GiB before issue 35, which added the budget-matched student's own teacher vectors (3.4 GiB) and
    # the uncased mBERT with its depth -1 model (16.2 GiB); issue 47's 3 seeds of the student and its
    # twin store 4 more copies of the teacher vectors (3.4 GiB each, planned as an upper bound): 30.0
    assert temp["total"]["disk_gib"] < 31
    jobs = settings.plan_module("monox").jobs({**config, "keep_models": True})
    assert all("--save-model" in job.args for rule in ("train_teacher", "distill") for job in jobs[rule].values())
    assert not any("--save-model" in job.args for job in settings.plan_module("monox").jobs(config)["distill"].values())
