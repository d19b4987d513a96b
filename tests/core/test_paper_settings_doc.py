"""docs/paper-settings.md gives every setting of config/paper.yaml that differs from the schema's
default, and every training setting, a row: its value and its source (a seed and section, or an
authors' script and commit) or its reason. A key without a row fails here, by name, and so does a
row whose value is not the config's or that names a key the config lacks: whoever adds, changes or
moves a setting changes its row.

A row is a table line `| keys | value | source |`: keys are dotted paths in backquotes (several
when they share value and source; a list item of mappings is named by its dataset,
`monox.tasks[xnli]`, else its index), the value is YAML (plain or in backquotes). A row of a
mapping (`{...}`) covers every key inside it."""

from __future__ import annotations

import copy
import re
from pathlib import Path

import yaml

from xlt.core import settings

REPO = Path(__file__).resolve().parents[2]
DOC = REPO / "docs" / "paper-settings.md"
PAPER = REPO / "config" / "paper.yaml"
# hyperparameters kept beside a `training:` mapping rather than in one (every key of a `training:`
# mapping, at any depth, is a training setting too): a row even where the value is the default
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
ROW = re.compile(r"^\|\s*(`[^|]*`)\s*\|([^|]*)\|(.*)\|\s*$")


def _item_name(item, index: int) -> str:
    return str(item.get("dataset", index)) if isinstance(item, dict) else str(index)


def _mappings(value) -> bool:
    """A list of mappings (MonoX's tasks, dual's STS sets) is walked into, item by item."""
    return isinstance(value, list) and bool(value) and all(isinstance(item, dict) for item in value)


def leaves(config: dict) -> dict[str, object]:
    """Dotted path -> value of every setting of `config` (a scalar, or a list of values)."""
    found: dict[str, object] = {}

    def walk(node, path: str) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                walk(value, f"{path}.{key}" if path else str(key))
        elif _mappings(node):
            for i, item in enumerate(node):
                walk(item, f"{path}[{_item_name(item, i)}]")
        else:
            found[path] = node

    walk(config, "")
    return found


def training_keys(config: dict) -> list[str]:
    """The dotted path of every training setting of `config`."""
    return sorted(
        path
        for path in leaves(config)
        if ".training." in f".{path}" or path.rsplit(".", 1)[-1].split("[")[0] in TRAINING_NAMES
    )


def defaults(config: dict) -> dict[str, object]:
    """Dotted path -> the value the schema fills in where `config` leaves a key out: `config`'s
    mappings without their values, validated (its filling pass) and given TrainArgs' shared
    defaults (xlt.core.settings)."""

    def skeleton(node):
        if isinstance(node, dict):
            return {k: skeleton(v) for k, v in node.items() if isinstance(v, dict) or _mappings(v)}
        return [skeleton(item) for item in node] if _mappings(node) else node

    empty = skeleton(copy.deepcopy(config))
    list(settings._filling_validator()(settings.schema()).iter_errors(empty))  # fills defaults, errors aside
    settings._fill_training_defaults(empty)
    return leaves(empty)


def keys_needing_a_row(config: dict) -> list[str]:
    """Every setting of `config` whose value is not the schema's default, and every training setting."""
    filled = defaults(config)
    differs = [path for path, value in leaves(config).items() if path not in filled or filled[path] != value]
    return sorted(set(differs) | set(training_keys(config)))


def rows(text: str) -> list[tuple[list[str], object, str]]:
    """(keys, value, source) of every row of the document."""
    found = []
    for line in text.splitlines():
        match = ROW.match(line)
        if match:
            keys = re.findall(r"`([^`]+)`", match.group(1))
            value = match.group(2).strip().removeprefix("`").removesuffix("`")
            found.append((keys, yaml.safe_load(value), match.group(3).strip()))
    return found


def _lookup(config: dict, path: str):
    """The value at a dotted path (`monox.tasks[xnli].training.max_steps`); KeyError when absent."""
    node = config
    for part in re.findall(r"[^.\[\]]+|\[[^\]]+\]", path):
        if part.startswith("["):
            name = part[1:-1]
            matches = [item for i, item in enumerate(node) if _item_name(item, i) == name]
            if not matches:
                raise KeyError(path)
            node = matches[0]
        else:
            if not isinstance(node, dict) or part not in node:
                raise KeyError(path)
            node = node[part]
    return node


def _normal(value):
    """A value as compared: numbers as floats (YAML reads `5e-5` as text), inside lists and mappings."""
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            return value
    if isinstance(value, list):
        return [_normal(v) for v in value]
    if isinstance(value, dict):
        return {k: _normal(v) for k, v in value.items()}
    return value


def problems(config: dict, text: str) -> list[str]:
    """What is wrong with the document against `config`: a key without a row, a row whose value
    is not the config's, a row of a key the config lacks, a row without a source."""
    found, covered = [], set()
    for keys, value, source in rows(text):
        if not source:
            found.append(f"{', '.join(keys)}: the row gives no source or reason")
        for key in keys:
            try:
                actual = _lookup(config, key)
            except KeyError:
                found.append(f"{key}: documented, but config/paper.yaml has no such key; remove or rename its row")
                continue
            if _normal(actual) != _normal(value):
                found.append(f"{key}: documented as {value!r}, config/paper.yaml has {actual!r}; update the row")
            covered.add(key)
    for key in keys_needing_a_row(config):
        if not any(key == done or key.startswith(f"{done}.") for done in covered):
            found.append(f"{key}: no row (a line `| `{key}` | `value` | source |`)")
    return found


def test_every_setting_of_the_paper_config_has_its_row_with_its_value():
    config = yaml.safe_load(PAPER.read_text())
    found = problems(config, DOC.read_text())
    assert not found, "docs/paper-settings.md against config/paper.yaml:\n" + "\n".join(found)


def test_the_check_names_each_key_it_misses_and_each_value_that_differs():
    config = {
        "training": {"lr": 1e-5, "batch_size": 8},
        "report": {"demo": False},  # the schema's default: no row needed
        "fam": {
            "margins": [0.3],
            "langs": ["en"],
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
    assert "report.demo" not in keys_needing_a_row(config)
    assert "fam.langs" in keys_needing_a_row(config)  # no default: the config's own
    text = (
        "| `training.lr` | `1e-5` | a |\n| `fam.margins`, `fam.langs` | `[0.3]` | b |\n"
        "| `fam.tasks[xnli]` | `{dataset: xnli, training: {max_steps: 10}, eval: {split: test}}` | c |"
    )
    assert problems(config, text) == [
        "fam.langs: documented as [0.3], config/paper.yaml has ['en']; update the row",
        "fam.distill.training.epochs: no row (a line `| `fam.distill.training.epochs` | `value` | source |`)",
        "training.batch_size: no row (a line `| `training.batch_size` | `value` | source |`)",
    ]
    assert problems(config, text.replace("`1e-5`", "`2e-5`"))[0] == (
        "training.lr: documented as '2e-5', config/paper.yaml has 1e-05; update the row"
    )
    assert problems(config, text.replace("training.lr", "training.lr_old"))[:2] == [
        "training.lr_old: documented, but config/paper.yaml has no such key; remove or rename its row",
        "fam.langs: documented as [0.3], config/paper.yaml has ['en']; update the row",
    ]
