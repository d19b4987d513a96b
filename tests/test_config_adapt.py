"""Config errors of the adapt family name the offending key, before any job runs."""
import copy
from pathlib import Path

import pytest
import yaml

from xlt.core.settings import adapt_eval_sets, adapt_references, adapt_runs, validate
from xlt.core.errors import XltError

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def demo():
    return yaml.safe_load((ROOT / "config.yaml").read_text())


def _with(config, **changes):
    config = copy.deepcopy(config)
    for path, value in changes.items():
        node = config
        keys = path.split("__")
        for key in keys[:-1]:
            node = node[key]
        if value is None:
            del node[keys[-1]]
        else:
            node[keys[-1]] = value
    return config


def test_demo_and_paper_configs_expand(demo):
    validate(demo)
    rows = adapt_runs(demo)
    assert [r["scheme"] for r in rows] == ["0-12", "9-12", "gradual-start4-step4-every30steps"]
    assert len({r["run_id"] for r in rows}) == len(rows)
    assert [r["role"] for r in adapt_references(demo)] == ["native", "transfer"]
    sets = adapt_eval_sets(demo)
    assert sets["multilingual/dev"]["size_of"] == "qab/dev"
    assert set(sets) == {"qab/dev", "qab/test", "multilingual/dev", "qab/compare"}
    paper = yaml.safe_load((ROOT / "config" / "paper.yaml").read_text())
    validate(paper)
    assert len(adapt_runs(paper)) == 5 * 3  # the seed's five schemes x three seeds
    assert {r["model"] for r in adapt_references(paper)} == {"mbert", "bertje"}


@pytest.mark.parametrize("changes, fragment", [
    ({"adapt__schemes": ["0-12", "12-6"]}, r"adapt.schemes\[1\] \(model 'demo-mbert', 12 layers\): layer scheme '12-6'"),
    ({"adapt__schemes": ["0-13"]}, r"adapt.schemes\[0\].*out of range for a model with 12 layers"),
    ({"adapt__schemes": ["last-6"]}, r"adapt.schemes\[0\].*not a range"),
    ({"adapt__schemes": ["9-12", {"gradual": {"step": 4}}]}, r"adapt.schemes\[1\].*exactly one of"),
    ({"adapt__schemes": [{"gradual": {"every_steps": 10, "step": 4, "start": 13}}]}, r"adapt.schemes\[0\].*between 1 and 12"),
    ({"adapt__schemes": ["9-12", " 9 - 12"]}, r"adapt.schemes lists \['9-12'\] more than once"),
    ({"adapt__native": "bertje"}, r"adapt.native: unknown model 'bertje'"),
    ({"adapt__models": ["demo-mbert", "xlmr"]}, r"adapt.models: unknown model 'xlmr'"),
    ({"adapt__target__dataset": "nope"}, r"adapt.target.dataset: unknown dataset 'nope'"),
    ({"adapt__target__lang": "qaa"}, r"adapt.target.train_split: dataset 'demo-corpus' has no train split for \['qaa'\]"),
    ({"adapt__target__test_split": "dev"}, r"adapt.target: eval_split and test_split are both 'dev'"),
    ({"adapt__multilingual__langs": ["en", "de"]}, r"adapt.multilingual: dataset 'demo-corpus' has no dev split for \['de'\]"),
    ({"adapt__training__eval_every": 0}, r"adapt.training.eval_every \(K"),
    ({"adapt__compare": {"layers": [0, 13]}}, r"adapt.compare.layers \[13\] are outside 0..12"),
    ({"adapt__select": "worst"}, r"config error at adapt.select"),
    ({"adapt__schemes": [{"gradual": {"every_steps": 10, "step": 4, "speed": 2}}]}, r"config error at adapt.schemes.0"),
    ({"adapt__target": None}, r"'target' is a required property"),
])
def test_config_errors_name_the_key(demo, changes, fragment):
    with pytest.raises(XltError, match=fragment):
        validate(_with(demo, **changes))


def test_disabled_family_has_no_jobs(demo):
    config = _with(demo, adapt__enabled=False, adapt__native="undeclared")
    validate(config)  # a disabled family is not checked
    assert adapt_runs(config) == [] and adapt_references(config) == [] and adapt_eval_sets(config) == {}
