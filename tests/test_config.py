import copy
from pathlib import Path

import pytest
import yaml

from xlt.core.settings import freeze_depth_runs, validate
from xlt.core.errors import XltError

REPO = Path(__file__).resolve().parents[1]


def demo_config():
    return yaml.safe_load((REPO / "config.yaml").read_text())


def test_demo_and_paper_configs_are_valid():
    for path in (REPO / "config.yaml", REPO / "config" / "paper.yaml", REPO / "config" / "tiny.yaml"):
        validate(yaml.safe_load(path.read_text()))


def test_demo_sweep_has_every_depth():
    runs = freeze_depth_runs(demo_config())
    assert [r["freeze_depth"] for r in runs] == list(range(-1, 13))
    assert runs[0]["run_id"] == "demo-mbert-depthnone-seed1"
    assert runs[8]["run_id"] == "demo-mbert-depth07-seed1"


def test_depth_beyond_the_model_names_the_key():
    config = demo_config()
    config["freeze_depth"]["depths"] = [0, 13]
    with pytest.raises(XltError, match=r"freeze depth 13 in freeze_depth.depths .* 12 layers"):
        validate(config)


def test_unknown_dataset_names_the_key_and_the_choices():
    config = demo_config()
    config["freeze_depth"]["train"]["dataset"] = "mnli"
    with pytest.raises(XltError, match=r"freeze_depth.train.dataset: unknown dataset 'mnli'; declared datasets: .*demo-nli"):
        validate(config)


@pytest.mark.parametrize("mutate, where", [
    (lambda c: c["training"].update(lr=-1), "training.lr"),
    (lambda c: c["training"].update(learning_rate=1e-3), "training"),
    (lambda c: c["datasets"]["demo-nli"].update(source="s3"), "datasets.demo-nli.source"),
    (lambda c: c["models"]["demo-mbert"].update(source="hub"), "models.demo-mbert"),  # hub needs a path
])
def test_schema_errors_name_the_key(mutate, where):
    config = copy.deepcopy(demo_config())
    mutate(config)
    with pytest.raises(XltError, match=rf"config error at {where}"):
        validate(config)


def test_missing_language_split_is_caught():
    config = demo_config()
    config["freeze_depth"]["eval"]["langs"] = ["en", "de"]
    with pytest.raises(XltError, match=r"no test split for \['de'\]"):
        validate(config)
