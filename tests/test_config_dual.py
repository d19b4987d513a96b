"""Config section `alignment`: sweep expansion and errors that name the key (the `dual` section's
tests are in tests/families/dual/test_dual_plan.py)."""
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


@pytest.mark.parametrize("mutate, message", [
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
    (lambda c: c["alignment"].update(projection="umap"), "alignment.projection"),
])
def test_schema_errors_name_the_key(mutate, where):
    config = copy.deepcopy(demo_config())
    mutate(config)
    with pytest.raises(XltError, match=rf"config error at {where}"):
        validate(config)
