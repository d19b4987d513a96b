"""`xlt rehearse`'s config keeps the paper sweep: the same rules and jobs per rule, and only
training length, split slices, MonoX's labelled fraction (its pool), the t-SNE sample, CPUs and
the report's rehearsal flag changed."""
from __future__ import annotations

import copy
from pathlib import Path

import pandas as pd
import yaml

from helpers.workflow_runs import job_counts, snakemake, workflow_copy
from xlt.core.settings import validate
from xlt.rehearse.datasets import required_rows
from xlt.rehearse.derive import POOL_ROWS, STEPS, TSNE_SAMPLE, derive

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
            for key in ("cpus", "gpus", "mem_mb"):
                value["resources"].pop(key, None)
            for task in value.get("tasks", []):
                task.pop("training", None)
                task.pop("labelled_fraction", None)
                task.pop("teacher_training", None)
    for spec in config["datasets"].values():
        spec.pop("split_names", None)
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
    # adapt's curve runs checkpoint every STEPS // 2 steps, its other schemes' runs once at the end
    assert derived["adapt"]["scheme_eval"]["eval_every"] == STEPS and PAPER["adapt"]["scheme_eval"]["eval_every"] == 100
    # the paper compiles its long jobs; four steps on a CPU run eager (compiling takes minutes there)
    assert PAPER["freeze_depth"]["training"]["compile"] and PAPER["monox"]["tasks"][0]["training"]["compile"]
    assert not any(section.get("compile") for section in _training_sections(derived))
    # Dutch Wikipedia's 80k/10k/10k slices scaled with the stand-in data, split names kept
    assert derived["datasets"]["nl-wiki"]["split_names"] == {"train": "train[:320]", "dev": "train[320:360]",
                                                             "test": "train[360:400]"}
    assert derived["datasets"]["xnli"]["split_names"] == {"dev": "validation"}
    # the t-SNE pictures sample fewer pairs (t-SNE on 960 points was most of an align job's CPU)
    assert derived["alignment"]["tsne_sample"] == TSNE_SAMPLE < PAPER["alignment"]["tsne_sample"]


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


def test_rehearsal_plans_the_paper_jobs_and_the_cut_down_every_rule(tmp_path):
    work = workflow_copy(tmp_path)
    for name, config in (("full.yaml", derive(PAPER)), ("cut.yaml", derive(PAPER, cut_down=True))):
        (work / name).write_text(yaml.safe_dump(config))
    counts = {name: job_counts(snakemake(work, "-n", "--cores", "1", "--configfile", name).stdout)
              for name in ("config/paper.yaml", "full.yaml", "cut.yaml")}
    assert counts["full.yaml"] == counts["config/paper.yaml"]
    assert set(counts["cut.yaml"]) == set(counts["config/paper.yaml"])
    assert counts["cut.yaml"]["total"] < counts["config/paper.yaml"]["total"] / 3


def test_the_rehearsals_overlay_says_its_values_are_not_results(tmp_path):
    from xlt.report import paper

    config = validate(derive(PAPER))
    assert "--rehearsal" in paper.config_args(config) and "--rehearsal" not in paper.config_args(validate(PAPER))
    delta = pd.DataFrame([{"family": "sbert", "setting": "pooling=mean", "lang": "en", "metric": "spearman",
                           "theirs": 0.77, "matched": "yes", "reason": "", "run_id": "r", "ours": 0.1,
                           "ci_low": 0.05, "ci_high": 0.15, "delta": -0.67, "source": "seed 000, STS block"}])
    title = paper.overlay_plot(delta, tmp_path / "o.png", rehearsal=True).axes[0].get_title()
    assert paper.REHEARSAL in title
    assert paper.REHEARSAL not in paper.overlay_plot(delta, tmp_path / "p.png").axes[0].get_title()


def _training_sections(config: dict) -> list[dict]:
    sections = [config["training"]]
    for family in config.values():
        if isinstance(family, dict):
            sections += [family[k] for k in ("training",) if isinstance(family.get(k), dict)]
            sections += [t[k] for t in family.get("tasks", []) for k in ("training", "teacher_training") if k in t]
    return sections
