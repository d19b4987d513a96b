"""Which evaluation files each family's comparison reads, and the tables it writes (the
workflow's `compare` rule and `rule all` ask here). Torch-free, like the plans it reads."""
from __future__ import annotations

from xlt.core import settings
from xlt.core.plan import RESULTS

CATEGORY = "Statistics: paired tests and seed spread"
TESTS = f"{RESULTS}/tables/{{family}}_tests.csv"
SEEDS = f"{RESULTS}/tables/{{family}}_seeds.csv"
# family -> (rule whose jobs evaluate, the metrics file each job writes): the evaluations that
# write per-example outputs (adapt's perplexities have none, so adapt has no tests table)
EVALUATIONS = {
    "freeze_depth": [("evaluate_xnli", "{run}/eval.json")],
    "sbert": [("eval_sbert", "{run}/eval.json")],
    "dual": [("tatoeba_dual", "{run}/tatoeba.json")],
    "monox": [("train_teacher", "{teacher}/metrics.json"), ("distill", "{student}/metrics.json")],
    "alignment": [("align_layers", "{run}/alignment.json")],
}


def evaluation_files(config: dict, family: str) -> list[str]:
    plan = settings.plan_module(family)
    jobs = plan.jobs(config)
    dirs = {"run": getattr(plan, "RUN", ""), "teacher": getattr(plan, "TEACHER", ""), "student": getattr(plan, "STUDENT", "")}
    files = []
    for rule, pattern in EVALUATIONS[family]:
        template = pattern.format(**dirs)
        files += [template.format(run_id=run_id) for run_id in jobs.get(rule, {})]
    return files


def families(config: dict) -> list[str]:
    """The enabled families with at least one evaluation to compare."""
    return [f for f in EVALUATIONS if settings.family(config, f) is not None and evaluation_files(config, f)]


def targets(config: dict) -> list[str]:
    return [path.format(family=f) for f in families(config) for path in (TESTS, SEEDS)]
