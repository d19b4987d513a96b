"""What the generic aggregate, plot and training-curves rules read of a family (xlt.report.family_tables),
and the registry's optional hooks and plan defaults behind them."""

from __future__ import annotations

import copy

import pytest

from xlt.core import registry, settings
from xlt.report import family_tables

DEMO = settings.load("config.yaml")


def test_a_family_is_filed_under_its_own_category_and_plot_names():
    assert family_tables.category("sbert") == "Sentence embeddings"
    assert family_tables.category("alignment") == registry.plan("alignment").CATEGORY
    assert family_tables.plot_prefix("adapt") == "adapt-" and family_tables.plot_prefix("sbert") == ""
    assert family_tables.caption("monox").endswith("src/xlt/families/monox/caption.rst")


def test_the_table_is_made_of_the_evaluations_metrics_files_in_job_order():
    jobs = registry.plan("monox").jobs(DEMO)
    teachers = [f"results/runs/monox/teachers/{run}/metrics.json" for run in jobs["train_teacher"]]
    students = [f"results/runs/monox/students/{run}/metrics.json" for run in jobs["distill"]]
    assert family_tables.aggregate_inputs(DEMO, "monox") == teachers + students
    sbert = registry.plan("sbert").jobs(DEMO)["eval_sbert"]
    assert family_tables.aggregate_inputs(DEMO, "sbert") == [f"results/runs/sbert/{run}/eval.json" for run in sbert]
    # a plan whose table reads other files says which (dual: training, Tatoeba and mining files)
    assert family_tables.aggregate_inputs(DEMO, "dual") == registry.plan("dual").metrics_files(DEMO)


def test_a_disabled_family_aggregates_and_draws_nothing():
    config = copy.deepcopy(DEMO)
    config["sbert"]["enabled"] = False
    assert family_tables.aggregate_inputs(config, "sbert") == [] and family_tables.curve_files(config, "sbert") == []
    assert family_tables.draws_plots("sbert") and family_tables.draws_curves("sbert")
    assert not family_tables.draws_curves("alignment")  # it trains nothing


def test_a_hook_or_a_plan_member_a_family_leaves_out_has_its_default():
    assert registry.hook("sbert", "rehearsal", "derive") is None  # sbert has no rehearsal.py
    assert registry.hook("dual", "rehearsal", "required_rows", {}) == {}  # dual's has no required_rows
    assert registry.hook("monox", "rehearsal", "POOL_ROWS") == 200
    plan = registry.plan("alignment")
    assert (plan.BASELINE, plan.ORDERS, plan.PAPER_ONE_BASED) == (None, {}, frozenset())
    assert registry.PLAN_DEFAULTS["READS"] == () and registry.plan("sbert").READS == ()


@pytest.mark.parametrize("name", registry.names())
def test_every_family_has_its_rules_in_its_folder(name):
    assert registry.rules_file(name) == str(registry.folder(name) / "rules.smk")
