"""The `dual` section and its plan: sweep expansion, defaults, errors that name the key, and
the exact `xlt` arguments of every rule's jobs."""

import copy
import itertools
from pathlib import Path

import pytest
import yaml

from xlt import cli
from xlt.core import settings
from xlt.core.errors import XltError
from xlt.core.job_spec import JobSpec
from xlt.core.settings import validate
from xlt.families.dual import plan

REPO = Path(__file__).resolve().parents[3]
RUN = "tiny-margin0.2-scale5-cls-bs8-depth01-seed3"
BASELINE = "tiny-cls-untrained"


def demo_config():
    return yaml.safe_load((REPO / "config.yaml").read_text())


def paper_config():
    return yaml.safe_load((REPO / "config" / "paper.yaml").read_text())


def small_config(**dual):
    """Just what the dual family needs: a 4-layer model, a bitext set, one run."""
    return {
        "models": {"tiny": {"source": "demo", "layers": 4}},
        "datasets": {
            "bt": {
                "source": "demo",
                "task": "bitext",
                "languages": ["qaa", "qab"],
                "splits": ["train", "dev", "test"],
                "sizes": {"train": 10, "dev": 5, "test": 5},
            }
        },
        "training": {"max_steps": 7, "lr": 0.01},
        "evaluation": {"max_length": 40},  # every evaluation job's length; training's is dual.training's 24
        "dual": {
            "models": ["tiny"],
            "train": {"dataset": "bt", "langs": ["qaa", "qab"]},
            "tatoeba": {"dataset": "bt", "langs": ["qab"]},
            "margins": [0.2],
            "scales": [5],
            "poolings": ["cls"],
            "batch_sizes": [8],
            "freeze_depths": [1],
            "seeds": [3],
            "mining": {"source": "bitext", "dataset": "bt", "langs": ["qaa"]},
            "training": {"max_length": 24},
            **dual,
        },
    }


def test_xlt_sweep_prints_the_dual_runs(capsys, tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(small_config(margins=[0, 0.2])))
    assert settings.plan_module("dual").runs is plan.runs
    assert cli.main(["sweep", "--config", str(path)]) == 0
    out = capsys.readouterr().out
    assert "# dual: 2 runs" in out
    assert "tiny-margin0-scale5-cls-bs8-depth01-seed3" in out and RUN in out


def test_demo_dual_sweep_is_margin_0_and_03_and_one_distilled_run():
    runs = plan.runs(validate(demo_config()))
    assert [(r["objective"], r["margin"]) for r in runs] == [
        ("additive_margin", 0),
        ("additive_margin", 0.3),
        ("mse_distill", None),
    ]
    assert runs[1]["run_id"] == "demo-mbert-margin0.3-scale10-mean-bs32-depthnone-seed1"
    assert runs[2]["run_id"] == "demo-mbert-distill-mean-bs32-depthnone-seed1" and runs[2]["scale"] is None
    assert {k for k in runs[0]} == {
        "run_id",
        "model",
        "objective",
        "margin",
        "scale",
        "pooling",
        "batch_size",
        "freeze_depth",
        "seed",
        "sentences_seen",
        "start",
    }
    assert {r["start"] for r in runs} == {"pretrained"}  # no dual.comparison: every run from the model


def test_every_axis_is_swept_as_a_product_with_unique_readable_ids():
    config = demo_config()
    config["dual"].update(
        margins=[0, 0.1, 0.25],
        scales=[5, 10],
        poolings=["mean", "cls"],
        batch_sizes=[8, 16],
        freeze_depths=[-1, 3],
        seeds=[1, 2],
        objectives=["additive_margin"],
    )
    runs = plan.runs(validate(config))
    assert len(runs) == 3 * 2 * 2 * 2 * 2 * 2
    expected = set(itertools.product([0, 0.1, 0.25], [5, 10], ["mean", "cls"], [8, 16], [-1, 3], [1, 2]))
    assert {
        (r["margin"], r["scale"], r["pooling"], r["batch_size"], r["freeze_depth"], r["seed"]) for r in runs
    } == expected
    assert len({r["run_id"] for r in runs}) == len(runs)
    assert "demo-mbert-margin0.25-scale5-cls-bs16-depth03-seed2" in {r["run_id"] for r in runs}


def test_defaults_batch_size_from_training_and_dev_from_train_dataset():
    config = demo_config()
    for key in ("margins", "scales", "poolings", "batch_sizes", "freeze_depths", "seeds", "symmetric", "objectives"):
        config["dual"].pop(key)
    config["training"]["batch_size"] = 24
    validate(config)
    assert plan.bitext_spec(config, "dev") == {"dataset": "demo-bitext", "langs": ["qaa", "qab", "qac"], "split": "dev"}
    (run,) = plan.runs(config)  # the objective axis defaults to the additive margin alone
    assert run["objective"] == "additive_margin" and (
        run["margin"],
        run["scale"],
        run["pooling"],
        run["batch_size"],
        run["freeze_depth"],
        run["seed"],
    ) == (0.3, 10, "mean", 24, -1, 1)
    assert config["dual"]["symmetric"] == "sum"
    # the schema fills the mining defaults (the demo names only source, dataset, langs and gold_fraction)
    mining = config["dual"]["mining"]
    assert {
        k: mining[k]
        for k in ("english", "tune_split", "test_split", "k", "strategy", "seed", "hub_split", "tune_fraction", "path")
    } == {
        "english": "en",
        "tune_split": "dev",
        "test_split": "test",
        "k": 4,
        "strategy": "max",
        "seed": 1,
        "hub_split": "test",
        "tune_fraction": 0.2,
        "path": "mteb/bucc-bitext-mining",
    }
    # the family's own training batch size wins over the shared one
    config = small_config()
    del config["dual"]["batch_sizes"]
    config["dual"]["training"]["batch_size"] = 6
    assert [r["batch_size"] for r in plan.runs(validate(config))] == [6]
    # a dev section of its own keeps the train languages unless it names others
    config = small_config(dev={"split": "test"})
    assert plan.bitext_spec(validate(config), "dev") == {"dataset": "bt", "langs": ["qaa", "qab"], "split": "test"}


def test_disabled_family_expands_to_nothing_and_needs_no_other_key():
    config = demo_config()
    config["dual"]["enabled"] = False
    config["alignment"]["enabled"] = False
    validate(config)
    assert plan.runs(config) == [] and settings.plan_module("alignment").runs(config) == []
    assert plan.jobs(config) == {"train_dual": {}, "tatoeba_dual": {}, "make_bucc": {}, "mine": {}}
    assert plan.targets(config) == [] and plan.metrics_files(config) == []
    config = small_config()
    config["dual"] = {"enabled": False}
    assert plan.runs(validate(config)) == []
    del config["dual"]
    assert plan.runs(validate(config)) == [] and plan.mining_pairs(config) == []


def test_baselines_one_untrained_encoder_per_model_and_pooling():
    config = validate(demo_config())
    assert config["dual"]["baselines"] is True  # the default
    assert plan.baselines(config) == [{"run_id": "demo-mbert-mean-untrained", "model": "demo-mbert", "pooling": "mean"}]
    config = small_config(poolings=["cls", "mean"])
    config["models"]["other"] = {"source": "demo", "layers": 4}
    config["dual"]["models"] = ["tiny", "other"]
    validate(config)
    assert [row["run_id"] for row in plan.baselines(config)] == [
        "tiny-cls-untrained",
        "tiny-mean-untrained",
        "other-cls-untrained",
        "other-mean-untrained",
    ]
    jobs = plan.jobs(config)
    assert set(jobs["tatoeba_dual"]) == {r["run_id"] for r in plan.runs(config)} | {
        r["run_id"] for r in plan.baselines(config)
    }
    assert set(jobs["train_dual"]) == {r["run_id"] for r in plan.runs(config)}  # nothing trains a baseline
    assert all("untrained" not in key for key in jobs["mine"])
    # the alignment family analyses trained dual runs only
    assert all(not row["run_id"].endswith("untrained") for row in plan.runs(config))
    off = validate(small_config(baselines=False))
    assert plan.baselines(off) == [] and list(plan.jobs(off)["tatoeba_dual"]) == [RUN]
    assert plan.metrics_files(off)[-1] == f"results/runs/dual/{RUN}/mine/qaa-en.json"


def test_mining_pairs():
    assert plan.mining_pairs(validate(demo_config())) == ["qaa-en"]
    assert plan.mining_pairs(validate(paper_config())) == ["de-en", "fr-en", "ru-en", "zh-en"]
    config = small_config()
    del config["dual"]["mining"]
    assert plan.mining_pairs(validate(config)) == []


def test_paper_sweep_has_the_seeds_margins():
    runs = [r for r in plan.runs(validate(paper_config())) if r["objective"] == "additive_margin"]
    assert sorted({r["margin"] for r in runs}) == [0, 0.1, 0.2, 0.3, 0.4]
    grid = [r for r in runs if r["seed"] == 1 and r["start"] == "pretrained"]
    assert len(grid) == 5 * 2 * 2  # margins x scales x poolings, seed 1, from mBERT


def test_paper_compares_the_objectives_from_both_starts_at_three_seeds():
    """Issue 47: LaBSE's margin 0.3 at scale 10, both poolings, from mBERT and from the teacher's NLI
    checkpoint (the sbert run the students distil), and the distilled runs, each at seeds 1-3."""
    config = validate(paper_config())
    runs = plan.runs(config)
    compared = [r for r in runs if r["objective"] == "additive_margin" and (r["margin"], r["scale"]) == (0.3, 10)]
    assert sorted((r["start"], r["pooling"], r["seed"]) for r in compared) == sorted(
        itertools.product(["pretrained", "teacher"], ["cls", "mean"], [1, 2, 3])
    )
    others = [r for r in runs if r["objective"] == "additive_margin" and r not in compared]
    assert {(r["start"], r["seed"]) for r in others} == {("pretrained", 1)}  # the rest of the grid: one seed
    distilled = [r for r in runs if r["objective"] == "mse_distill"]
    assert sorted((r["max_steps"] or 0, r["seed"]) for r in distilled) == [(0, 1), (0, 2), (0, 3)] + [
        (75_000, seed) for seed in (1, 2, 3)
    ]
    assert {r["start"] for r in distilled} == {"pretrained"}  # the student: mBERT, taught by the NLI run
    teacher_start = next(r for r in compared if r["start"] == "teacher")
    job = plan.jobs(config)["train_dual"][teacher_start["run_id"]]
    assert teacher_start["run_id"] == "mbert-fromteacher-margin0.3-scale10-cls-bs256-depthnone-seed1"
    model = "results/runs/sbert/mbert-mean-L-1-depthnone-seed1/model"  # dual.distill.teacher's directory
    assert job.spec.get("model") == model and job.inputs["model"] == [model]
    assert '"start": "teacher"' in job.spec.get("axes")


def test_jobs_carry_the_complete_xlt_arguments_of_every_rule():
    config = validate(small_config())
    jobs = plan.jobs(config)
    assert {rule: list(by_key) for rule, by_key in jobs.items()} == {
        "train_dual": [RUN],
        "tatoeba_dual": [RUN, BASELINE],
        "make_bucc": ["qaa-en"],
        "mine": [f"{RUN}/qaa-en"],
    }
    run_dir = f"results/runs/dual/{RUN}"
    train = jobs["train_dual"][RUN]
    assert train.inputs == {
        "model": ["results/models/tiny"],
        "train": "results/data/bt/info.json",
        "dev": "results/data/bt/info.json",
    }
    assert [str(a) for a in train.args] == [
        "--model",
        "results/models/tiny",
        "--train",
        "results/data/bt/qaa/train.jsonl",
        "--train",
        "results/data/bt/qab/train.jsonl",
        "--dev",
        "results/data/bt/qaa/dev.jsonl",
        "--dev",
        "results/data/bt/qab/dev.jsonl",
        "--match",
        "index",
        "--margin",
        "0.2",
        "--scale",
        "5",
        "--pooling",
        "cls",
        "--symmetric",
        "sum",
        "--freeze-depth",
        "1",
        "--seed",
        "3",
        # every training setting, TrainArgs' defaults filled in; the swept batch size replaces batch_size
        "--epochs",
        "1.0",
        "--max-steps",
        "7",
        "--batch-size",
        "8",
        "--lr",
        "0.01",
        "--weight-decay",
        "0.01",
        "--warmup-ratio",
        "0.1",
        "--max-grad-norm",
        "1.0",
        "--grad-accum",
        "1",
        "--eval-every",
        "0",
        "--max-length",
        "24",
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
        # the planned budget: 7 steps x 8 pairs x 2 sentences
        "--axes",
        '{"model": "tiny", "sentences_seen": 112, "start": "pretrained"}',
        "--run-id",
        RUN,
        "--out",
        run_dir,
    ]
    axes = (
        '{"model": "tiny", "objective": "additive_margin", "margin": 0.2, "scale": 5, "pooling": "cls", '
        '"batch_size": 8, "freeze_depth": 1, "seed": 3, "sentences_seen": 112, "start": "pretrained", "trained": true}'
    )
    tatoeba = jobs["tatoeba_dual"][RUN]
    assert tatoeba.inputs == {"model": f"{run_dir}/model", "data": "results/data/bt/info.json"}
    assert [str(a) for a in tatoeba.args] == [
        "--model",
        f"{run_dir}/model",
        "--pooling",
        "cls",
        "--bitext",
        "results/data/bt/qab/test.jsonl",
        "--match",
        "index",
        "--axes",
        axes,
        "--run-id",
        RUN,
        "--family",
        "dual",
        "--max-length",
        "40",
        "--out",
        f"{run_dir}/tatoeba.json",
    ]
    assert f"--axes '{axes}'" in tatoeba.cli  # one shell word
    # the untrained encoder: the same evaluation of the pretrained model, no training axes
    baseline = jobs["tatoeba_dual"][BASELINE]
    assert baseline.inputs == {"model": ["results/models/tiny"], "data": "results/data/bt/info.json"}
    untrained = (
        '{"model": "tiny", "objective": null, "margin": null, "scale": null, "pooling": "cls", '
        '"batch_size": null, "freeze_depth": null, "seed": null, "sentences_seen": null, "start": null, '
        '"trained": false}'
    )
    assert [str(a) for a in baseline.args] == [
        "--model",
        "results/models/tiny",
        "--pooling",
        "cls",
        "--bitext",
        "results/data/bt/qab/test.jsonl",
        "--match",
        "index",
        "--axes",
        untrained,
        "--run-id",
        BASELINE,
        "--family",
        "dual",
        "--max-length",
        "40",
        "--out",
        f"results/runs/dual/{BASELINE}/tatoeba.json",
    ]
    bucc = jobs["make_bucc"]["qaa-en"]
    assert bucc.inputs == {"data": "results/data/bt/info.json"}
    assert [str(a) for a in bucc.args] == [
        "--pair",
        "qaa-en",
        "--out",
        "results/bucc/qaa-en",
        "--bitext",
        "dev=results/data/bt/qaa/dev.jsonl",
        "--bitext",
        "test=results/data/bt/qaa/test.jsonl",
        "--gold-fraction",
        "0.5",
        "--seed",
        "1",
    ]
    mine = jobs["mine"][f"{RUN}/qaa-en"]
    assert mine.inputs == {"bucc": "results/bucc/qaa-en"}
    assert [str(a) for a in mine.args] == [
        "--model",
        f"{run_dir}/model",
        "--bucc-dir",
        "results/bucc/qaa-en",
        "--pair",
        "qaa-en",
        "--tune-split",
        "dev",
        "--test-split",
        "test",
        "--pooling",
        "cls",
        "--k",
        "4",
        "--strategy",
        "max",
        "--max-length",
        "40",
        "--axes",
        axes,
        "--run-id",
        RUN,
        "--out-metrics",
        f"{run_dir}/mine/qaa-en.json",
    ]
    # the rule file's outputs come from the same templates
    assert plan.TATOEBA.format(run_id=RUN) == tatoeba.args[-1]
    assert plan.MINED.format(run_id=RUN, pair="qaa-en") == mine.args[-1]
    assert plan.BUCC.format(pair="qaa-en") == bucc.args[3]


def test_hub_and_local_mining_sources():
    config = validate(
        small_config(
            mining={"source": "hf", "pairs": ["de-en"], "revision": "abc", "k": 3, "tune_fraction": 0.3, "seed": 7}
        )
    )
    jobs = plan.jobs(config)
    bucc = jobs["make_bucc"]["de-en"]
    assert bucc.inputs == {}  # read from the hub
    assert [str(a) for a in bucc.args] == [
        "--pair",
        "de-en",
        "--out",
        "results/bucc/de-en",
        "--hub-dataset",
        "mteb/bucc-bitext-mining",
        "--hub-split",
        "test",
        "--tune-fraction",
        "0.3",
        "--split-names",
        "dev,test",
        "--revision",
        "abc",
        "--seed",
        "7",
    ]
    assert [str(a) for a in jobs["mine"][f"{RUN}/de-en"].args[:14]] == [
        "--model",
        f"results/runs/dual/{RUN}/model",
        "--bucc-dir",
        "results/bucc/de-en",
        "--pair",
        "de-en",
        "--tune-split",
        "dev",
        "--test-split",
        "test",
        "--pooling",
        "cls",
        "--k",
        "3",
    ]

    local = validate(small_config(mining={"source": "local", "dir": str(REPO), "pairs": ["fr-en"]}))
    jobs = plan.jobs(local)
    assert jobs["make_bucc"] == {}  # local BUCC files are read where they are
    mine = jobs["mine"][f"{RUN}/fr-en"]
    assert mine.inputs == {"bucc": str(REPO)} and mine.args[3] == str(REPO)


def test_targets_and_aggregated_files():
    config = validate(small_config(margins=[0, 0.2]))
    runs = [r["run_id"] for r in plan.runs(config)]
    assert plan.metrics_files(config) == [
        f"results/runs/dual/{run}/{name}" for run in runs for name in ("train.json", "tatoeba.json", "mine/qaa-en.json")
    ] + [f"results/runs/dual/{BASELINE}/tatoeba.json"]
    # a line against an axis needs two values of it; mining needs mining
    assert plan.targets(config) == [
        "results/tables/dual.csv",
        "results/tables/dual_summary.csv",
        "results/plots/dual/dual-error-vs-margin.png",
        "results/plots/dual/dual-tatoeba-heatmap.png",
        "results/plots/dual/dual-mining.png",
        "results/plots/dual/training-curves.png",
    ]
    # trained runs draw a curve; the untrained baseline does not
    assert plan.curve_files(config) == [f"results/runs/dual/{run}/train.curve.csv" for run in runs if run != BASELINE]
    assert len(plan.curve_files(config)) == 2
    config = small_config(scales=[5, 10])
    del config["dual"]["mining"]
    validate(config)
    assert plan.targets(config) == [
        "results/tables/dual.csv",
        "results/tables/dual_summary.csv",
        "results/plots/dual/dual-error-vs-scale.png",
        "results/plots/dual/dual-tatoeba-heatmap.png",
        "results/plots/dual/training-curves.png",
    ]
    assert plan.jobs(config)["mine"] == {} and plan.jobs(config)["make_bucc"] == {}
    assert plan.metrics_files(config) == [
        f"results/runs/dual/{run}/{name}"
        for run in [r["run_id"] for r in plan.runs(config)]
        for name in ("train.json", "tatoeba.json")
    ] + [f"results/runs/dual/{BASELINE}/tatoeba.json"]


def test_distillation_alone_accumulates_gradients():
    """mse_distill's loss is a mean over examples, exact under micro-batching; the margin's is not."""
    config = copy.deepcopy(demo_config())
    config["dual"].update(objectives=["mse_distill"])
    config["dual"]["training"].update(grad_accum=2)
    validate(config)
    config = copy.deepcopy(demo_config())
    config["dual"]["distill"]["training"].update(grad_accum=2)  # the distilled runs' own setting
    validate(config)


@pytest.mark.parametrize(
    "mutate, message",
    [
        (
            lambda c: c["dual"].update(models=["labse"]),
            r"dual.models: unknown model 'labse'; declared models: demo-mbert",
        ),
        (
            lambda c: c["dual"]["train"].update(dataset="demo-nli"),
            r"dual.train.dataset: dataset 'demo-nli' is a nli dataset; this needs a bitext",
        ),
        (
            lambda c: c["dual"]["tatoeba"].update(langs=["qaa", "deu"]),
            r"dual.tatoeba: dataset 'demo-bitext' has no test split for \['deu'\]",
        ),
        (
            lambda c: c["dual"].update(dev={"dataset": "demo-bitext", "langs": ["qaa"], "split": "validation"}),
            r"dual.dev: dataset 'demo-bitext' has no validation split",
        ),
        (
            lambda c: c["dual"].update(freeze_depths=[12]),
            r"freeze depth 12 in dual.freeze_depths leaves nothing to train .* 12 layers",
        ),
        (lambda c: c["dual"].update(margins=[0.3, 0.3]), r"dual.margins lists a value more than once"),
        (
            lambda c: c["dual"]["mining"].update(tune_split="test"),
            r"dual.mining: tune_split and test_split are both 'test'",
        ),
        (
            lambda c: c["dual"]["mining"].update(langs=["qaa", "qqq"]),
            r"dual.mining: dataset 'demo-bitext' has no dev split for \['qqq'\]",
        ),
        (
            lambda c: c["dual"]["mining"].update(source="local", dir="/nonexistent/bucc", pairs=["de-en"]),
            r"dual.mining.dir: /nonexistent/bucc is not a directory",
        ),
        (lambda c: c["dual"]["mining"].update(source="hf", pairs=["de-de"]), r"dual.mining: language pair 'de-de'"),
        (
            lambda c: c["dual"]["mining"].update(source="hf", pairs=["de-en", "de-en"]),
            r"dual.mining lists a language pair more than once",
        ),
        (
            lambda c: c["dual"]["training"].update(grad_accum=2),
            r"training.grad_accum \(dual's training\) 2: the dual encoder's loss uses in-batch negatives",
        ),
    ],
)
def test_cross_reference_errors_name_the_key(mutate, message):
    config = copy.deepcopy(demo_config())
    mutate(config)
    with pytest.raises(XltError, match=message):
        validate(config)


@pytest.mark.parametrize(
    "mutate, where",
    [
        (lambda c: c["dual"].update(margins=[-0.1]), "dual.margins.0"),
        (lambda c: c["dual"].update(scales=[0]), "dual.scales.0"),
        (lambda c: c["dual"].update(poolings=["avg"]), "dual.poolings.0"),
        (lambda c: c["dual"].update(batch_sizes=[1]), "dual.batch_sizes.0"),
        (lambda c: c["dual"].update(symmetric="none"), "dual.symmetric"),
        (lambda c: c["dual"].update(margin=0.3), "dual"),  # typo for margins
        (lambda c: c["dual"]["mining"].pop("dataset"), "dual.mining"),  # bitext source needs a dataset
        (lambda c: c["dual"].pop("tatoeba"), "dual"),  # an enabled family needs its test sets
    ],
)
def test_schema_errors_name_the_key(mutate, where):
    config = copy.deepcopy(demo_config())
    mutate(config)
    with pytest.raises(XltError, match=rf"config error at {where}"):
        validate(config)


def test_prefetch_plans_the_hub_bucc_pairs():
    from xlt.core.prefetch import plan as prefetch_plan

    _, loads = prefetch_plan(settings.validate(paper_config()))  # the workflow prefetches validated configs
    bucc = sorted((d.path, d.config_name, d.split) for d in loads if d.name == "dual.mining")
    assert bucc == [("mteb/bucc-bitext-mining", pair, "test") for pair in ("de-en", "fr-en", "ru-en", "zh-en")]
    talks = {d.config_name for d in loads if d.name == "talks"}
    assert talks == {f"en-{lang}" for lang in paper_config()["dual"]["train"]["langs"]}


def test_frozen_prefix_cache_is_off_by_default_and_per_job_when_asked():
    config = validate(small_config(freeze_depths=[-1, 1]))
    assert config["dual"]["cache_frozen_prefix"] is False
    assert config["dual"]["prefix_states"] == {"shared": False, "storage_dtype": "float16", "max_gib": 64}
    plain = plan.jobs(config)
    assert "prefix_states_dual" not in plain  # the default plans what it planned before
    assert not any("--cache-frozen-prefix" in job.args for job in plain["train_dual"].values())
    config = validate(small_config(freeze_depths=[-1, 1], cache_frozen_prefix=True, allow_mixed_caching=True))
    cached = plan.jobs(config)["train_dual"]
    for run_id, job in cached.items():
        frozen = job.axes["freeze_depth"] >= 0  # depth -1 freezes nothing: it trains uncached
        assert ("--cache-frozen-prefix" in job.args) == frozen and "--prefix-states" not in job.args
        if not frozen:
            assert job.args == plain["train_dual"][run_id].args


def test_shared_prefix_store_one_job_per_model_read_by_every_frozen_depth():
    config = validate(
        small_config(
            freeze_depths=[-1, 0, 2],
            cache_frozen_prefix=True,
            allow_mixed_caching=True,
            prefix_states={"shared": True, "storage_dtype": "float32", "max_gib": 3},
        )
    )
    jobs = plan.jobs(config)
    store = "results/prefix_states/dual/tiny"
    (job,) = jobs["prefix_states_dual"].values()
    assert job.args == [
        "--model",
        "results/models/tiny",
        "--train",
        "results/data/bt/qaa/train.jsonl",
        "--train",
        "results/data/bt/qab/train.jsonl",
        "--depths",
        "0,2",
        "--max-length",
        24,
        "--batch-size",
        8,
        "--storage-dtype",
        "float32",
        "--max-gib",
        3,
        "--precision",
        "auto",
        "--device",
        "auto",
        "--out",
        store,
    ]
    assert job.inputs == {"model": ["results/models/tiny"], "train": "results/data/bt/info.json"}
    parsed = cli.build_parser("dual-prefix-states").parse_args(["dual-prefix-states", *map(str, job.args)])
    assert (parsed.depths, parsed.max_gib, parsed.storage_dtype, parsed.precision) == ("0,2", 3.0, "float32", "auto")
    for train in jobs["train_dual"].values():
        args = cli.build_parser("train-dual").parse_args(["train-dual", *map(str, train.args)])
        if train.axes["freeze_depth"] < 0:
            assert args.prefix_states is None and not args.cache_frozen_prefix and "prefix_states" not in train.inputs
        else:
            assert args.prefix_states == store and train.inputs["prefix_states"] == store
            assert not args.cache_frozen_prefix
            # the store was written from the same files with the same tokenisation
            assert (args.train, args.max_length, args.precision) == (parsed.train, parsed.max_length, parsed.precision)
    assert (
        plan.jobs(
            validate(
                small_config(
                    freeze_depths=[-1],
                    cache_frozen_prefix=True,
                    allow_mixed_caching=True,
                    prefix_states={"shared": True},
                )
            )
        )["prefix_states_dual"]
        == {}
    )


def test_shared_prefix_store_needs_the_cache():
    with pytest.raises(XltError, match=r"dual.prefix_states.shared: true .* needs dual.cache_frozen_prefix: true"):
        validate(small_config(prefix_states={"shared": True}))
    with pytest.raises(XltError, match="max_gib"):
        validate(small_config(cache_frozen_prefix=True, prefix_states={"shared": True, "max_gib": 0}))


def test_a_sweep_mixing_cached_and_uncached_depths_is_refused_unless_allowed():
    with pytest.raises(XltError, match=r"dual.freeze_depths also has depth -1, .* Set dual.allow_mixed_caching: true"):
        validate(small_config(freeze_depths=[-1, 1], cache_frozen_prefix=True))
    assert (
        validate(small_config(freeze_depths=[0, 1], cache_frozen_prefix=True))["dual"]["allow_mixed_caching"] is False
    )
    assert validate(small_config(freeze_depths=[-1, 1]))["dual"]["allow_mixed_caching"] is False


@pytest.mark.parametrize("rule", ["index", "text", None])
def test_dev_selection_and_tatoeba_test_use_the_one_configured_match(rule):
    # one rule for selection and test: train_dual's --match is the tatoeba job's; index by default
    tatoeba = {"dataset": "bt", "langs": ["qab"]} | ({"match": rule} if rule else {})
    jobs = plan.jobs(validate(small_config(tatoeba=tatoeba)))
    train, test = ([str(a) for a in jobs[rule_name][RUN].args] for rule_name in ("train_dual", "tatoeba_dual"))
    baseline = [str(a) for a in jobs["tatoeba_dual"][BASELINE].args]
    expected = rule or "index"
    assert [args[args.index("--match") + 1] for args in (train, test, baseline)] == [expected] * 3


def distill_config(**distill):
    """small_config with an sbert family (the teacher's run) and the mse_distill objective."""
    config = small_config(
        objectives=["additive_margin", "mse_distill"],
        distill={"teacher": {"sbert_run": "tiny-max-L-2-depthnone-seed1"}, **distill},
        sts={"dataset": "sts", "langs": ["en", "qab"]},
    )
    if distill.get("match_budget"):  # the equal-budget comparison trains, selects and scores at one length
        config["evaluation"]["max_length"] = config["dual"]["training"]["max_length"]
    config["datasets"]["nli"] = {
        "source": "demo",
        "task": "nli",
        "languages": ["en"],
        "splits": {"train": ["en"], "dev": ["en"]},
        "sizes": {"train": 10, "dev": 5},
    }
    config["datasets"]["sts"] = {
        "source": "demo",
        "task": "sts",
        "languages": ["en", "qab"],
        "splits": {"dev": ["en"], "test": "all"},
        "sizes": {"dev": 5, "test": 5},
    }
    config["sbert"] = {
        "models": ["tiny"],
        "poolings": ["max"],
        "layers": [-2],
        "train": {"dataset": "nli", "lang": "en"},
        "dev": {"dataset": "nli", "lang": "en"},
        "eval": {"sts": {"dataset": "sts", "langs": ["en"]}},
    }
    return config


KD_RUN = "tiny-distill-cls-bs8-depth01-seed3"
TEACHER_RUN = "teacher-tiny-max-L-2-depthnone-seed1"


def test_distilled_runs_read_the_sbert_runs_model_as_teacher_and_the_teacher_is_scored_too():
    config = validate(distill_config(training={"lr": 2.0e-5, "batch_size": 4}))
    rows = plan.runs(config)
    assert [r["run_id"] for r in rows] == [RUN, KD_RUN.replace("bs8", "bs4")]  # distill.training's batch size
    jobs = plan.jobs(config)
    kd = jobs["train_dual"][KD_RUN.replace("bs8", "bs4")]
    teacher_dir = "results/runs/sbert/tiny-max-L-2-depthnone-seed1/model"
    assert kd.inputs["teacher"] == [teacher_dir]  # the DAG trains the sbert run first
    args = [str(a) for a in kd.args]
    at = args.index("--objective")
    assert args[at : at + 10] == [
        "--objective",
        "mse_distill",
        "--teacher",
        teacher_dir,
        "--teacher-pooling",
        "max",
        "--teacher-layer",
        "-2",
        "--pooling",
        "cls",
    ]
    assert "--margin" not in args and "--symmetric" not in args
    assert args[args.index("--lr") + 1] == "2e-05" and args[args.index("--batch-size") + 1] == "4"
    assert args[args.index("--max-steps") + 1] == "7"  # the family's other settings stay
    # the teacher's own evaluation: its model directory, pooling and layer, objective "teacher"
    teacher = jobs["tatoeba_dual"][TEACHER_RUN]
    assert teacher.inputs["model"] == [teacher_dir]
    targs = [str(a) for a in teacher.args]
    assert targs[:6] == ["--model", teacher_dir, "--pooling", "max", "--layer", "-2"]
    assert '"objective": "teacher"' in targs[targs.index("--axes") + 1]
    # dual.sts: every evaluation scores the STS sets too, beside the Tatoeba ones
    for job in jobs["tatoeba_dual"].values():
        assert [a for a in map(str, job.args) if a.endswith(".jsonl")] == [
            "results/data/bt/qab/test.jsonl",
            "results/data/sts/en/test.jsonl",
            "results/data/sts/qab/test.jsonl",
        ]
        assert job.inputs["data"] == ["results/data/bt/info.json", "results/data/sts/info.json"]
    assert f"results/runs/dual/{TEACHER_RUN}/tatoeba.json" in plan.metrics_files(config)
    assert "results/plots/dual/dual-objectives.png" in plan.targets(config)


def test_a_model_teacher_has_its_own_pooling_and_layer():
    config = distill_config(teacher={"model": "tiny", "pooling": "cls"})
    config = validate(config)
    kd = plan.jobs(config)["train_dual"][KD_RUN]
    args = [str(a) for a in kd.args]
    assert args[args.index("--teacher") + 1] == "results/models/tiny" and kd.inputs["teacher"] == [
        "results/models/tiny"
    ]
    assert args[args.index("--teacher-pooling") + 1] == "cls" and args[args.index("--teacher-layer") + 1] == "-1"
    assert "teacher-tiny" in plan.jobs(config)["tatoeba_dual"]
    assert (
        "teacher-tiny"
        not in plan.jobs(validate(distill_config(teacher={"model": "tiny"}, evaluate_teacher=False)))["tatoeba_dual"]
    )


@pytest.mark.parametrize(
    "teacher, message",
    [
        ({}, r"name its teacher with exactly one of dual.distill.teacher.sbert_run .* or dual.distill.teacher.model"),
        ({"sbert_run": "tiny-max-L-2-depthnone-seed1", "model": "tiny"}, "exactly one of"),
        (
            {"sbert_run": "nope"},
            r"dual.distill.teacher.sbert_run: 'nope' is not a trained run of the sbert family; "
            r"its trained runs: tiny-max-L-2-depthnone-seed1",
        ),
        ({"sbert_run": "tiny-max-L-2-depthnone-seed1", "pooling": "mean"}, "pooling and layer come from the sbert run"),
        ({"model": "labse"}, r"dual.distill.teacher.model: unknown model 'labse'"),
    ],
)
def test_teacher_errors_name_the_key(teacher, message):
    config = distill_config()
    config["dual"]["distill"]["teacher"] = teacher
    with pytest.raises(XltError, match=message):
        validate(config)


def test_paper_distils_the_english_sbert_run_into_mbert_with_the_authors_settings():
    """make_multilingual.py (UKPLab/sentence-transformers f9f3a436): 64 single sentences a batch,
    5 epochs over every language's sentences, 10,000 warm-up steps, AdamW eps 1e-6, sentences of at
    most 250 characters, at most 500,000 a language, evaluation every 1,000 steps."""
    config = validate(paper_config())
    kd, matched = [r for r in plan.runs(config) if r["objective"] == "mse_distill" and r["seed"] == 1]
    assert kd["run_id"] == "mbert-distill-mean-bs64-depthnone-seed1" and kd["pooling"] == "mean"
    args = [str(a) for a in plan.jobs(config)["train_dual"][kd["run_id"]].args]
    flags = (
        "--teacher",
        "--batch-size",
        "--lr",
        "--warmup-steps",
        "--adam-epsilon",
        "--epochs",
        "--max-steps",
        "--max-length",
        "--eval-every",
        "--weight-decay",
        "--max-grad-norm",
        "--distill-examples",
        "--max-sentences-per-language",
        "--max-sentence-chars",
    )
    settings_ = {flag: args[args.index(flag) + 1] for flag in flags}
    assert settings_ == {
        "--teacher": "results/runs/sbert/mbert-mean-L-1-depthnone-seed1/model",
        "--batch-size": "64",
        "--lr": "2e-05",
        "--warmup-steps": "10000",
        "--adam-epsilon": "1e-06",
        "--epochs": "5",
        "--max-steps": "0",
        "--max-length": "128",
        "--eval-every": "1000",
        "--weight-decay": "0.01",
        "--max-grad-norm": "1.0",
        "--distill-examples": "sentences",
        "--max-sentences-per-language": "500000",
        "--max-sentence-chars": "250",
    }
    assert args[args.index("--train") + 1] == "results/data/talks/ar/train.jsonl"  # the dual family's TED talks pairs
    assert "teacher-mbert-mean-L-1-depthnone-seed1" in plan.jobs(config)["tatoeba_dual"]


def test_paper_runs_carry_their_budget_and_a_distilled_run_matches_the_margin_runs():
    """12 languages x 200,000 pairs (talks' max_rows): a margin run, 1 epoch of 256 pairs, sees
    9,375 x 512 = 4.8M sentences; the recipe 5 epochs of 4.8M sentences in 64s, 24M; the matched
    twin 75,000 steps of 64, the margin runs' 4.8M."""
    config = validate(paper_config())
    rows = plan.runs(config)
    assert {r["sentences_seen"] for r in rows if r["objective"] == "additive_margin"} == {4_800_000}
    kd, matched = [r for r in rows if r["objective"] == "mse_distill" and r["seed"] == 1]
    assert kd["sentences_seen"] == 24_000_000 and kd["max_steps"] is None
    assert matched["run_id"] == "mbert-distill-matched-mean-bs64-depthnone-seed1"
    assert matched["sentences_seen"] == 4_800_000 and matched["max_steps"] == 75_000
    jobs = plan.jobs(config)
    args = [str(a) for a in jobs["train_dual"][matched["run_id"]].args]
    assert args[args.index("--max-steps") + 1] == "75000"
    assert '"sentences_seen": 4800000' in args[args.index("--axes") + 1]
    tatoeba = [str(a) for a in jobs["tatoeba_dual"][kd["run_id"]].args]
    assert '"sentences_seen": 24000000' in tatoeba[tatoeba.index("--axes") + 1]


def test_the_recipe_flags_are_left_out_where_the_config_keeps_the_defaults():
    config = validate(distill_config())
    args = [str(a) for a in plan.jobs(config)["train_dual"][KD_RUN].args]
    assert not {"--distill-examples", "--max-sentences-per-language", "--max-sentence-chars"} & set(args)
    assert [r["run_id"] for r in plan.runs(config)] == [RUN, KD_RUN]  # no matched twin unless asked
    kd = plan.runs(config)[1]
    assert kd["sentences_seen"] == 7 * 8 * 2  # pairs: two sentences an example


def test_a_matched_distilled_run_trains_for_the_margin_runs_budget():
    config = validate(distill_config(examples="sentences", match_budget=True, training={"batch_size": 4}))
    margin, kd, matched = plan.runs(config)
    assert margin["sentences_seen"] == 112 and kd["sentences_seen"] == 7 * 4  # max_steps 7: steps x 4 sentences
    assert matched["run_id"] == "tiny-distill-matched-cls-bs4-depth01-seed3"
    assert matched["max_steps"] == 112 // 4 and matched["sentences_seen"] == 112


@pytest.mark.parametrize(
    "dual, message",
    [
        ({"objectives": ["mse_distill"]}, "add additive_margin to dual.objectives, or drop match_budget"),
        (
            {"batch_sizes": [8, 5], "training": {"max_length": 24, "max_steps": 0}},
            r"several budgets \(40, 48 sentences\)",
        ),
        (
            {
                "distill": {
                    "match_budget": True,
                    "training": {"batch_size": 5},
                    "examples": "sentences",
                    "teacher": {"sbert_run": "tiny-max-L-2-depthnone-seed1"},
                }
            },
            "no whole number of distilled steps of 5 sentences",
        ),
    ],
)
def test_match_budget_errors_say_why_and_what_to_do(dual, message):
    config = distill_config(match_budget=True)
    config["dual"].update(dual)
    with pytest.raises(XltError, match=message):
        plan.runs(validate(config))


def test_the_cost_plan_prices_single_sentence_examples_as_the_job_runs_them():
    """--distill-examples sentences: twice the examples, each half a pair's tokens, so the same
    tokens over twice the steps of half the work (xlt.cost.estimate via plan.example_shape)."""
    from xlt.cost import estimate

    config = validate(paper_config())
    sentences = plan.jobs(config)["train_dual"]["mbert-distill-mean-bs64-depthnone-seed1"].spec
    assert sentences.get("distill_examples") == "sentences"
    pairs = JobSpec(sentences.verb, [(d, v) for d, v in sentences.settings if d != "distill_examples"])
    from xlt.cost import profile as profiles

    profile = profiles.load("h100")
    one, two = (estimate.job_cost(config, "dual", "train_dual", "kd", a, profile) for a in (sentences, pairs))
    assert one.train_tokens == pytest.approx(two.train_tokens, rel=1e-6)
    assert one.step_flops == pytest.approx(two.step_flops / 2, rel=1e-6)
    assert plan.example_shape("train_dual", sentences) == (2, 0.5) and plan.example_shape("train_dual", pairs) == (
        1,
        1.0,
    )


def test_the_objective_names_agree_across_the_schema_the_cli_and_the_paired_tests():
    from xlt.families.dual import distill_plan
    from xlt.families.dual.choices import DUAL_OBJECTIVES

    schema = yaml.safe_load((REPO / "src" / "xlt" / "families" / "dual" / "schema.yaml").read_text())
    assert tuple(schema["properties"]["objectives"]["items"]["enum"]) == DUAL_OBJECTIVES
    assert schema["properties"]["objectives"]["default"] == [plan.ADDITIVE] == [DUAL_OBJECTIVES[0]]
    assert plan.REFERENCE_AXIS == ("objective", (distill_plan.TEACHER, *DUAL_OBJECTIVES))
    assert distill_plan.DISTILL in DUAL_OBJECTIVES


def test_dual_sts_takes_a_list_of_sets_each_scored_and_read():
    raw = distill_config()
    raw["datasets"]["sts2"] = {**raw["datasets"]["sts"], "languages": ["qab"]}
    raw["dual"]["sts"] = [{"dataset": "sts", "langs": ["en"]}, {"dataset": "sts2", "langs": ["qab"]}]
    config = validate(raw)
    assert [s["split"] for s in plan.sts_sets(config)] == ["test", "test"]  # the default, in each set
    for job in plan.jobs(config)["tatoeba_dual"].values():
        assert [a for a in map(str, job.args) if a.endswith(".jsonl")] == [
            "results/data/bt/qab/test.jsonl",
            "results/data/sts/en/test.jsonl",
            "results/data/sts2/qab/test.jsonl",
        ]
        assert job.inputs["data"] == [
            "results/data/bt/info.json",
            "results/data/sts/info.json",
            "results/data/sts2/info.json",
        ]
    raw["dual"]["sts"] = [{"dataset": "sts", "langs": ["en"]}, {"dataset": "sts", "langs": ["qab"]}]
    with pytest.raises(XltError, match=r"dual.sts lists a dataset more than once"):
        validate(raw)


def test_the_paper_sweep_scores_sts2017_beside_stsb_multi():
    jobs = plan.jobs(validate(paper_config()))["tatoeba_dual"]
    args = [str(a) for a in jobs["mbert-mean-untrained"].args]
    assert [a for a in args if "sts2017-extended" in a] == [
        f"results/data/sts2017-extended/{lang}/test.jsonl" for lang in ("ar", "es", "en")
    ]
    assert sum("stsb-multi" in a for a in args) == 10


@pytest.mark.parametrize(
    "dual, message",
    [
        ({"comparison": {"starts": ["pretrained", "teacher"]}, "objectives": ["additive_margin"]}, "add mse_distill"),
        ({"comparison": {"seeds": [1, 2, 1]}}, r"dual.comparison.seeds lists a value more than once \(\[1, 2, 1\]\)"),
    ],
)
def test_comparison_errors_name_the_key_and_the_fix(dual, message):
    config = distill_config()
    config["dual"].update(dual)
    with pytest.raises(XltError, match=message):
        validate(config)


def test_the_equal_budget_comparison_is_refused_at_two_lengths():
    """Issue 47: the matched twin and the margin runs train, select and are scored at one length."""
    config = distill_config(match_budget=True)
    config["evaluation"]["max_length"] = 40
    with pytest.raises(XltError, match="dual.training.max_length 24, .*evaluation.max_length 40: set them equal"):
        validate(config)


def test_a_comparison_run_from_the_teacher_caches_its_own_frozen_prefix():
    """The shared store holds the pretrained model's states, not the teacher checkpoint's."""
    config = distill_config(training={"max_length": 24})
    config["dual"].update(
        comparison={"starts": ["pretrained", "teacher"]}, cache_frozen_prefix=True, prefix_states={"shared": True}
    )
    jobs = plan.jobs(validate(config))["train_dual"]
    started = jobs["tiny-fromteacher-margin0.2-scale5-cls-bs8-depth01-seed3"].spec
    assert started.has("cache_frozen_prefix") and not started.has("prefix_states")
    assert jobs[RUN].spec.has("prefix_states")
