"""The MonoX family in the Snakemake DAG: one train_teacher job per (teacher, task, training size,
seed) whose logits feed several distill jobs, for the demo and the paper config (offline)."""

import re
from collections import Counter
from pathlib import Path

import pytest
import yaml

from xlt.core.settings import validate
from xlt.families.monox.plan import runs

ROOT = Path(__file__).resolve().parents[3]
pytestmark = pytest.mark.slow


def dry_run_jobs(output: str):
    """Every job of a dry run in a fresh workflow copy (the whole DAG) as
    {"rule", "input": [...], "wildcards": {...}}."""
    jobs, job = [], None
    for line in output.splitlines():
        start = re.match(r"^(?:local)?rule (\w+):$", line)
        if start:
            job = {"rule": start.group(1), "input": [], "wildcards": {}}
            jobs.append(job)
        elif job is not None and line.startswith("    input: "):
            job["input"] = line[len("    input: ") :].split(", ")
        elif job is not None and line.startswith("    wildcards: "):
            job["wildcards"] = dict(kv.split("=", 1) for kv in line[len("    wildcards: ") :].split(", "))
    return jobs


def effective_config(*configfiles):
    """The config Snakemake runs with: config.yaml, or the --configfile(s) instead of it
    (the Snakefile reads config.yaml only when none is given; several are merged in order),
    validated (defaults filled in) as the Snakefile does."""

    def merge(base, new):
        for k, v in new.items():
            base[k] = merge(base.get(k, {}), v) if isinstance(v, dict) and isinstance(base.get(k), dict) else v
        return base

    config = {}
    for f in configfiles or ("config.yaml",):
        config = merge(config, yaml.safe_load((ROOT / f).read_text()))
    return validate(config)


@pytest.mark.parametrize("configfiles", [(), ("config/paper.yaml",)], ids=["demo", "paper"])
def test_teacher_trains_once_and_feeds_many_students(configfiles, dry_runs):
    # the Snakefile reads config.yaml when no --configfile is given
    jobs = dry_run_jobs(dry_runs((configfiles or ("config.yaml",))[-1]).stdout)
    rules = Counter(j["rule"] for j in jobs)
    for rule in ("monox_split", "train_teacher", "distill", "aggregate_monox", "plot_monox_table", "plot_monox"):
        assert rules[rule] >= 1, f"no {rule} job in the DAG"

    rows = runs(effective_config(*configfiles))
    teachers = {r["run_id"]: r for r in rows if r["role"] == "teacher"}
    students = {r["run_id"]: r for r in rows if r["role"] == "student"}
    teacher_jobs = [j["wildcards"]["run_id"] for j in jobs if j["rule"] == "train_teacher"]
    # exactly one train_teacher job per (teacher, task, size, seed), and none other
    assert Counter(
        (teachers[t]["teacher"], teachers[t]["task"], teachers[t]["size"], teachers[t]["seed"]) for t in teacher_jobs
    ) == Counter((r["teacher"], r["task"], r["size"], r["seed"]) for r in teachers.values())
    assert len(teacher_jobs) == len(set(teacher_jobs)) == len(teachers)
    distill = {j["wildcards"]["run_id"]: j for j in jobs if j["rule"] == "distill"}
    assert set(distill) == set(students)

    # every kd/pl student reads exactly its teacher's logits; finetune/self_train read none
    fed = Counter()
    for run_id, job in distill.items():
        logits = [p for p in job["input"] if p.endswith("/logits.npz")]
        if students[run_id]["mode"] in ("kd", "pl"):
            assert logits == [f"results/runs/monox/teachers/{students[run_id]['teacher_run_id']}/logits.npz"]
            fed[students[run_id]["teacher_run_id"]] += 1
        else:
            assert logits == []
    assert set(fed) == set(teacher_jobs)
    assert min(fed.values()) >= 2  # at least pl + kd per teacher: the teacher is shared, not retrained
    # the headline teacher feeds pl and kd at every temperature
    family = effective_config(*configfiles)["monox"]
    for t, row in teachers.items():
        if row["headline"]:
            task = next(s for s in family["tasks"] if s["dataset"] == row["task"])
            temperatures = set(task["temperatures"]) | {family["temperature"]}
            assert fed[t] == 1 + len(temperatures)

    splits = [j for j in jobs if j["rule"] == "monox_split"]
    assert len(splits) == len({(r["task"], r["seed"]) for r in rows})
    # a split's job id is its directory below splits/: one per (task, seed)
    assert {j["wildcards"]["run_id"] for j in splits} == {f"{r['task']}/seed{r['seed']}" for r in rows}
