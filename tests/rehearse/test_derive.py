"""`xlt rehearse`'s config keeps the paper sweep: the same rules and jobs per rule, and only
training length (adapt's curve runs to the last published checkpoint, every other job a few
steps), split slices, MonoX's labelled fraction (its pool), the t-SNE sample, CPUs and the
report's rehearsal flag changed."""

from __future__ import annotations

import copy
from pathlib import Path

import pandas as pd
import pytest
import yaml
from helpers.workflow_runs import job_counts, snakemake, workflow_copy

from xlt.core.errors import XltError
from xlt.core.settings import validate
from xlt.families.alignment.rehearsal import TSNE_SAMPLE
from xlt.families.monox.rehearsal import POOL_ROWS
from xlt.rehearse.datasets import required_rows
from xlt.rehearse.derive import STEPS, derive

REPO = Path(__file__).resolve().parents[2]
PAPER = yaml.safe_load((REPO / "config" / "paper.yaml").read_text())


def _without_changes(config: dict) -> dict:
    """`config` less what the rehearsal may change."""
    config = copy.deepcopy(config)
    config.pop("training")
    config["report"].pop("rehearsal", None)
    for value in config.values():
        if isinstance(value, dict) and "resources" in value:
            value.pop("training", None)
            value.get("distill", {}).pop("training", None)
            value.get("scheme_eval", {}).pop("eval_every", None)
            value.get("curve", {}).pop("training", None)
            for key in ("cpus", "gpus", "mem_mb"):
                value["resources"].pop(key, None)
            for task in value.get("tasks", []):
                task.pop("training", None)
                task.pop("labelled_fraction", None)
                task.pop("teacher_training", None)
    for spec in config["datasets"].values():
        spec.pop("split_names", None)
        spec.pop("sentences", None)
    config["alignment"].pop("tsne_sample", None)
    return config


def test_derived_config_keeps_everything_but_training_slices_and_resources():
    derived = derive(PAPER)
    validate(copy.deepcopy(derived))
    assert _without_changes(derived) == _without_changes(PAPER)
    assert derived["report"]["rehearsal"] is True and "rehearsal" not in PAPER["report"]
    assert derived["training"]["max_steps"] == STEPS and derived["monox"]["tasks"][0]["training"]["max_steps"] == STEPS
    assert all(derived[f]["training"]["max_steps"] == STEPS for f in ("sbert", "adapt", "monox", "dual"))
    # the distilled runs' own settings (5 epochs in the paper) are capped too
    assert derived["dual"]["distill"]["training"]["max_steps"] == STEPS
    assert derived["dual"]["distill"]["training"]["lr"] == PAPER["dual"]["distill"]["training"]["lr"]
    # its 10,000 warm-up steps would outlast the 4 steps: the capped run warms up by its ratio
    assert PAPER["dual"]["distill"]["training"]["warmup_steps"] == 10000
    assert "warmup_steps" not in derived["dual"]["distill"]["training"]
    # adapt's curve runs checkpoint every STEPS // 2 steps, its other schemes' runs once at the end
    assert derived["adapt"]["scheme_eval"]["eval_every"] == STEPS and PAPER["adapt"]["scheme_eval"]["eval_every"] == 100
    # the paper compiles its long jobs; four steps on a CPU run eager (compiling takes minutes there)
    assert PAPER["freeze_depth"]["training"]["compile"] and PAPER["monox"]["tasks"][0]["training"]["compile"]
    assert not any(section.get("compile") for section in _training_sections(derived))
    # Dutch Wikipedia's 80k/10k/10k sentences scaled with the stand-in data, from fewer articles
    assert derived["datasets"]["nl-wiki"]["sentences"] == {
        "pool": "train[:160]",
        "seed": 1,
        "sizes": {"train": 320, "dev": 40, "test": 40},
    }
    assert derived["datasets"]["xnli"]["split_names"] == {"dev": "validation"}
    # the t-SNE pictures sample fewer pairs (t-SNE on 960 points was most of an align job's CPU)
    assert derived["alignment"]["tsne_sample"] == TSNE_SAMPLE < PAPER["alignment"]["tsne_sample"]


def _published_steps() -> list[int]:
    """Our steps of adapt's published per-step rows, read here from the CSV: seed 003 counts from 1."""
    published = pd.read_csv(REPO / "src" / "xlt" / "families" / "adapt" / "paper_results.csv")
    return sorted(
        {int(dict(kv.split("=") for kv in s.split(";"))["step"]) - 1 for s in published.setting if "step=" in s}
    )


def _flag(job, flag: str) -> str:
    return str(job.args[job.args.index(flag) + 1])


def test_adapt_curve_runs_train_to_the_last_published_checkpoint_and_the_other_runs_stay_capped():
    """The paper's curve runs (adapt.curve.schemes) train far enough to pass every published
    checkpoint (Table 1's last step) and evaluate on the paper's schedule, so each published step is
    one of their checkpoints; the layer schemes' runs keep the cap, as does every other job."""
    from xlt.families.adapt.plan import jobs

    steps = _published_steps()
    derived = derive(PAPER)
    every = PAPER["adapt"]["training"]["eval_every"]
    assert derived["adapt"]["curve"]["training"]["max_steps"] == max(steps) > STEPS
    assert derived["adapt"]["curve"]["training"]["eval_every"] == every and all(step % every == 0 for step in steps)
    assert derived["adapt"]["training"]["max_steps"] == STEPS and "training" not in PAPER["adapt"]["curve"]
    planned = jobs(validate(copy.deepcopy(derived)))["adapt_mlm"]
    curve = {run_id: job for run_id, job in planned.items() if job.axes["scheme"] in PAPER["adapt"]["curve"]["schemes"]}
    assert len(curve) == len(PAPER["adapt"]["seeds"]) and len(planned) == 15
    assert all(
        _flag(job, "--max-steps") == str(max(steps)) and _flag(job, "--eval-every") == str(every)
        for job in curve.values()
    )
    assert all(_flag(job, "--max-steps") == str(STEPS) for run_id, job in planned.items() if run_id not in curve)
    # one resumable save half way, not one every STEPS // 2 of 1,500 steps
    assert all(_flag(job, "--checkpoint-every") == str(max(steps) // 2) for job in curve.values())


def test_a_paper_configs_own_curve_training_is_capped_or_extended(monkeypatch):
    """A paper config that gives its curve runs their own training (here longer and compiled) gets
    them extended to the last published step on their own schedule, and capped, not left at paper
    length, where the family has no published steps."""
    from xlt.families.adapt import rehearsal as module

    paper = copy.deepcopy(PAPER)
    paper["adapt"]["curve"]["training"] = {"max_steps": 30000, "eval_every": 25, "compile": True}
    curve = derive(paper)["adapt"]["curve"]["training"]
    assert (curve["max_steps"], curve["eval_every"], curve["compile"]) == (max(_published_steps()), 25, False)
    monkeypatch.setattr(module, "published_steps", lambda family: [])
    curve = derive(paper)["adapt"]["curve"]["training"]
    assert (curve["max_steps"], curve["eval_every"], curve["compile"]) == (STEPS, STEPS // 2, False)
    assert "training" not in derive(PAPER)["adapt"]["curve"]  # nothing published, nothing to reach


def test_a_published_step_off_the_papers_schedule_is_refused(monkeypatch):
    from xlt.families.adapt import rehearsal as module

    monkeypatch.setattr(module, "published_steps", lambda family: [0, 500, 1520])
    try:
        derive(PAPER)
    except XltError as err:
        assert "adapt's published steps [1520] (ours) are no checkpoints of the paper's eval_every 50" in str(err)
    else:
        raise AssertionError("derive accepted a published step the paper's schedule never evaluates")


def test_the_curve_runs_checkpoints_match_every_published_step(tmp_path):
    """End to end but for the model: each rehearsal curve run's training flags, through the training
    loop itself (a one-weight model), give the steps it evaluates; records at those steps, aggregated
    and matched with the arguments the workflow passes, match Table 1's #1, #501 and #1501 in Dutch
    and on the XNLI mix, once per seed."""
    import argparse
    import shlex

    import torch

    from xlt.cli import main
    from xlt.core.metrics import MetricsFile
    from xlt.core.train_args import train_args_from
    from xlt.core.train_inputs import DevSelection, Objective
    from xlt.core.training import train
    from xlt.families.adapt.commands import VERBS
    from xlt.families.adapt.plan import jobs
    from xlt.report import paper

    config = validate(derive(PAPER))
    parser = argparse.ArgumentParser()
    VERBS["adapt-mlm"].add_arguments(parser)  # the job's flags as `xlt adapt-mlm` reads them
    files = []
    for run_id, job in jobs(config)["adapt_mlm"].items():
        if job.axes["scheme"] != "0-12":
            continue
        args = train_args_from(parser.parse_args([str(a) for a in job.args]))
        result = train(
            torch.nn.Linear(1, 1),
            Objective(
                list(range(320)),
                lambda batch: {"x": torch.ones(len(batch), 1)},
                lambda model, batch: model(batch["x"]).pow(2).mean(),
            ),
            args,
            dev=DevSelection(lambda model: {"score": 0.0}),
        )
        evaluated = [0, *(entry["step"] for entry in result.history)]  # adapt scores step 0 before training
        metrics = MetricsFile("adapt", run_id, axes=job.axes, meta={"model": "loaded/elsewhere"}, manifest=False)
        for step in evaluated:
            for lang in ("nl", "multilingual"):
                metrics.add("perplexity", 9.0, lang=lang, split="dev", step=step)
        metrics.add("perplexity", 8.0, lang="nl", split="test")
        files.append(tmp_path / "runs" / run_id / "metrics.json")
        metrics.write(files[-1])
        assert set(_published_steps()) <= set(evaluated)
    assert len(files) == 3
    table, out = tmp_path / "adapt.csv", tmp_path / "paper_delta.csv"
    assert main(["aggregate", *map(str, files), "--out", str(table)]) == 0
    assert (
        main(
            [
                "paper-delta",
                f"adapt={table}",
                *shlex.split(paper.config_args(config)),
                "--out-table",
                str(out),
                "--out-plot",
                str(tmp_path / "overlay.png"),
            ]
        )
        == 0
    )
    delta = pd.read_csv(out, keep_default_na=False)
    steps = delta[delta.setting.str.contains("step=")]
    assert len(steps[["setting", "lang"]].drop_duplicates()) == 6 and set(steps.matched) == {"yes"}, (
        steps.reason.tolist()
    )
    assert steps.groupby(["setting", "lang"]).size().eq(3).all()  # three seeds each
    assert set(steps[steps.setting.str.contains("step=1501")].note) == {
        "published step #1501 (1-based) is our step 1500"
    }


def test_monox_keeps_its_sizes_with_a_small_unlabelled_pool():
    from xlt.families.monox.teacher_student import split_labelled

    derived = derive(PAPER)
    xnli = derived["monox"]["tasks"][0]
    assert xnli["sizes"] == PAPER["monox"]["tasks"][0]["sizes"] and xnli["labelled_fraction"] > 0.9
    rows = required_rows(validate(copy.deepcopy(derived)))[("xnli", "train")]
    labelled, pool = split_labelled([{"text": str(i), "label": i % 3} for i in range(rows)], xnli["labelled_fraction"])
    assert len(labelled) >= max(s for s in xnli["sizes"] if isinstance(s, int)) and len(pool) == POOL_ROWS
    assert "labelled_fraction" not in derived["monox"]["tasks"][1]  # CLS: its own unlabelled split


def test_cut_down_keeps_one_seed_and_two_depths():
    cut = derive(PAPER, cut_down=True)
    validate(copy.deepcopy(cut))
    assert cut["freeze_depth"]["seeds"] == [1] and cut["freeze_depth"]["depths"] == [-1, 0]
    assert cut["alignment"]["freeze_depths"] == [-1, 0]
    assert cut["adapt"]["schemes"] == PAPER["adapt"]["schemes"]  # each scheme is planned differently
    # both objectives stay, and the distilled student's teacher is still an sbert run of the cut sweep
    from xlt.families.dual import plan as dual

    cut = validate(copy.deepcopy(cut))
    assert {row["objective"] for row in dual.runs(cut)} == {"additive_margin", "mse_distill"}


@pytest.mark.slow
def test_rehearsal_plans_the_paper_jobs_and_the_cut_down_every_rule(tmp_path, dry_runs):
    work = workflow_copy(tmp_path)
    for name, config in (("full.yaml", derive(PAPER)), ("cut.yaml", derive(PAPER, cut_down=True))):
        (work / name).write_text(yaml.safe_dump(config))
    counts = {
        name: job_counts(snakemake(work, "-n", "--cores", "1", "--configfile", name).stdout)
        for name in ("full.yaml", "cut.yaml")
    }
    counts["config/paper.yaml"] = job_counts(dry_runs("config/paper.yaml").stdout)
    assert counts["full.yaml"] == counts["config/paper.yaml"]
    assert set(counts["cut.yaml"]) == set(counts["config/paper.yaml"])
    assert counts["cut.yaml"]["total"] < counts["config/paper.yaml"]["total"] / 3


def test_the_rehearsals_overlay_says_its_values_are_not_results(tmp_path):
    from xlt.report import paper, paper_overlay

    config = validate(derive(PAPER))
    assert "--rehearsal" in paper.config_args(config) and "--rehearsal" not in paper.config_args(validate(PAPER))
    delta = pd.DataFrame(
        [
            {
                "family": "sbert",
                "setting": "pooling=mean",
                "lang": "en",
                "metric": "spearman",
                "theirs": 0.77,
                "matched": "yes",
                "reason": "",
                "run_id": "r",
                "ours": 0.1,
                "ci_low": 0.05,
                "ci_high": 0.15,
                "delta": -0.67,
                "source": "seed 000, STS block",
            }
        ]
    )
    title = paper_overlay.overlay_plot(delta, tmp_path / "o.png", rehearsal=True).axes[0].get_title()
    assert paper_overlay.REHEARSAL in title
    assert paper_overlay.REHEARSAL not in paper_overlay.overlay_plot(delta, tmp_path / "p.png").axes[0].get_title()


def _training_sections(config: dict) -> list[dict]:
    sections = [config["training"]]
    for family in config.values():
        if isinstance(family, dict):
            sections += [family[k] for k in ("training",) if isinstance(family.get(k), dict)]
            sections += [t[k] for t in family.get("tasks", []) for k in ("training", "teacher_training") if k in t]
    return sections
