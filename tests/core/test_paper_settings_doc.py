"""docs/paper-settings.md gives every training setting of config/paper.yaml its source (a seed
and section, or an authors' script and commit) or its reason: a key without an entry fails here,
by name, so whoever adds or moves a setting adds its line."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[2]
DOC = REPO / "docs" / "paper-settings.md"
# hyperparameters kept beside a `training:` mapping rather than in one (every key of a `training:`
# mapping, at any depth, is a training setting too)
TRAINING_NAMES = frozenset(
    {
        "batch_sizes",
        "margins",
        "scales",
        "symmetric",  # dual's swept recipe
        "temperature",
        "temperatures",
        "threshold",
        "self_train_rounds",
        "labelled_fraction",
        "dev_fraction",  # monox
        "eval_every",
        "eval_batch_size",
        "max_length",  # evaluation cadence and lengths outside `training:`
    }
)


def training_keys(config: dict) -> list[str]:
    """The dotted path of every training setting of `config`; a list item (a MonoX task) is named
    by its dataset: monox.tasks[xnli].training.max_steps."""
    found: list[str] = []

    def walk(node, path: str, in_training: bool) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                here = f"{path}.{key}" if path else str(key)
                leaf = not isinstance(value, (dict, list)) or (
                    isinstance(value, list) and not any(isinstance(item, dict) for item in value)
                )
                if not leaf:
                    walk(value, here, in_training or key == "training")
                elif in_training or key in TRAINING_NAMES:  # a value or a list of values (a swept axis)
                    found.append(here)
        elif isinstance(node, list):  # of mappings: MonoX's tasks
            for i, item in enumerate(node):
                if isinstance(item, dict):
                    walk(item, f"{path}[{item.get('dataset', i)}]", in_training)

    walk(config, "", False)
    return sorted(set(found))


def documented(text: str) -> set[str]:
    return set(re.findall(r"`([^`\s]+)`", text))


def undocumented(config: dict, text: str) -> list[str]:
    return [key for key in training_keys(config) if key not in documented(text)]


def test_every_training_setting_of_the_paper_config_has_an_entry():
    config = yaml.safe_load((REPO / "config" / "paper.yaml").read_text())
    missing = undocumented(config, DOC.read_text())
    assert not missing, (
        f"config/paper.yaml training settings without an entry in docs/paper-settings.md "
        f"(add a row: the key in backquotes, its value, its source or reason): {', '.join(missing)}"
    )


def test_the_check_names_each_key_it_misses():
    config = {
        "training": {"lr": 1e-5, "batch_size": 8},
        "fam": {
            "margins": [0.3],
            "langs": ["en"],
            "resources": {"gpus": 1},
            "tasks": [{"dataset": "xnli", "training": {"max_steps": 10}, "eval": {"split": "test"}}],
            "distill": {"training": {"epochs": 5}},
        },
    }
    assert training_keys(config) == [
        "fam.distill.training.epochs",
        "fam.margins",
        "fam.tasks[xnli].training.max_steps",
        "training.batch_size",
        "training.lr",
    ]
    text = "| `training.lr` | ... |\n| `fam.margins` | ... |"
    assert undocumented(config, text) == [
        "fam.distill.training.epochs",
        "fam.tasks[xnli].training.max_steps",
        "training.batch_size",
    ]
    assert undocumented(config, text.replace("training.lr", "training.lr_old"))[-1] == "training.lr"
