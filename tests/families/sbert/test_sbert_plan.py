"""The sbert plan: the exact `xlt` command of every job, run ids, targets, config checks."""

import copy
import shlex

import pytest

from xlt.core.errors import XltError
from xlt.core.settings import validate
from xlt.families.sbert import plan

SMALL = {
    "models": {
        "tiny": {"source": "demo", "layers": 2, "hidden_size": 32},
        "mbert": {"source": "hub", "path": "bert-base-multilingual-cased", "layers": 12},
    },
    "datasets": {
        "nli": {
            "source": "demo",
            "task": "nli",
            "languages": ["en", "qaa"],
            "splits": {"train": ["en"], "dev": ["en"]},
            "sizes": {"train": 10, "dev": 10},
        },
        "sts": {
            "source": "demo",
            "task": "sts",
            "languages": ["en", "qaa"],
            "splits": {"dev": ["en"], "test": "all"},
            "sizes": {"dev": 10, "test": 10},
        },
        "bitext": {"source": "demo", "task": "bitext", "languages": ["qaa"], "splits": ["test"], "sizes": {"test": 10}},
    },
    "training": {"max_steps": 10, "max_length": 32},
    "evaluation": {"max_length": 40},  # scored at 40, trained at 32
    "sbert": {
        "models": ["tiny", "mbert"],
        "poolings": ["max"],
        "layers": [-2],
        "depths": [1],
        "seeds": [7],
        "use_product": True,
        "train": {"dataset": "nli", "lang": "en"},
        "dev": {"dataset": "nli", "lang": "en"},
        "eval": {"bitext": {"dataset": "bitext", "langs": ["qaa"]}, "sts": {"dataset": "sts", "langs": ["en", "qaa"]}},
        "training": {"lr": 0.001},
    },
}


def small(**sbert) -> dict:
    config = copy.deepcopy(SMALL)
    config["sbert"].update(sbert)
    return validate(config)


def argv(job) -> list[str]:
    """What the shell hands `xlt` for the rule's `{params.args}`."""
    return shlex.split(job.cli)


def test_an_sts_dev_set_is_scored_by_every_eval_job_for_intervals_only():
    """sbert.dev on an STS set: eval_sbert scores it too (--dev-sts, after the evaluation files), so
    the table has the dev rows seed 000's STS-b validation numbers match; an NLI dev set is not
    STS, and a dev set among the STS evaluation files is scored once, as an evaluation file."""
    for job in plan.jobs(small(dev={"dataset": "sts", "lang": "en"}))["eval_sbert"].values():
        args = argv(job)
        assert args[args.index("--match") + 2 : args.index("--match") + 4] == [
            "--dev-sts",
            "results/data/sts/en/dev.jsonl",
        ]
        assert job.inputs["data"] == ["results/data/sts/info.json", "results/data/bitext/info.json"]
    assert "--dev-sts" not in argv(plan.jobs(small())["eval_sbert"]["tiny-max-L-2-depth01-seed7"])
    scored = small(
        dev={"dataset": "sts", "lang": "en"}, eval={"sts": {"dataset": "sts", "langs": ["en"], "split": "dev"}}
    )
    assert plan.dev_sts_file(scored) is None
    bitext_only = small(dev={"dataset": "sts", "lang": "en"}, eval={"bitext": {"dataset": "bitext", "langs": ["qaa"]}})
    job = plan.jobs(bitext_only)["eval_sbert"]["tiny-max-L-2-depth01-seed7"]
    assert argv(job)[argv(job).index("--dev-sts") + 1] == "results/data/sts/en/dev.jsonl"
    assert job.inputs["data"] == ["results/data/bitext/info.json", "results/data/sts/info.json"]


def test_train_job_has_every_argument():
    job = plan.jobs(small())["train_sbert"]["tiny-max-L-2-depth01-seed7"]
    assert argv(job) == [
        "--model",
        "results/models/tiny",
        "--train",
        "results/data/nli/en/train.jsonl",
        "--dev-nli",
        "results/data/nli/en/dev.jsonl",
        "--pooling",
        "max",
        "--layer",
        "-2",
        "--freeze-depth",
        "1",
        "--use-product",
        "--seed",
        "7",
        # the shared training (TrainArgs defaults filled in) with the family's lr on top, in TrainArgs order
        "--epochs",
        "1.0",
        "--max-steps",
        "10",
        "--batch-size",
        "32",
        "--lr",
        "0.001",
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
        "32",
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
        "--axes",
        '{"model": "tiny"}',  # the config's name: TensorBoard's model column for the training run
        "--run-id",
        "tiny-max-L-2-depth01-seed7",
        "--out",
        "results/runs/sbert/tiny-max-L-2-depth01-seed7",
    ]
    assert job.inputs == {
        "model": ["results/models/tiny"],
        "train": "results/data/nli/info.json",
        "dev": "results/data/nli/info.json",
    }
    # a hub model is fetched, not built: no file input
    hub = plan.jobs(small())["train_sbert"]["mbert-max-L-2-depth01-seed7"]
    assert argv(hub)[:2] == ["--model", "bert-base-multilingual-cased"] and hub.inputs["model"] == []


def test_eval_jobs_score_the_trained_run_or_the_untrained_model():
    jobs = plan.jobs(small())["eval_sbert"]
    files = [
        "--sts",
        "results/data/sts/en/test.jsonl",
        "--sts",
        "results/data/sts/qaa/test.jsonl",
        "--bitext",
        "results/data/bitext/qaa/test.jsonl",  # STS first, whatever the config's order
        "--match",
        "index",
    ]  # the schema's default retrieval rule, passed, not left to the CLI
    trained = jobs["tiny-max-L-2-depth01-seed7"]
    assert argv(trained) == [
        "--model",
        "results/runs/sbert/tiny-max-L-2-depth01-seed7/model",
        "--pooling",
        "max",
        "--layer",
        "-2",
        *files,
        "--axes",
        '{"model": "tiny", "trained": true, "freeze_depth": 1, "seed": 7}',
        "--run-id",
        "tiny-max-L-2-depth01-seed7",
        "--family",
        "sbert",
        "--max-length",
        "40",
        "--out",
        "results/runs/sbert/tiny-max-L-2-depth01-seed7/eval.json",
    ]
    assert trained.inputs == {
        "model": "results/runs/sbert/tiny-max-L-2-depth01-seed7/model",
        "data": ["results/data/sts/info.json", "results/data/bitext/info.json"],
    }
    untrained = jobs["mbert-max-L-2-untrained"]
    assert argv(untrained) == [
        "--model",
        "bert-base-multilingual-cased",
        "--pooling",
        "max",
        "--layer",
        "-2",
        *files,
        "--axes",
        '{"model": "mbert", "trained": false, "freeze_depth": null, "seed": null}',
        "--run-id",
        "mbert-max-L-2-untrained",
        "--family",
        "sbert",
        "--max-length",
        "40",
        "--out",
        "results/runs/sbert/mbert-max-L-2-untrained/eval.json",
    ]
    assert untrained.inputs["model"] == []
    assert jobs["tiny-max-L-2-untrained"].inputs["model"] == ["results/models/tiny"]


def test_eval_jobs_pass_the_configured_retrieval_rule():
    config = copy.deepcopy(SMALL)
    config["sbert"]["eval"]["bitext"]["match"] = "text"
    for job in plan.jobs(validate(config))["eval_sbert"].values():
        args = argv(job)
        assert args[args.index("--match") + 1] == "text"
    # no bitext to score, no rule
    del config["sbert"]["eval"]["bitext"]
    assert all("--match" not in argv(job) for job in plan.jobs(validate(config))["eval_sbert"].values())


def test_defaults_come_from_the_schema():
    config = copy.deepcopy(SMALL)
    for key in ("poolings", "layers", "depths", "seeds", "use_product"):
        del config["sbert"][key]
    config = validate(config)
    section = config["sbert"]
    assert (section["poolings"], section["layers"], section["depths"], section["seeds"]) == (["mean"], [-1], [-1], [1])
    assert (
        section["baselines"] is True and section["train_word_embeddings"] is False and section["use_product"] is False
    )
    assert section["dev"]["split"] == "dev" and section["eval"]["sts"]["split"] == "test"
    assert section["eval"]["bitext"]["match"] == "index"
    assert section["resources"] == {"cpus": 1}
    job = plan.jobs(config)["train_sbert"]["tiny-mean-L-1-depthnone-seed1"]
    args = argv(job)
    assert args[args.index("--freeze-depth") + 1] == "-1"
    assert "--use-product" not in args and "--train-word-embeddings" not in args


def test_runs_and_targets():
    rows = plan.runs(small(models=["tiny"], poolings=["mean", "cls"], seeds=[1, 2]))
    assert [r["run_id"] for r in rows] == [
        "tiny-mean-L-2-untrained",
        "tiny-mean-L-2-depth01-seed1",
        "tiny-mean-L-2-depth01-seed2",
        "tiny-cls-L-2-untrained",
        "tiny-cls-L-2-depth01-seed1",
        "tiny-cls-L-2-depth01-seed2",
    ]
    config = small(baselines=False, layers=[-1, 0])
    jobs = plan.jobs(config)
    assert (
        list(jobs["train_sbert"])
        == list(jobs["eval_sbert"])
        == [
            "tiny-max-L-1-depth01-seed7",
            "tiny-max-L0-depth01-seed7",
            "mbert-max-L-1-depth01-seed7",
            "mbert-max-L0-depth01-seed7",
        ]
    )
    assert plan.targets(config) == [
        "results/tables/sbert.csv",
        "results/tables/sbert_summary.csv",
        "results/plots/sbert/sbert-retrieval-error.png",
        "results/plots/sbert/sbert-sts.png",
        "results/plots/sbert/sbert-layers.png",
        "results/plots/sbert/training-curves.png",
    ]
    assert plan.curve_files(config) == [
        f"results/runs/sbert/{run_id}/train.curve.csv" for run_id in jobs["train_sbert"]
    ]
    # one layer: nothing to draw against the layer
    assert plan.targets(small()) == [
        "results/tables/sbert.csv",
        "results/tables/sbert_summary.csv",
        "results/plots/sbert/sbert-retrieval-error.png",
        "results/plots/sbert/sbert-sts.png",
        "results/plots/sbert/training-curves.png",
    ]
    # untrained baselines are evaluated but draw no curve
    baselines = small(models=["tiny"], poolings=["mean", "cls"], seeds=[1, 2])
    assert plan.curve_files(baselines) == [
        f"results/runs/sbert/{run_id}/train.curve.csv"
        for run_id in (
            "tiny-mean-L-2-depth01-seed1",
            "tiny-mean-L-2-depth01-seed2",
            "tiny-cls-L-2-depth01-seed1",
            "tiny-cls-L-2-depth01-seed2",
        )
    ]


def test_switched_off_family_plans_nothing():
    config = copy.deepcopy(SMALL)
    config["sbert"] = {"enabled": False}  # no other key needed
    config = validate(config)
    assert plan.runs(config) == [] and plan.targets(config) == []
    assert plan.jobs(config) == {"train_sbert": {}, "eval_sbert": {}}
    del config["sbert"]
    assert plan.runs(validate(config)) == []


@pytest.mark.parametrize(
    "mutate, message",
    [
        (lambda s: s.update(poolings=["sum"]), r"config error at sbert.poolings.0"),
        (lambda s: s.update(layers=[3]), r"layer 3 in sbert.layers is out of range for model 'tiny' with 2 layers"),
        (lambda s: s.update(layers=[-4]), r"layer -4 in sbert.layers is out of range"),
        (lambda s: s.update(depths=[3]), r"freeze depth 3 in sbert.depths is out of range"),
        (lambda s: s.update(models=["nope"]), r"sbert.models: unknown model 'nope'"),
        (
            lambda s: s["train"].update(dataset="sts"),
            r"sbert.train.dataset: dataset 'sts' is a sts dataset; this needs a nli",
        ),
        (lambda s: s["train"].update(lang="qaa"), r"sbert.train: dataset 'nli' has no train split for \['qaa'\]"),
        (
            lambda s: s["dev"].update(dataset="bitext"),
            r"sbert.dev.dataset: dataset 'bitext' is a bitext dataset; this needs a sts or nli",
        ),
        (lambda s: s["dev"].update(split="test"), r"sbert.dev: dataset 'nli' has no test split"),
        (lambda s: s.update(eval={}), r"sbert.eval: declare at least one of sts or bitext"),
        (
            lambda s: s["dev"].update(dataset="nope"),
            r"sbert.dev.dataset: unknown dataset 'nope'; declared datasets: bitext, nli, sts",
        ),
        (
            lambda s: s["eval"]["sts"].update(dataset="bitext"),
            r"sbert.eval.sts.dataset: dataset 'bitext' is a bitext dataset",
        ),
        (
            lambda s: s["eval"]["bitext"].update(dataset="sts"),
            r"sbert.eval.bitext.dataset: dataset 'sts' is a sts dataset; this needs a bitext",
        ),
        (
            lambda s: s["eval"]["bitext"].update(langs=["en"]),
            r"sbert.eval.bitext: dataset 'bitext' has no test split for \['en'\]",
        ),
        (lambda s: s.pop("dev"), r"config error at sbert: 'dev' is a required property"),
    ],
)
def test_config_errors_name_the_key(mutate, message):
    config = copy.deepcopy(SMALL)
    mutate(config["sbert"])
    with pytest.raises(XltError, match=message):
        validate(config)
