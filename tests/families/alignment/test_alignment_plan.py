"""The alignment plan: config checks, one row per analysed model, the exact `xlt align` jobs."""

import copy
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from xlt.core import settings
from xlt.core.errors import XltError
from xlt.families.alignment import plan
from xlt.families.dual import plan as dual_plan

REPO = Path(__file__).resolve().parents[3]
PAPER = "config/paper.yaml"
DUAL_RUN = "demo-mbert-margin0.3-scale10-mean-bs32-depthnone-seed1"


def raw_config(path="config.yaml"):
    return yaml.safe_load((REPO / path).read_text())


def demo_config(**alignment):
    config = raw_config()
    config["alignment"].update(alignment)
    return settings.validate(config)


def test_rows_cover_pretrained_dual_and_freeze_depth_models():
    config = demo_config(freeze_depths=[-1, 6])
    rows = plan.runs(config)
    # the dual runs: both additive margins and the distilled student
    assert [r["source"] for r in rows] == ["pretrained", "dual", "dual", "dual", "freeze_depth", "freeze_depth"]
    assert rows[0] == {
        "run_id": "pretrained-demo-mbert",
        "source": "pretrained",
        "model": "demo-mbert",
        "source_run": None,
    }
    assert rows[1]["source_run"] == dual_plan.runs(config)[0]["run_id"]
    assert rows[3]["source_run"] == "demo-mbert-distill-mean-bs32-depthnone-seed1"
    assert [r["source_run"] for r in rows[4:]] == ["demo-mbert-depthnone-seed1", "demo-mbert-depth06-seed1"]
    assert [r["run_id"] for r in rows[4:]] == [
        "freeze_depth-demo-mbert-depthnone-seed1",
        "freeze_depth-demo-mbert-depth06-seed1",
    ]


def test_named_dual_runs_and_first_seed_only():
    config = raw_config()
    config["freeze_depth"]["seeds"] = [3, 4]
    config["alignment"].update(dual_runs=[DUAL_RUN], freeze_depths=[2])
    rows = plan.runs(settings.validate(config))
    assert [r["run_id"] for r in rows] == [
        "pretrained-demo-mbert",
        f"dual-{DUAL_RUN}",
        "freeze_depth-demo-mbert-depth02-seed3",
    ]


def test_defaults_come_from_the_schema():
    config = raw_config()
    config["alignment"] = {"data": {"dataset": "demo-bitext", "langs": ["qaa"]}, "models": ["demo-mbert"]}
    family = settings.validate(config)["alignment"]
    assert family == {
        "data": {"dataset": "demo-bitext", "langs": ["qaa"], "split": "test"},
        "models": ["demo-mbert"],
        "enabled": True,
        "dual_runs": "all",
        "freeze_depths": [],
        "layers": "all",
        "pooling": "mean",
        "center": True,
        "tsne_layers": [],
        "tsne_sample": 100,
        "projection": "tsne",
        "english_label": "en",
        "resources": {"cpus": 1},
    }


@pytest.mark.parametrize("section", [None, {"enabled": False}])
def test_absent_or_disabled_family_plans_nothing(section):
    config = raw_config()
    if section is None:
        del config["alignment"]
    else:
        config["alignment"] = section  # enabled: false needs no other key
    config = settings.validate(config)
    assert plan.runs(config) == [] and plan.targets(config) == [] and plan.run_plots(config) == {}
    assert plan.jobs(config) == {"align_layers": {}}


def test_align_job_runs_the_complete_command():
    config = demo_config()
    jobs = plan.jobs(config)
    assert list(jobs) == ["align_layers"]
    assert list(jobs["align_layers"]) == [
        "pretrained-demo-mbert",
        "dual-demo-mbert-margin0-scale10-mean-bs32-depthnone-seed1",
        f"dual-{DUAL_RUN}",
        "dual-demo-mbert-distill-mean-bs32-depthnone-seed1",
    ]
    job = jobs["align_layers"][f"dual-{DUAL_RUN}"]
    run = f"results/runs/alignment/dual-{DUAL_RUN}"
    assert [str(a) for a in job.args] == [
        "--model",
        f"results/runs/dual/{DUAL_RUN}/model",
        "--bitext",
        "results/data/demo-bitext/qaa/test.jsonl",
        "--bitext",
        "results/data/demo-bitext/qab/test.jsonl",
        "--bitext",
        "results/data/demo-bitext/qac/test.jsonl",
        "--layers",
        "all",
        "--pooling",
        "mean",
        "--max-length",
        "48",
        "--english-label",
        "en",
        "--center",
        "--tsne-layers",
        "0,6,12",
        "--tsne-sample",
        "40",
        "--projection",
        "tsne",
        "--axes",
        f'{{"model": "demo-mbert", "source": "dual", "source_run": "{DUAL_RUN}"}}',
        "--run-id",
        f"dual-{DUAL_RUN}",
        "--out-metrics",
        f"{run}/alignment.json",
        "--out-table",
        f"{run}/layers.csv",
        "--out-plots",
        f"{run}/plots",
    ]
    assert job.inputs == {"model": f"results/runs/dual/{DUAL_RUN}/model", "data": "results/data/demo-bitext/info.json"}
    assert job.axes == {"model": "demo-mbert", "source": "dual", "source_run": DUAL_RUN}
    pretrained = jobs["align_layers"]["pretrained-demo-mbert"]
    assert pretrained.args[:2] == ["--model", "results/models/demo-mbert"]
    assert pretrained.inputs["model"] == ["results/models/demo-mbert"]
    assert '--axes \'{"model": "demo-mbert", "source": "pretrained", "source_run": ""}\'' in pretrained.cli


def test_optional_flags_follow_the_settings():
    config = demo_config(
        models=[],
        dual_runs=[],
        freeze_depths=[0],
        layers=[0, 4],
        center=False,
        tsne_layers=[],
        pooling="cls",
        english_label="eng",
    )
    (job,) = plan.jobs(config)["align_layers"].values()
    assert job.run_id == "freeze_depth-demo-mbert-depth00-seed1"
    args = [str(a) for a in job.args]
    assert args[:2] == ["--model", "results/runs/freeze_depth/demo-mbert-depth00-seed1/model"]
    assert args[8:16] == ["--layers", "0,4", "--pooling", "cls", "--max-length", "48", "--english-label", "eng"]
    assert "--center" not in args and "--tsne-layers" not in args and "--tsne-sample" not in args
    assert plan.run_plots(config) == {"by_layer": "retrieval_by_layer.png"}


def test_targets_are_the_table_the_figure_and_every_run_picture():
    config = demo_config(projection="pca")
    assert plan.run_plots(config) == {"by_layer": "retrieval_by_layer.png", "projection": "pca_layers.png"}
    targets = plan.targets(config)
    assert targets[:3] == [
        "results/tables/alignment.csv",
        "results/tables/alignment_summary.csv",
        "results/plots/alignment/alignment-by-layer.png",
    ]
    assert targets[3:5] == [
        "results/runs/alignment/pretrained-demo-mbert/plots/retrieval_by_layer.png",
        "results/runs/alignment/pretrained-demo-mbert/plots/pca_layers.png",
    ]
    assert len(targets) == 3 + 4 * 2 + 4  # table, summary, figure, two pictures per run, a gap figure per run
    assert targets[-4:] == [f"results/plots/alignment/cosine-gap/{row['run_id']}.png" for row in plan.runs(config)]


def test_paper_sweep_analyses_mbert_every_dual_run_and_four_depths():
    config = settings.validate(raw_config(PAPER))
    rows = plan.runs(config)
    assert sum(r["source"] == "pretrained" for r in rows) == 1
    assert sum(r["source"] == "dual" for r in rows) == len(dual_plan.runs(config))
    # and the uncased anchor of the freeze_depth sweep, swept at depth -1 only (config model_depths)
    assert [r["source_run"] for r in rows if r["source"] == "freeze_depth"] == [
        "mbert-depthnone-seed1",
        "mbert-depth00-seed1",
        "mbert-depth04-seed1",
        "mbert-depth08-seed1",
        "mbert-uncased-depthnone-seed1",
    ]
    job = plan.jobs(config)["align_layers"]["pretrained-mbert"]
    assert job.args[:2] == ["--model", "bert-base-multilingual-cased"] and job.inputs["model"] == []
    assert "--english-label eng" in job.cli and "--tsne-sample 200" in job.cli


@pytest.mark.parametrize(
    "mutate, message",
    [
        (
            lambda c: c["alignment"]["data"].update(dataset="demo-sts"),
            r"alignment.data.dataset: dataset 'demo-sts' is a sts dataset",
        ),
        (
            lambda c: c["alignment"]["data"].update(langs=["qaa", "deu"]),
            r"alignment.data: dataset 'demo-bitext' has no test split for \['deu'\]",
        ),
        (lambda c: c["alignment"].update(models=["xlmr"]), r"alignment.models: unknown model 'xlmr'"),
        (lambda c: c["alignment"].update(dual_runs=["nope"]), r"alignment.dual_runs: unknown dual run\(s\) \['nope'\]"),
        (
            lambda c: c["alignment"].update(freeze_depths=[5]) or c["freeze_depth"].update(depths=[-1, 0]),
            r"alignment.freeze_depths: depth\(s\) \[5\] are not in the freeze_depth sweep",
        ),
        (
            lambda c: c["alignment"].update(tsne_layers=[0, 13]),
            r"alignment.tsne_layers: hidden-state index\(es\) \[13\] out of range .* 12 layers",
        ),
        (
            lambda c: c["alignment"].update(layers=[14]),
            r"alignment.layers: hidden-state index\(es\) \[14\] out of range",
        ),
        (
            lambda c: c["alignment"].update(models=[], freeze_depths=[]) or c["dual"].update(enabled=False),
            r"alignment: nothing to analyse",
        ),
    ],
)
def test_cross_reference_errors_name_the_key(mutate, message):
    config = copy.deepcopy(raw_config())
    mutate(config)
    with pytest.raises(XltError, match=message):
        settings.validate(config)


@pytest.mark.parametrize(
    "mutate, where",
    [
        (lambda c: c["alignment"].update(projection="umap"), "alignment.projection"),
        (lambda c: c["alignment"].update(tsne_sample=1), "alignment.tsne_sample"),
        (lambda c: c["alignment"].pop("data"), "alignment"),
        (lambda c: c["alignment"].update(layer=[0]), "alignment"),  # typo for layers
    ],
)
def test_schema_errors_name_the_key(mutate, where):
    config = copy.deepcopy(raw_config())
    mutate(config)
    with pytest.raises(XltError, match=rf"config error at {where}"):
        settings.validate(config)


def test_plan_imports_no_torch():
    code = "import sys, xlt.families.alignment.plan; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


@pytest.mark.slow
def test_dry_run_runs_the_planned_commands(dry_runs):
    from helpers.workflow_runs import job_counts

    output = dry_runs.output("config.yaml")  # what the Snakefile reads without --configfile
    counts = job_counts(output)
    config = demo_config()
    jobs = plan.jobs(config)["align_layers"]
    assert counts["align_layers"] == len(jobs) == 4
    assert counts["aggregate_alignment"] == counts["plot_alignment"] == 1
    shell = sorted(
        line.split("Shell command: ", 1)[1] for line in output.splitlines() if "Shell command: xlt align " in line
    )
    assert shell == sorted(
        f"xlt align {job.cli} > results/logs/alignment/{run_id}.log 2>&1" for run_id, job in jobs.items()
    )


def test_the_old_max_length_key_names_its_new_home():
    config = raw_config()
    config["alignment"]["max_length"] = 64
    with pytest.raises(XltError, match=r"drop alignment.max_length and set evaluation: \{max_length: 64\}"):
        settings.validate(config)
