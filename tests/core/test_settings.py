import copy
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from xlt.core import settings
from xlt.core.errors import XltError
from xlt.core.settings import validate

REPO = Path(__file__).resolve().parents[2]


def demo_config():
    return yaml.safe_load((REPO / "config.yaml").read_text())


@pytest.mark.parametrize("path", ["config.yaml", "config/paper.yaml", "config/tiny.yaml"])
def test_shipped_configs_validate_and_plan(path):
    config = validate(yaml.safe_load((REPO / path).read_text()))
    enabled = [f for f in settings.FAMILIES if settings.family(config, f)]
    assert enabled, f"{path} enables no family"
    for family in enabled:
        assert settings.plan_module(family).runs(config), f"{path}: {family} is enabled but plans no run"


def test_validation_fills_every_default_in_place():
    config = demo_config()
    del config["freeze_depth"]["cache_frozen_prefix"]
    out = validate(config)
    assert out is config
    fd = config["freeze_depth"]
    assert fd["cache_frozen_prefix"] is False and fd["enabled"] is True and fd["eval"]["split"] == "test"
    assert fd["resources"] == {"cpus": 1}
    # the shared training section gets TrainArgs' defaults under what the config sets
    assert config["training"]["max_length"] == 48  # set by config.yaml
    assert config["training"]["max_grad_norm"] == 1.0 and config["training"]["precision"] == "auto"  # defaults
    assert "seed" not in config["training"]  # a sweep axis, never a shared default
    assert config["report"]["demo"] is True


def test_defaults_of_shared_definitions_reach_the_config():
    config = demo_config()
    del config["freeze_depth"]["seeds"]  # `seeds: {$ref: "#/$defs/seeds"}`; the default lives in $defs
    validate(config)
    assert config["freeze_depth"]["seeds"] == [1]


def test_family_training_override_stays_an_override():
    config = demo_config()
    del config["freeze_depth"]["training"]
    validate(config)
    assert config["freeze_depth"]["training"] == {}  # no defaults poured into family overrides
    assert settings.training(config, "sbert")["max_steps"] == 200  # sbert's own
    assert settings.training(config, "freeze_depth")["max_steps"] == 120  # shared


def test_a_family_is_off_when_absent_or_disabled():
    config = demo_config()
    del config["monox"]  # (not sbert: the demo's dual family distils from an sbert run)
    config["adapt"] = {"enabled": False}
    validate(config)
    assert settings.family(config, "monox") is None and settings.family(config, "adapt") is None
    assert settings.family(config, "freeze_depth") is not None


def test_the_schema_ships_in_the_package():
    schema = settings.schema()
    assert set(settings.FAMILIES) <= set(schema["properties"])
    assert all(p.is_relative_to(settings.PACKAGE) for p in [settings.PACKAGE / "core" / "schema.yaml"])


@pytest.mark.parametrize(
    "mutate, where",
    [
        (lambda c: c["training"].update(lr=-1), "training.lr"),
        (lambda c: c["training"].update(learning_rate=1e-3), "training"),
        (lambda c: c["datasets"]["demo-nli"].update(source="s3"), "datasets.demo-nli.source"),
        (lambda c: c["models"]["demo-mbert"].update(source="hub"), "models.demo-mbert"),  # hub needs a path
        (lambda c: c["freeze_depth"].update(cpus=4), "freeze_depth"),  # resources go under resources:
    ],
)
def test_schema_errors_name_the_key(mutate, where):
    config = copy.deepcopy(demo_config())
    mutate(config)
    with pytest.raises(XltError, match=rf"config error at {where}"):
        validate(config)


@pytest.mark.parametrize(
    "text, edit, problem",
    [
        # the cases, as YAML spells them in config.yaml
        (
            "sizes: {train: 1500, dev: 150, test: 400}",
            "sizes: {train: 1500, dev: 1.0e+308, test: 400}",
            r"datasets\.demo-nli\.sizes\.dev: 1e\+308 is a float where a whole number .* is meant; write an integer",
        ),
        (
            "sizes: {train: 1500, dev: 150, test: 400}",
            "sizes: {train: 1500, dev: 150.0, test: 400}",
            r"datasets\.demo-nli\.sizes\.dev: 150\.0 is a float where a whole number",
        ),
        (
            "sizes: {train: 1500, dev: 150, test: 400}",
            "sizes: {train: 1500, dev: 100000000000000000000, test: 400}",
            r"datasets\.demo-nli\.sizes\.dev: 100000000000000000000 does not fit a 64-bit integer",
        ),
        ("lr: 5.0e-4", "lr: .nan", r"training\.lr: nan is not a finite number"),
        ("lr: 5.0e-4", "lr: 1e9", r"training\.lr: 1000000000\.0 is outside \(0, 1\]; set training\.lr within \(0, 1\]"),
        ("weight_decay: 0.01", "weight_decay: 3", r"training\.weight_decay: 3 is outside \[0, 1\]"),
        # a float where the schema offers an integer or a word (monox's training sizes: a count or `all`)
        ("sizes: [20, all]", "sizes: [20.0, all]", r"monox\.tasks\.0\.sizes\.0: 20\.0 is a float where a whole number"),
        # non-finite is refused everywhere, in lists and where the schema sets no range
        ("margins: [0, 0.3]", "margins: [0, -.inf]", r"dual\.margins\.1: -inf is not a finite number"),
        ("scales: [10]", "scales: [.inf]", r"dual\.scales\.0: inf is not a finite number"),
    ],
)
def test_numbers_that_cannot_be_meant_are_refused(text, edit, problem):
    source = (REPO / "config.yaml").read_text()
    assert text in source
    with pytest.raises(XltError, match=rf"^config error at {problem}"):
        validate(yaml.safe_load(source.replace(text, edit, 1)))


def test_a_command_line_nan_is_refused_after_it_becomes_a_number():
    config = demo_config()
    config["statistics"] = {"confidence": "nan"}  # Snakemake's --config "statistics={confidence: nan}"
    with pytest.raises(XltError, match=r"^config error at statistics\.confidence: nan is not a finite number"):
        validate(config)


def test_load_names_a_missing_file(tmp_path):
    with pytest.raises(XltError, match="config file .*nope.yaml not found"):
        settings.load(tmp_path / "nope.yaml")


def _xlt(*args, cwd):
    return subprocess.run([sys.executable, "-m", "xlt.cli", *args], capture_output=True, text=True, cwd=cwd)


def test_config_show_prints_the_effective_config(tmp_path):
    result = _xlt("config", "show", "--config", str(REPO / "config.yaml"), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    shown = yaml.safe_load(result.stdout)
    assert shown == validate(demo_config())


def test_config_check_imports_no_torch(tmp_path):
    code = (
        "import sys; from xlt.cli import main; code = main(['config', 'check', '--config', sys.argv[1]]); "
        "assert 'torch' not in sys.modules, sorted(m for m in sys.modules if m.startswith('torch'))[:5]; "
        "sys.exit(code)"
    )
    result = subprocess.run(
        [sys.executable, "-c", code, str(REPO / "config/paper.yaml")], capture_output=True, text=True, cwd=tmp_path
    )
    assert result.returncode == 0, result.stderr
    assert "valid" in result.stdout


def test_config_check_names_the_error(tmp_path):
    bad = demo_config()
    bad["freeze_depth"]["depths"] = [0, 13]
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(bad))
    result = _xlt("config", "check", "--config", str(path), cwd=tmp_path)
    assert result.returncode == 2
    assert (
        "freeze depth 13 in freeze_depth.depths is out of range for model 'demo-mbert' with 12 layers" in result.stderr
    )


def test_a_demo_language_missing_from_the_demo_world_is_a_config_error():
    from xlt.core import settings
    from xlt.core.errors import XltError

    config = {
        "models": {"m": {"source": "demo", "languages": ["en", "qab"]}},
        "datasets": {"d": {"source": "demo", "task": "nli", "languages": ["en", "qaa"], "sizes": {"train": 3}}},
        "demo_world": {"languages": {"qaa": {"overlap": 0.5}}},
    }
    with pytest.raises(XltError, match=r"models\.m\.languages: \['qab'\] not in demo_world"):
        settings.validate(config)


def test_command_line_strings_become_the_booleans_and_numbers_the_schema_wants():
    """Snakemake's --config gives nested values as strings ("positive_control={enabled: true}")."""
    config = demo_config()
    config["positive_control"] = {"enabled": "true", "freeze_depth": {"depth_gain": "0.2"}}
    settings.validate(config)
    assert config["positive_control"]["enabled"] is True
    assert config["positive_control"]["freeze_depth"]["depth_gain"] == 0.2
    config = demo_config()
    config["positive_control"] = {"enabled": "yes please"}
    with pytest.raises(XltError, match="positive_control.enabled"):
        settings.validate(config)


def test_freeze_depths_of_a_model_without_a_head_leave_its_top_layer_to_train():
    config = validate(demo_config())  # demo-mbert: 12 layers
    assert settings.freeze_depths(config, "all", "demo-mbert", "x.depths") == list(range(-1, 13))
    assert settings.freeze_depths(config, "all", "demo-mbert", "x.depths", head=False) == list(range(-1, 12))
    assert settings.freeze_depths(config, [12], "demo-mbert", "x.depths") == [12]
    with pytest.raises(XltError, match=r"freeze depth 12 in x.depths leaves nothing to train in model 'demo-mbert' "):
        settings.freeze_depths(config, [11, 12], "demo-mbert", "x.depths", head=False)
