"""Config sections `dual` and `alignment`: sweep expansion and errors that name the key."""
import copy
import itertools
from pathlib import Path

import pytest
import yaml

from xlt.core.settings import SWEEPS, alignment_runs, dual_mining_pairs, dual_runs, dual_settings, validate
from xlt.core.errors import XltError

REPO = Path(__file__).resolve().parents[1]


def demo_config():
    return yaml.safe_load((REPO / "config.yaml").read_text())


def paper_config():
    return yaml.safe_load((REPO / "config" / "paper.yaml").read_text())


def test_sweeps_are_registered():
    assert SWEEPS["dual"] is dual_runs and SWEEPS["alignment"] is alignment_runs


def test_demo_dual_sweep_is_margin_0_and_03():
    runs = dual_runs(demo_config())
    assert [r["margin"] for r in runs] == [0, 0.3]
    assert runs[1]["run_id"] == "demo-mbert-margin0.3-scale10-mean-bs32-depthnone-seed1"
    assert {k for k in runs[0]} == {"run_id", "model", "margin", "scale", "pooling", "batch_size", "freeze_depth", "seed"}


def test_every_axis_is_swept_as_a_product_with_unique_readable_ids():
    config = demo_config()
    config["dual"].update(margins=[0, 0.1, 0.25], scales=[5, 10], poolings=["mean", "cls"], batch_sizes=[8, 16],
                          freeze_depths=[-1, 3], seeds=[1, 2])
    runs = dual_runs(config)
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
    family = dual_settings(config)
    assert family["dev"] == {"dataset": "demo-bitext", "langs": ["qaa", "qab", "qac"], "split": "dev"}
    (run,) = dual_runs(config)
    assert (run["margin"], run["scale"], run["pooling"], run["batch_size"], run["freeze_depth"]) == (0.3, 10, "mean", 24, -1)
    assert family["symmetric"] == "sum"


def test_disabled_families_expand_to_nothing():
    config = demo_config()
    config["dual"]["enabled"] = False
    config["alignment"]["enabled"] = False
    assert dual_runs(config) == [] and alignment_runs(config) == []


def test_alignment_rows_cover_pretrained_dual_and_freeze_depth_models():
    config = demo_config()
    config["alignment"]["freeze_depths"] = [-1, 6]
    rows = alignment_runs(config)
    assert [r["source"] for r in rows] == ["pretrained", "dual", "dual", "freeze_depth", "freeze_depth"]
    assert rows[0]["run_id"] == "pretrained-demo-mbert" and rows[0]["source_run"] is None
    assert rows[1]["source_run"] == dual_runs(config)[0]["run_id"]
    assert [r["source_run"] for r in rows[3:]] == ["demo-mbert-depthnone-seed1", "demo-mbert-depth06-seed1"]


def test_alignment_picks_named_dual_runs_and_first_seed_only():
    config = demo_config()
    config["freeze_depth"]["seeds"] = [3, 4]
    config["alignment"].update(dual_runs=["demo-mbert-margin0.3-scale10-mean-bs32-depthnone-seed1"], freeze_depths=[2])
    rows = alignment_runs(config)
    assert [r["run_id"] for r in rows] == ["pretrained-demo-mbert", "dual-demo-mbert-margin0.3-scale10-mean-bs32-depthnone-seed1",
                                          "freeze_depth-demo-mbert-depth02-seed3"]


def test_mining_pairs():
    assert dual_mining_pairs(dual_settings(demo_config())) == ["qaa-en"]
    assert dual_mining_pairs(dual_settings(paper_config())) == ["de-en", "fr-en", "ru-en", "zh-en"]


def test_paper_sweep_has_the_seeds_margins():
    runs = dual_runs(paper_config())
    assert sorted({r["margin"] for r in runs}) == [0, 0.1, 0.2, 0.3, 0.4]
    assert len(runs) == 5 * 2 * 2


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
    (lambda c: c["alignment"]["data"].update(dataset="demo-sts"), r"alignment.data.dataset: dataset 'demo-sts' is a sts dataset"),
    (lambda c: c["alignment"].update(models=["xlmr"]), r"alignment.models: unknown model 'xlmr'"),
    (lambda c: c["alignment"].update(dual_runs=["nope"]), r"alignment.dual_runs: unknown dual run\(s\) \['nope'\]"),
    (lambda c: c["alignment"].update(freeze_depths=[5]) or c["freeze_depth"].update(depths=[-1, 0]),
     r"alignment.freeze_depths: depth\(s\) \[5\] are not in the freeze_depth sweep"),
    (lambda c: c["alignment"].update(tsne_layers=[0, 13]), r"alignment.tsne_layers: hidden-state index\(es\) \[13\] out of range .* 12 layers"),
    (lambda c: c["alignment"].update(models=[], freeze_depths=[]) or c["dual"].update(enabled=False), r"alignment: nothing to analyse"),
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
    (lambda c: c["alignment"].update(projection="umap"), "alignment.projection"),
])
def test_schema_errors_name_the_key(mutate, where):
    config = copy.deepcopy(demo_config())
    mutate(config)
    with pytest.raises(XltError, match=rf"config error at {where}"):
        validate(config)


def test_prefetch_plans_the_hub_bucc_pairs():
    from xlt.core.prefetch import plan

    _, loads = plan(paper_config())
    bucc = sorted((d.path, d.config_name, d.split) for d in loads if d.name == "dual.mining")
    assert bucc == [("mteb/bucc-bitext-mining", pair, "test") for pair in ("de-en", "fr-en", "ru-en", "zh-en")]
    talks = {d.config_name for d in loads if d.name == "talks"}
    assert talks == {f"en-{lang}" for lang in paper_config()["dual"]["train"]["langs"]}

