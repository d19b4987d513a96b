"""The DAG plans the dual-encoder and alignment jobs, for the demo and (offline) the paper config."""

import pytest
import yaml
from helpers.workflow_runs import REPO, job_counts

from xlt.core import settings
from xlt.families.dual import plan
from xlt.families.freeze_depth.plan import model_depths  # a model may be swept at its own depths only


@pytest.mark.slow
@pytest.mark.parametrize("configfile", ["config.yaml", "config/paper.yaml"])
def test_dry_run_lists_dual_and_alignment_jobs(dry_runs, configfile):
    counts = job_counts(dry_runs.output(configfile))
    config = settings.validate(yaml.safe_load((REPO / configfile).read_text()))
    dual, mining = config["dual"], config["dual"]["mining"]
    # the grid from the pretrained model, and the objective comparison's margin runs (dual.comparison:
    # its margins, scales, starts and seeds) that the grid does not have
    compared = dual["comparison"]
    points = {(m, s, "pretrained", seed) for m in dual["margins"] for s in dual["scales"] for seed in dual["seeds"]}
    points |= {
        (m, s, start, seed)
        for m in compared.get("margins", dual["margins"])
        for s in compared.get("scales", dual["scales"])
        for start in compared["starts"]
        for seed in compared.get("seeds", dual["seeds"])
    }
    runs = (
        len(dual["models"])
        * len(points)
        * len(dual["poolings"])
        * len(dual["batch_sizes"])
        * len(dual["freeze_depths"])
    )
    distilling = "mse_distill" in dual["objectives"]  # both configs: the students and the teacher's own row
    assert distilling and "additive_margin" in dual["objectives"]
    distill = dual["distill"]
    distilled = (
        len(dual["models"])
        * len(distill.get("poolings", dual["poolings"]))
        * (1 if "batch_size" in distill["training"] else len(dual["batch_sizes"]))
        * len(dual["freeze_depths"])
        * len(compared.get("seeds", dual["seeds"]))  # the students at the comparison's seeds
    )
    runs += distilled * (2 if distill.get("match_budget") else 1)  # each with its budget-matched twin
    pairs = len(mining.get("langs", mining.get("pairs", [])))
    align = config["alignment"]
    depth_runs = sum(
        len(set(align["freeze_depths"]) & set(model_depths(config, model)))
        for model in config["freeze_depth"]["models"]
    )
    assert counts["train_dual"] == runs == len(plan.runs(config))
    baselines = len(dual["models"]) * len(dual["poolings"])  # the untrained encoder (dual.baselines, default on)
    assert counts["tatoeba_dual"] == runs + baselines + 1 == runs + len(plan.baselines(config)) + 1
    assert counts["mine"] == runs * pairs
    assert counts["make_bucc"] == pairs
    assert (
        counts["align_layers"]
        == len(align["models"]) + runs + depth_runs
        == len(settings.plan_module("alignment").runs(config))
    )
    for rule in ("aggregate_dual", "aggregate_alignment", "plot_alignment"):
        assert counts[rule] == 1
    figures = [t for t in plan.targets(config) if t.endswith(".png") and t != plan.CURVES]  # xlt plot's figures
    assert counts["plot_dual"] == 3 + (len(dual["margins"]) > 1) + (len(dual["scales"]) > 1) == len(figures)
