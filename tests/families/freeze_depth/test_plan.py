"""The freeze-depth plan: its runs, the exact command line of each job, its config checks."""

from pathlib import Path

import pytest
import yaml

from xlt.core.errors import XltError
from xlt.core.settings import validate
from xlt.families.freeze_depth import plan

REPO = Path(__file__).resolve().parents[3]


def demo_config():
    return yaml.safe_load((REPO / "config.yaml").read_text())


def test_demo_sweep_has_every_depth():
    runs = plan.runs(validate(demo_config()))
    assert [r["freeze_depth"] for r in runs] == list(range(-1, 13))
    assert runs[0]["run_id"] == "demo-mbert-depthnone-seed1"
    assert runs[8]["run_id"] == "demo-mbert-depth07-seed1"


def test_jobs_carry_the_complete_command_lines():
    config = validate(demo_config())
    config["freeze_depth"]["depths"] = [3]
    config["freeze_depth"]["seeds"] = [2]
    config["freeze_depth"]["cache_frozen_prefix"] = True
    jobs = plan.jobs(config)
    run = "demo-mbert-depth03-seed2"
    assert list(jobs["finetune"]) == [run] and list(jobs["evaluate_xnli"]) == [run]
    finetune = jobs["finetune"][run]
    assert finetune.args == [
        "--model",
        "results/models/demo-mbert",
        "--head",
        "pooler",  # demo models default to the pooler head
        "--train",
        "results/data/demo-nli/en/train.jsonl",
        "--dev",
        "results/data/demo-nli/en/dev.jsonl",
        "--num-labels",
        3,
        "--freeze-depth",
        3,
        "--cache-frozen-prefix",
        "--seed",
        2,
        "--epochs",
        "1.0",
        "--max-steps",
        "300",
        "--batch-size",
        "32",
        "--lr",
        "0.001",
        "--weight-decay",
        "0.01",
        "--warmup-ratio",
        "0.3",
        "--max-grad-norm",
        "1.0",
        "--grad-accum",
        "1",
        "--eval-every",
        "50",
        "--max-length",
        "48",
        "--precision",
        "auto",
        "--device",
        "auto",
        "--log-every",
        "20",
        "--checkpoint-every",
        "0",
        "--length-bucketing",
        "False",
        "--compile",
        "False",
        "--schedule",
        "linear",
        "--tensorboard",  # the demo config's monitor.tensorboard
        "true",
        "--axes",
        '{"model": "demo-mbert"}',
        "--run-id",
        run,
        "--out",
        f"results/runs/freeze_depth/{run}",
    ]
    assert finetune.inputs == {"model": ["results/models/demo-mbert"], "data": "results/data/demo-nli/info.json"}
    assert finetune.axes == {"model": "demo-mbert", "freeze_depth": 3, "seed": 2}
    evaluate = jobs["evaluate_xnli"][run]
    assert evaluate.cli == (
        f"--model results/runs/freeze_depth/{run}/model --train-metrics results/runs/freeze_depth/{run}/train.json "
        "--data results/data/demo-nli/en/test.jsonl results/data/demo-nli/qaa/test.jsonl "
        "results/data/demo-nli/qab/test.jsonl results/data/demo-nli/qac/test.jsonl --langs en,qaa,qab,qac "
        f"--max-length 48 --out results/runs/freeze_depth/{run}/eval.json"
    )


def test_the_command_line_parses_to_the_planned_values():
    from xlt.cli import build_parser

    config = validate(demo_config())
    job = plan.jobs(config)["finetune"]["demo-mbert-depthnone-seed1"]
    args = build_parser("finetune").parse_args(["finetune", *map(str, job.args)])
    assert (args.freeze_depth, args.seed, args.num_labels, args.max_steps, args.lr) == (-1, 1, 3, 300, 1e-3)
    assert args.warmup_ratio == 0.3  # freeze_depth's own training settings override the shared ones
    assert args.cache_frozen_prefix is True and args.length_bucketing is False


def test_label_count_comes_from_the_dataset_task():
    config = demo_config()
    config["freeze_depth"]["train"]["dataset"] = config["freeze_depth"]["eval"]["dataset"] = "demo-sentiment"
    config = validate(config)
    job = next(iter(plan.jobs(config)["finetune"].values()))
    assert job.args[job.args.index("--num-labels") + 1] == 2


def test_depth_beyond_the_model_names_the_key():
    config = demo_config()
    config["freeze_depth"]["depths"] = [0, 13]
    with pytest.raises(XltError, match=r"freeze depth 13 in freeze_depth.depths .* 12 layers"):
        validate(config)


def test_unknown_dataset_names_the_key_and_the_choices():
    config = demo_config()
    config["freeze_depth"]["train"]["dataset"] = "mnli"
    with pytest.raises(
        XltError, match=r"freeze_depth.train.dataset: unknown dataset 'mnli'; declared datasets: .*demo-nli"
    ):
        validate(config)


def test_a_dataset_of_another_task_is_refused():
    config = demo_config()
    config["freeze_depth"]["train"]["dataset"] = "demo-sts"
    with pytest.raises(
        XltError,
        match=r"freeze_depth.train.dataset: dataset 'demo-sts' is a sts dataset; this needs a "
        r"nli or sentiment dataset",
    ):
        validate(config)


def test_missing_language_split_is_caught():
    config = demo_config()
    config["freeze_depth"]["eval"]["langs"] = ["en", "de"]
    with pytest.raises(XltError, match=r"no test split for \['de'\]"):
        validate(config)


def test_targets_are_the_table_and_both_figures():
    config = validate(demo_config())
    assert plan.targets(config) == [
        "results/tables/freeze_depth.csv",
        "results/tables/freeze_depth_summary.csv",
        "results/plots/freeze_depth/accuracy-vs-depth.png",
        "results/plots/freeze_depth/accuracy-heatmap.png",
        "results/plots/freeze_depth/training-curves.png",
    ]
    # the curves figure reads every fine-tuning run's curve, written beside its train.json
    assert (
        plan.curve_files(config)
        == [f"results/runs/freeze_depth/{run_id}/train.curve.csv" for run_id in plan.jobs(config)["finetune"]]
        != []
    )
    del config["freeze_depth"]
    assert plan.targets(config) == [] and plan.jobs(config) == {"finetune": {}, "evaluate_xnli": {}}


def test_warmup_ratios_is_a_sweep_axis():
    config = demo_config()
    config["freeze_depth"].update(depths=[0], warmup_ratios=[0.0, 0.25])
    config = validate(config)
    rows = plan.runs(config)
    assert [(r["run_id"], r["warmup_ratio"]) for r in rows] == [
        ("demo-mbert-depth00-seed1-warmup0", 0.0),
        ("demo-mbert-depth00-seed1-warmup0.25", 0.25),
    ]
    job = plan.jobs(config)["finetune"]["demo-mbert-depth00-seed1-warmup0.25"]
    from xlt.cli import build_parser

    args = build_parser("finetune").parse_args(["finetune", *map(str, job.args)])
    assert args.warmup_ratio == 0.25  # the swept value wins over training.warmup_ratio (0.1)
    assert args.axes == '{"model": "demo-mbert", "warmup_ratio": 0.25}' and job.axes["warmup_ratio"] == 0.25


def test_an_unswept_axis_leaves_run_ids_and_arguments_alone():
    config = validate(demo_config())
    assert config["freeze_depth"]["warmup_ratios"] == []
    job = plan.jobs(config)["finetune"]["demo-mbert-depth05-seed1"]
    assert job.args[job.args.index("--axes") + 1] == '{"model": "demo-mbert"}'  # the model name only
    assert job.args.count("--warmup-ratio") == 1


def shared_config(depths):
    config = demo_config()
    config["freeze_depth"].update(
        depths=depths, seeds=[1, 2], cache_frozen_prefix=True, prefix_states={"shared": True, "max_gib": 2.5}
    )
    return validate(config)


def test_shared_prefix_states_one_job_per_model_read_by_every_frozen_depth():
    from xlt.cli import build_parser

    config = shared_config([-1, 0, 5, 12])
    jobs = plan.jobs(config)
    store = "results/prefix_states/freeze_depth/demo-mbert"
    assert list(jobs["prefix_states"]) == ["demo-mbert"]
    job = jobs["prefix_states"]["demo-mbert"]
    assert job.args == [
        "--model",
        "results/models/demo-mbert",
        "--head",
        "pooler",
        "--num-labels",
        3,
        "--train",
        "results/data/demo-nli/en/train.jsonl",
        "--depths",
        "0,5,12",  # -1 has no prefix
        "--max-length",
        48,
        "--batch-size",
        32,
        "--storage-dtype",
        "float16",
        "--max-gib",
        2.5,
        "--precision",
        "auto",
        "--device",
        "auto",
        "--out",
        store,
    ]
    assert job.inputs == {"model": ["results/models/demo-mbert"], "data": "results/data/demo-nli/info.json"}
    args = build_parser("prefix-states").parse_args(["prefix-states", *map(str, job.args)])
    assert (args.depths, args.max_gib, args.storage_dtype, args.max_length) == ("0,5,12", 2.5, "float16", 48)
    assert args.precision == "auto"  # the finetune jobs' precision: the pass runs under their autocast
    finetune = jobs["finetune"]
    assert len(finetune) == 8  # 4 depths x 2 seeds, one store
    config["freeze_depth"]["prefix_states"]["shared"] = False
    per_job = plan.jobs(config)["finetune"]
    for run_id, job in finetune.items():
        if job.axes["freeze_depth"] < 0:  # nothing frozen: the job of the per-job cache, which trains uncached
            assert job == per_job[run_id] and "prefix_states" not in job.inputs
        else:
            assert job.args[job.args.index("--prefix-states") + 1] == store and "--cache-frozen-prefix" not in job.args
            assert job.inputs["prefix_states"] == store
            parsed = build_parser("finetune").parse_args(["finetune", *map(str, job.args)])
            assert parsed.prefix_states == store and parsed.max_length == args.max_length
            assert parsed.precision == args.precision
    # the store's pass batches as training does, so fp32 storage is bitwise the per-job cache
    assert (
        args.batch_size
        == build_parser("finetune")
        .parse_args(["finetune", *map(str, finetune["demo-mbert-depth05-seed1"].args)])
        .batch_size
    )


def test_the_store_is_off_unless_asked_for():
    config = validate(demo_config())
    assert config["freeze_depth"]["prefix_states"] == {"shared": False, "storage_dtype": "float16", "max_gib": 64}
    assert "prefix_states" not in plan.jobs(config)  # the demo plans what it planned before
    assert plan.jobs(shared_config([-1]))["prefix_states"] == {}  # no depth >= 0: nothing to store


def test_shared_prefix_states_settings_are_validated():
    config = demo_config()
    config["freeze_depth"].update(cache_frozen_prefix=False, prefix_states={"shared": True})
    with pytest.raises(
        XltError, match=r"freeze_depth.prefix_states.shared: true .* needs freeze_depth.cache_frozen_prefix: true"
    ):
        validate(config)
    for bad, where in (
        ({"max_gib": 0}, "max_gib"),
        ({"storage_dtype": "bfloat16"}, "storage_dtype"),
        ({"share": True}, "prefix_states"),
    ):
        config = demo_config()
        config["freeze_depth"]["prefix_states"] = bad
        with pytest.raises(XltError, match=rf"config error at freeze_depth.prefix_states.*{where}|{where}.*"):
            validate(config)


def test_a_sweep_mixing_cached_and_uncached_depths_is_refused_unless_allowed():
    """With cache_frozen_prefix, depth -1 trains uncached (dropout in every layer) beside cached
    depths (frozen layers without dropout): the config check refuses that unless told."""
    config = demo_config()
    assert config["freeze_depth"]["allow_mixed_caching"] is True  # the demo says so explicitly
    del config["freeze_depth"]["allow_mixed_caching"]
    with pytest.raises(
        XltError,
        match=r"freeze_depth.cache_frozen_prefix: true .* freeze_depth.depths also has "
        r"depth -1, .* Set freeze_depth.allow_mixed_caching: true",
    ):
        validate(config)
    config = demo_config()
    config["freeze_depth"].update(depths=[-1, 4], allow_mixed_caching=False)
    with pytest.raises(XltError, match="allow_mixed_caching"):
        validate(config)
    # nothing mixes: every depth cached, or none
    for change in ({"depths": [0, 6]}, {"cache_frozen_prefix": False}):
        config = demo_config()
        del config["freeze_depth"]["allow_mixed_caching"]
        config["freeze_depth"].update(change)
        assert validate(config)["freeze_depth"]["allow_mixed_caching"] is False


def test_model_depths_sweeps_a_model_at_its_own_depths():
    """An anchor model (the one a published number is for) runs at that number's depth alone."""
    raw = demo_config()
    raw["models"]["demo-anchor"] = dict(raw["models"]["demo-mbert"])
    raw["freeze_depth"]["models"] = ["demo-mbert", "demo-anchor"]
    raw["freeze_depth"]["model_depths"] = {"demo-anchor": [-1]}
    config = validate(raw)
    plan.check(config)
    runs = plan.runs(config)
    assert [r["freeze_depth"] for r in runs if r["model"] == "demo-mbert"] == list(range(-1, 13))
    assert [r["run_id"] for r in runs if r["model"] == "demo-anchor"] == ["demo-anchor-depthnone-seed1"]
    assert list(plan.jobs(config)["finetune"])[-1] == "demo-anchor-depthnone-seed1"


def test_model_depths_of_an_unswept_model_or_out_of_range_are_refused():
    raw = demo_config()
    raw["freeze_depth"]["model_depths"] = {"demo-other": [-1]}
    with pytest.raises(XltError, match="freeze_depth.model_depths: demo-other not in freeze_depth.models"):
        plan.check(validate(raw))
    raw["freeze_depth"]["model_depths"] = {"demo-mbert": [13]}
    with pytest.raises(XltError, match="freeze_depth.model_depths.demo-mbert"):
        plan.check(validate(raw))


def test_the_paper_anchor_runs_train_with_the_published_rows_recipe():
    """The published XNLI rows (uncased mBERT, nothing frozen) come from google-research/bert's
    multilingual.md XNLI command: lr 5e-5, 2 epochs, batch 32, 128 tokens, 10 % warm-up. The runs
    they are matched with train the same way (issue 35: like with like), and so does the cased sweep."""
    from xlt.core import settings

    config = settings.load(str(REPO / "config" / "paper.yaml"))
    recipe = {"--lr": "5e-05", "--epochs": "2", "--batch-size": "32", "--max-length": "128", "--warmup-ratio": "0.1"}
    jobs = plan.jobs(config)["finetune"]
    assert {run for run in jobs if "uncased" in run} == {f"mbert-uncased-depthnone-seed{s}" for s in (1, 2, 3)}
    for run, job in jobs.items():
        flags = dict(zip(job.args[::2], job.args[1::2]))
        assert {flag: flags[flag] for flag in recipe} == recipe, run
