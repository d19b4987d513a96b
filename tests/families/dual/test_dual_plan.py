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
        "datasets": {"bt": {"source": "demo", "task": "bitext", "languages": ["qaa", "qab"],
                            "splits": ["train", "dev", "test"], "sizes": {"train": 10, "dev": 5, "test": 5}}},
        "training": {"max_steps": 7, "lr": 0.01},
        "dual": {"models": ["tiny"], "train": {"dataset": "bt", "langs": ["qaa", "qab"]},
                 "tatoeba": {"dataset": "bt", "langs": ["qab"]}, "margins": [0.2], "scales": [5],
                 "poolings": ["cls"], "batch_sizes": [8], "freeze_depths": [1], "seeds": [3],
                 "mining": {"source": "bitext", "dataset": "bt", "langs": ["qaa"]},
                 "training": {"max_length": 24}, **dual},
    }


def test_xlt_sweep_prints_the_dual_runs(capsys, tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(small_config(margins=[0, 0.2])))
    assert settings.plan_module("dual").runs is plan.runs
    assert cli.main(["sweep", "--config", str(path)]) == 0
    out = capsys.readouterr().out
    assert "# dual: 2 runs" in out
    assert "tiny-margin0-scale5-cls-bs8-depth01-seed3" in out and RUN in out


def test_demo_dual_sweep_is_margin_0_and_03():
    runs = plan.runs(validate(demo_config()))
    assert [r["margin"] for r in runs] == [0, 0.3]
    assert runs[1]["run_id"] == "demo-mbert-margin0.3-scale10-mean-bs32-depthnone-seed1"
    assert {k for k in runs[0]} == {"run_id", "model", "margin", "scale", "pooling", "batch_size", "freeze_depth", "seed"}


def test_every_axis_is_swept_as_a_product_with_unique_readable_ids():
    config = demo_config()
    config["dual"].update(margins=[0, 0.1, 0.25], scales=[5, 10], poolings=["mean", "cls"], batch_sizes=[8, 16],
                          freeze_depths=[-1, 3], seeds=[1, 2])
    runs = plan.runs(validate(config))
    assert len(runs) == 3 * 2 * 2 * 2 * 2 * 2
    expected = set(itertools.product([0, 0.1, 0.25], [5, 10], ["mean", "cls"], [8, 16], [-1, 3], [1, 2]))
    assert {(r["margin"], r["scale"], r["pooling"], r["batch_size"], r["freeze_depth"], r["seed"]) for r in runs} == expected
    assert len({r["run_id"] for r in runs}) == len(runs)
    assert "demo-mbert-margin0.25-scale5-cls-bs16-depth03-seed2" in {r["run_id"] for r in runs}


def test_defaults_batch_size_from_training_and_dev_from_train_dataset():
    config = demo_config()
    for key in ("margins", "scales", "poolings", "batch_sizes", "freeze_depths", "seeds", "symmetric"):
        config["dual"].pop(key)
    config["training"]["batch_size"] = 24
    validate(config)
    assert plan.bitext_spec(config, "dev") == {"dataset": "demo-bitext", "langs": ["qaa", "qab", "qac"], "split": "dev"}
    (run,) = plan.runs(config)
    assert (run["margin"], run["scale"], run["pooling"], run["batch_size"], run["freeze_depth"], run["seed"]) == (0.3, 10, "mean", 24, -1, 1)
    assert config["dual"]["symmetric"] == "sum"
    # the schema fills the mining defaults (the demo names only source, dataset, langs and gold_fraction)
    mining = config["dual"]["mining"]
    assert {k: mining[k] for k in ("english", "tune_split", "test_split", "k", "strategy", "seed", "hub_split",
                                   "tune_fraction", "path")} == {
        "english": "en", "tune_split": "dev", "test_split": "test", "k": 4, "strategy": "max", "seed": 1,
        "hub_split": "test", "tune_fraction": 0.2, "path": "mteb/bucc-bitext-mining"}
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
        "tiny-cls-untrained", "tiny-mean-untrained", "other-cls-untrained", "other-mean-untrained"]
    jobs = plan.jobs(config)
    assert set(jobs["tatoeba_dual"]) == {r["run_id"] for r in plan.runs(config)} | {r["run_id"] for r in plan.baselines(config)}
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
    runs = plan.runs(validate(paper_config()))
    assert sorted({r["margin"] for r in runs}) == [0, 0.1, 0.2, 0.3, 0.4]
    assert len(runs) == 5 * 2 * 2


def test_jobs_carry_the_complete_xlt_arguments_of_every_rule():
    config = validate(small_config())
    jobs = plan.jobs(config)
    assert {rule: list(by_key) for rule, by_key in jobs.items()} == {
        "train_dual": [RUN], "tatoeba_dual": [RUN, BASELINE], "make_bucc": ["qaa-en"], "mine": [f"{RUN}/qaa-en"]}
    run_dir = f"results/runs/dual/{RUN}"
    train = jobs["train_dual"][RUN]
    assert train.inputs == {"model": ["results/models/tiny"], "train": "results/data/bt/info.json",
                            "dev": "results/data/bt/info.json"}
    assert [str(a) for a in train.args] == [
        "--model", "results/models/tiny",
        "--train", "results/data/bt/qaa/train.jsonl", "--train", "results/data/bt/qab/train.jsonl",
        "--dev", "results/data/bt/qaa/dev.jsonl", "--dev", "results/data/bt/qab/dev.jsonl",
        "--match", "index",
        "--margin", "0.2", "--scale", "5", "--pooling", "cls", "--symmetric", "sum", "--freeze-depth", "1",
        "--seed", "3",
        # every training setting, TrainArgs' defaults filled in; the swept batch size replaces batch_size
        "--epochs", "1.0", "--max-steps", "7", "--batch-size", "8", "--lr", "0.01", "--weight-decay", "0.01",
        "--warmup-ratio", "0.1", "--max-grad-norm", "1.0", "--grad-accum", "1", "--eval-every", "0",
        "--max-length", "24", "--precision", "auto", "--device", "auto", "--log-every", "20",
        "--checkpoint-every", "0", "--length-bucketing", "False", "--compile", "False", "--schedule", "linear",
        "--axes", '{"model": "tiny"}', "--run-id", RUN, "--out", run_dir]
    axes = '{"model": "tiny", "margin": 0.2, "scale": 5, "pooling": "cls", "batch_size": 8, "freeze_depth": 1, "seed": 3, "trained": true}'
    tatoeba = jobs["tatoeba_dual"][RUN]
    assert tatoeba.inputs == {"model": f"{run_dir}/model", "data": "results/data/bt/info.json"}
    assert [str(a) for a in tatoeba.args] == [
        "--model", f"{run_dir}/model", "--pooling", "cls", "--bitext", "results/data/bt/qab/test.jsonl",
        "--match", "index", "--axes", axes, "--run-id", RUN, "--family", "dual", "--max-length", "24",
        "--out", f"{run_dir}/tatoeba.json"]
    assert f"--axes '{axes}'" in tatoeba.cli  # one shell word
    # the untrained encoder: the same evaluation of the pretrained model, no training axes
    baseline = jobs["tatoeba_dual"][BASELINE]
    assert baseline.inputs == {"model": ["results/models/tiny"], "data": "results/data/bt/info.json"}
    untrained = ('{"model": "tiny", "margin": null, "scale": null, "pooling": "cls", "batch_size": null, "freeze_depth": null, '
                 '"seed": null, "trained": false}')
    assert [str(a) for a in baseline.args] == [
        "--model", "results/models/tiny", "--pooling", "cls", "--bitext", "results/data/bt/qab/test.jsonl",
        "--match", "index", "--axes", untrained, "--run-id", BASELINE, "--family", "dual", "--max-length", "24",
        "--out", f"results/runs/dual/{BASELINE}/tatoeba.json"]
    bucc = jobs["make_bucc"]["qaa-en"]
    assert bucc.inputs == {"data": "results/data/bt/info.json"}
    assert [str(a) for a in bucc.args] == [
        "--pair", "qaa-en", "--out", "results/bucc/qaa-en", "--bitext", "dev=results/data/bt/qaa/dev.jsonl",
        "--bitext", "test=results/data/bt/qaa/test.jsonl", "--gold-fraction", "0.5", "--seed", "1"]
    mine = jobs["mine"][f"{RUN}/qaa-en"]
    assert mine.inputs == {"bucc": "results/bucc/qaa-en"}
    assert [str(a) for a in mine.args] == [
        "--model", f"{run_dir}/model", "--bucc-dir", "results/bucc/qaa-en", "--pair", "qaa-en",
        "--tune-split", "dev", "--test-split", "test", "--pooling", "cls", "--k", "4", "--strategy", "max",
        "--max-length", "24", "--axes", axes, "--run-id", RUN, "--out-metrics", f"{run_dir}/mine/qaa-en.json"]
    # the rule file's outputs come from the same templates
    assert plan.TATOEBA.format(run_id=RUN) == tatoeba.args[-1]
    assert plan.MINED.format(run_id=RUN, pair="qaa-en") == mine.args[-1]
    assert plan.BUCC.format(pair="qaa-en") == bucc.args[3]


def test_hub_and_local_mining_sources():
    config = validate(small_config(mining={"source": "hf", "pairs": ["de-en"], "revision": "abc", "k": 3,
                                           "tune_fraction": 0.3, "seed": 7}))
    jobs = plan.jobs(config)
    bucc = jobs["make_bucc"]["de-en"]
    assert bucc.inputs == {}  # read from the hub
    assert [str(a) for a in bucc.args] == [
        "--pair", "de-en", "--out", "results/bucc/de-en", "--hub-dataset", "mteb/bucc-bitext-mining",
        "--hub-split", "test", "--tune-fraction", "0.3", "--split-names", "dev,test", "--revision", "abc",
        "--seed", "7"]
    assert [str(a) for a in jobs["mine"][f"{RUN}/de-en"].args[:14]] == [
        "--model", f"results/runs/dual/{RUN}/model", "--bucc-dir", "results/bucc/de-en", "--pair", "de-en",
        "--tune-split", "dev", "--test-split", "test", "--pooling", "cls", "--k", "3"]

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
    assert plan.targets(config) == ["results/tables/dual.csv", "results/tables/dual_summary.csv", "results/plots/dual/dual-error-vs-margin.png",
                                    "results/plots/dual/dual-tatoeba-heatmap.png", "results/plots/dual/dual-mining.png",
                                    "results/plots/dual/training-curves.png"]
    # trained runs draw a curve; the untrained baseline does not
    assert plan.curve_files(config) == [f"results/runs/dual/{run}/train.curve.csv" for run in runs if run != BASELINE]
    assert len(plan.curve_files(config)) == 2
    config = small_config(scales=[5, 10])
    del config["dual"]["mining"]
    validate(config)
    assert plan.targets(config) == ["results/tables/dual.csv", "results/tables/dual_summary.csv", "results/plots/dual/dual-error-vs-scale.png",
                                    "results/plots/dual/dual-tatoeba-heatmap.png", "results/plots/dual/training-curves.png"]
    assert plan.jobs(config)["mine"] == {} and plan.jobs(config)["make_bucc"] == {}
    assert plan.metrics_files(config) == [f"results/runs/dual/{run}/{name}" for run in
                                          [r["run_id"] for r in plan.runs(config)] for name in ("train.json", "tatoeba.json")
                                          ] + [f"results/runs/dual/{BASELINE}/tatoeba.json"]


@pytest.mark.parametrize("mutate, message", [
    (lambda c: c["dual"].update(models=["labse"]), r"dual.models: unknown model 'labse'; declared models: demo-mbert"),
    (lambda c: c["dual"]["train"].update(dataset="demo-nli"), r"dual.train.dataset: dataset 'demo-nli' is a nli dataset; this needs a bitext"),
    (lambda c: c["dual"]["tatoeba"].update(langs=["qaa", "deu"]), r"dual.tatoeba: dataset 'demo-bitext' has no test split for \['deu'\]"),
    (lambda c: c["dual"].update(dev={"dataset": "demo-bitext", "langs": ["qaa"], "split": "validation"}),
     r"dual.dev: dataset 'demo-bitext' has no validation split"),
    (lambda c: c["dual"].update(freeze_depths=[12]), r"freeze depth 12 in dual.freeze_depths leaves nothing to train .* 12 layers"),
    (lambda c: c["dual"].update(margins=[0.3, 0.3]), r"dual.margins lists a value more than once"),
    (lambda c: c["dual"]["mining"].update(tune_split="test"), r"dual.mining: tune_split and test_split are both 'test'"),
    (lambda c: c["dual"]["mining"].update(langs=["qaa", "qqq"]), r"dual.mining: dataset 'demo-bitext' has no dev split for \['qqq'\]"),
    (lambda c: c["dual"]["mining"].update(source="local", dir="/nonexistent/bucc", pairs=["de-en"]), r"dual.mining.dir: /nonexistent/bucc is not a directory"),
    (lambda c: c["dual"]["mining"].update(source="hf", pairs=["de-de"]), r"dual.mining: language pair 'de-de'"),
    (lambda c: c["dual"]["mining"].update(source="hf", pairs=["de-en", "de-en"]), r"dual.mining lists a language pair more than once"),
    (lambda c: c["dual"]["training"].update(grad_accum=2),
     r"training.grad_accum \(dual's training\) 2: the dual encoder's loss uses in-batch negatives"),
])
def test_cross_reference_errors_name_the_key(mutate, message):
    config = copy.deepcopy(demo_config())
    mutate(config)
    with pytest.raises(XltError, match=message):
        validate(config)


@pytest.mark.parametrize("mutate, where", [
    (lambda c: c["dual"].update(margins=[-0.1]), "dual.margins.0"),
    (lambda c: c["dual"].update(scales=[0]), "dual.scales.0"),
    (lambda c: c["dual"].update(poolings=["avg"]), "dual.poolings.0"),
    (lambda c: c["dual"].update(batch_sizes=[1]), "dual.batch_sizes.0"),
    (lambda c: c["dual"].update(symmetric="none"), "dual.symmetric"),
    (lambda c: c["dual"].update(margin=0.3), "dual"),  # typo for margins
    (lambda c: c["dual"]["mining"].pop("dataset"), "dual.mining"),  # bitext source needs a dataset
    (lambda c: c["dual"].pop("tatoeba"), "dual"),  # an enabled family needs its test sets
])
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
    config = validate(small_config(freeze_depths=[-1, 0, 2], cache_frozen_prefix=True, allow_mixed_caching=True,
                                   prefix_states={"shared": True, "storage_dtype": "float32", "max_gib": 3}))
    jobs = plan.jobs(config)
    store = "results/prefix_states/dual/tiny"
    (job,) = jobs["prefix_states_dual"].values()
    assert job.args == [
        "--model", "results/models/tiny", "--train", "results/data/bt/qaa/train.jsonl",
        "--train", "results/data/bt/qab/train.jsonl", "--depths", "0,2", "--max-length", 24, "--batch-size", 8,
        "--storage-dtype", "float32", "--max-gib", 3, "--precision", "auto", "--device", "auto", "--out", store]
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
    assert plan.jobs(validate(small_config(freeze_depths=[-1], cache_frozen_prefix=True, allow_mixed_caching=True,
                                           prefix_states={"shared": True})))["prefix_states_dual"] == {}


def test_shared_prefix_store_needs_the_cache():
    with pytest.raises(XltError, match=r"dual.prefix_states.shared: true .* needs dual.cache_frozen_prefix: true"):
        validate(small_config(prefix_states={"shared": True}))
    with pytest.raises(XltError, match="max_gib"):
        validate(small_config(cache_frozen_prefix=True, prefix_states={"shared": True, "max_gib": 0}))


def test_a_sweep_mixing_cached_and_uncached_depths_is_refused_unless_allowed():
    with pytest.raises(XltError, match=r"dual.freeze_depths also has depth -1, .* Set dual.allow_mixed_caching: true"):
        validate(small_config(freeze_depths=[-1, 1], cache_frozen_prefix=True))
    assert validate(small_config(freeze_depths=[0, 1], cache_frozen_prefix=True))["dual"]["allow_mixed_caching"] is False
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
