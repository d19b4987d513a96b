"""The `monox` config section: schema, cross-reference checks and the sweep expansion."""

import copy
from collections import Counter
from pathlib import Path

import pytest
import yaml

from xlt.core.errors import XltError
from xlt.core.settings import validate
from xlt.families.monox.plan import runs, training

ROOT = Path(__file__).resolve().parents[3]


def monox_runs(config):
    """The sweep of a config as the workflow sees it: validated, defaults filled in."""
    return runs(validate(config))


def base_config():
    return {
        "models": {
            "mbert": {"source": "demo"},
            "mono": {"source": "demo", "languages": ["en"]},
            "other": {"source": "demo"},
        },
        "datasets": {
            "senti": {
                "source": "demo",
                "task": "sentiment",
                "languages": ["en", "qaa"],
                "splits": {"train": ["en"], "dev": ["en"], "test": "all"},
                "sizes": {"train": 500, "dev": 50, "test": 50},
            },
            "corpus": {"source": "demo", "task": "corpus", "splits": ["train"], "sizes": {"train": 10}},
        },
        "monox": {
            "teachers": ["mono"],
            "students": ["mbert"],
            "seeds": [1, 2],
            "tasks": [
                {
                    "dataset": "senti",
                    "labelled_fraction": 0.2,
                    "dev_split": "dev",
                    "eval": {"langs": ["en", "qaa"]},
                    "sizes": [10, "all"],
                    "temperatures": [0.01, 0.1, 10],
                }
            ],
        },
    }


def edited(**changes):
    config = base_config()
    for path, value in changes.items():
        node = config
        keys = path.split("__")
        for key in keys[:-1]:
            node = node[int(key)] if key.isdigit() else node[key]
        last = keys[-1]
        if value is DELETE:
            del node[last]
        else:
            node[int(last) if last.isdigit() else last] = value
    return config


DELETE = object()


def test_base_config_gets_the_schema_defaults():
    family = validate(base_config())["monox"]
    assert {
        k: family[k]
        for k in (
            "enabled",
            "modes",
            "source_lang",
            "size",
            "temperature",
            "threshold",
            "self_train_rounds",
            "training",
            "resources",
        )
    } == {
        "enabled": True,
        "modes": ["finetune", "self_train", "kd", "pl"],
        "source_lang": "en",
        "size": "all",
        "temperature": 0.1,
        "threshold": 0.0,
        "self_train_rounds": 1,
        "training": {},
        "resources": {"cpus": 1},
    }
    task = family["tasks"][0]
    assert (task["eval"]["split"], task["training"], task["teacher_training"]) == ("test", {}, {})
    config = base_config()
    del config["monox"]["teachers"], config["monox"]["tasks"][0]["sizes"], config["monox"]["seeds"]
    config["monox"]["modes"] = ["finetune"]
    family = validate(config)["monox"]
    assert (family["teachers"], family["seeds"], family["tasks"][0]["sizes"], family["tasks"][0]["temperatures"]) == (
        [],
        [1],
        [],
        [0.01, 0.1, 10],
    )


@pytest.mark.parametrize(
    "changes, message",
    [
        ({"monox__teachers": ["nope"]}, r"monox.teachers: unknown model 'nope'"),
        ({"monox__students": ["nope"]}, r"monox.students: unknown model 'nope'"),
        ({"monox__teachers": DELETE}, r"monox.modes has \['kd', 'pl'\].*monox.teachers is not set"),
        ({"monox__students": DELETE}, r"config error at monox: 'students' is a required property"),
        ({"monox__tasks": DELETE}, r"config error at monox: 'tasks' is a required property"),
        ({"monox__tasks__0__dataset": "xnli"}, r"monox.tasks\[0\].dataset: unknown dataset 'xnli'"),
        ({"monox__tasks__0__dataset": "corpus"}, r"corpus dataset; MonoX needs a classification dataset"),
        (
            {"monox__tasks__0__unlabelled_split": "unlabeled"},
            r"exactly one of labelled_fraction .* or unlabelled_split",
        ),
        ({"monox__tasks__0__labelled_fraction": DELETE}, r"exactly one of labelled_fraction"),
        ({"monox__tasks__0__dev_fraction": 0.2}, r"exactly one of dev_split"),
        ({"monox__tasks__0__dev_split": "validation"}, r"has no validation split for \['en'\]"),
        (
            {"monox__tasks__0__eval": {"langs": ["en", "de"]}},
            r"monox.tasks\[0\] \(senti\).eval: dataset 'senti' has no test split for \['de'\]",
        ),
        ({"monox__source_lang": "qaa"}, r"has no train split for \['qaa'\]"),
        ({"monox__tasks__0__sizes": [10, 150]}, r"training size 150 is larger than the 100 labelled examples"),
        ({"monox__size": 101}, r"training size 101 is larger than the 100 labelled examples"),
    ],
)
def test_cross_reference_errors_name_the_key(changes, message):
    with pytest.raises(XltError, match=message):
        validate(edited(**changes))


def test_duplicate_task_is_an_error():
    config = base_config()
    config["monox"]["tasks"].append(copy.deepcopy(config["monox"]["tasks"][0]))
    with pytest.raises(XltError, match=r"\['senti'\] listed more than once"):
        validate(config)


def test_dev_fraction_counts_against_the_labelled_size():
    config = edited(monox__tasks__0__dev_split=DELETE, monox__tasks__0__dev_fraction=0.2)
    config["monox"]["tasks"][0]["sizes"] = [80]  # 100 labelled - 20 dev = 80: the largest size allowed
    assert {r["size"] for r in monox_runs(copy.deepcopy(config))} == {"all", 80}
    config["monox"]["tasks"][0]["sizes"] = [81]
    with pytest.raises(XltError, match="larger than the 80 labelled"):
        validate(config)


@pytest.mark.parametrize(
    "changes, where",
    [
        ({"monox__modes": ["kd", "distil"]}, "monox.modes.1"),
        ({"monox__temperature": 0}, "monox.temperature"),
        ({"monox__tasks__0__temperatures": [-1]}, "monox.tasks.0.temperatures.0"),
        ({"monox__threshold": 1.5}, "monox.threshold"),
        ({"monox__tasks__0__sizes": [0]}, "monox.tasks.0.sizes.0"),
        ({"monox__tasks__0__sizes": ["most"]}, "monox.tasks.0.sizes.0"),
        ({"monox__tasks__0__labelled_fraction": 1.0}, "monox.tasks.0.labelled_fraction"),
        ({"monox__tasks__0__typo": 1}, "monox.tasks.0"),
        ({"monox__self_train_rounds": 0}, "monox.self_train_rounds"),
    ],
)
def test_schema_errors_name_the_key(changes, where):
    with pytest.raises(XltError, match=rf"config error at {where}:"):
        validate(edited(**changes))


def test_cls_format_needs_no_files_at_planning_time():
    config = base_config()
    config["datasets"]["cls"] = {
        "source": "local",
        "task": "sentiment",
        "format": "cls",
        "files": "nowhere",
        "domain": "books",
        "languages": ["en", "de"],
        "splits": {"train": ["en"], "unlabeled": ["en"], "test": "all"},
    }
    config["monox"]["tasks"] = [
        {"dataset": "cls", "unlabelled_split": "unlabeled", "dev_fraction": 0.2, "eval": {"langs": ["en", "de"]}}
    ]
    rows = monox_runs(config)  # the sizes of local files are unknown until the job: no size check here
    assert {(r["task"], r["size"]) for r in rows} == {("cls", "all")} and len(rows) == 2 * (1 + 4)


# ---------------------------------------------------------------- sweep rows


def test_sweep_has_one_teacher_per_teacher_task_size_seed_feeding_its_students():
    rows = monox_runs(base_config())
    teachers = [r for r in rows if r["role"] == "teacher"]
    students = [r for r in rows if r["role"] == "student"]
    # sizes {all, 10} x seeds {1, 2}, one teacher model, one task
    assert Counter((r["teacher"], r["task"], r["size"], r["seed"]) for r in teachers) == {
        ("mono", "senti", size, seed): 1 for size in ("all", 10) for seed in (1, 2)
    }
    # per seed: 4 modes x 2 sizes + 2 extra kd temperatures = 10 students
    assert len(students) == 2 * (4 * 2 + 2)
    assert len({r["run_id"] for r in rows}) == len(rows)
    fed = Counter(r["teacher_run_id"] for r in students if r["teacher_run_id"])
    assert set(fed) == {t["run_id"] for t in teachers}
    headline_teacher = next(t["run_id"] for t in teachers if t["size"] == "all" and t["seed"] == 1)
    assert fed[headline_teacher] == 1 + 3  # pl + kd at T 0.01, 0.1, 10
    for r in students:
        assert (r["teacher"] is None) == (r["mode"] in ("finetune", "self_train"))
        assert (r["temperature"] is None) == (r["mode"] != "kd")
        assert r["headline"] == (r["size"] == "all" and r["temperature"] in (None, 0.1))
        if r["teacher_run_id"]:
            teacher = next(t for t in teachers if t["run_id"] == r["teacher_run_id"])
            assert (teacher["size"], teacher["seed"], teacher["task"]) == (r["size"], r["seed"], r["task"])


def test_no_teacher_jobs_without_teacher_modes_and_one_per_teacher_model():
    rows = monox_runs(edited(monox__modes=["finetune", "self_train"], monox__teachers=DELETE))
    assert not [r for r in rows if r["role"] == "teacher"] and len(rows) == 2 * 2 * 2
    rows = monox_runs(edited(monox__teachers=["mono", "other"], monox__seeds=[1]))
    teachers = [r for r in rows if r["role"] == "teacher"]
    assert Counter((t["teacher"], t["size"]) for t in teachers) == {
        (m, s): 1 for m in ("mono", "other") for s in ("all", 10)
    }
    kd = [r for r in rows if r["mode"] == "kd"]
    assert len(kd) == 2 * (2 + 2)  # per teacher: 2 sizes at T=0.1, 2 more temperatures


def test_disabled_family_has_no_rows_and_needs_nothing_else():
    assert monox_runs(edited(monox__enabled=False)) == []
    config = base_config()
    config["monox"] = {"enabled": False}
    assert monox_runs(config) == []
    assert monox_runs({k: v for k, v in base_config().items() if k != "monox"}) == []


@pytest.mark.parametrize("name", ["config.yaml", "config/paper.yaml"])
def test_shipped_configs_validate(name):
    with open(ROOT / name) as f:
        config = yaml.safe_load(f)
    assert any(r["role"] == "teacher" for r in monox_runs(config))


def test_teacher_training_overrides_apply_to_teacher_jobs_only():
    from dataclasses import asdict

    from xlt.core.train_args import NOT_FILLED, TrainArgs

    config = base_config()
    config["training"] = {"lr": 1e-4, "batch_size": 8}
    config["monox"]["training"] = {"batch_size": 16}
    config["monox"]["tasks"][0]["training"] = {"max_steps": 60}
    config["monox"]["tasks"][0]["teacher_training"] = {"lr": 2e-3, "max_steps": 100}
    validate(config)
    # every other setting is TrainArgs' default (the shared section is filled with them, but for
    # those it gets only where a config sets them)
    defaults = {k: v for k, v in asdict(TrainArgs()).items() if k != "seed" and k not in NOT_FILLED}
    assert training(config, "senti") == {**defaults, "lr": 1e-4, "batch_size": 16, "max_steps": 60}
    assert training(config, "senti", "teacher") == {**defaults, "lr": 2e-3, "batch_size": 16, "max_steps": 100}
