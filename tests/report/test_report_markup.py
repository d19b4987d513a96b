"""Every report caption and the front page render to reStructuredText with no docutils system
message, for the demo, the tiny sweep and the paper config, rendered as `snakemake --report` does."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml
from helpers.rule_files import rule_files
from rst import render, system_messages

from xlt.core import registry
from xlt.core.settings import validate
from xlt.families.adapt.plan import PLOT_KINDS
from xlt.report import family_tables

REPO = Path(__file__).resolve().parents[2]
CONFIGS = ["config.yaml", "config/tiny.yaml", "config/paper.yaml"]


def rule_captions() -> list[str]:
    """Every caption a rule declares, relative to the repository: literal, relative to its rules
    file, or the generic family rules' (xlt.report.family_tables)."""
    literal = {
        (rules.parent / caption).resolve()
        for rules in rule_files()
        for caption in re.findall(r'caption="([^"]+)"', rules.read_text())
    }
    generic = {family_tables.caption(name) for name in registry.names()} | {family_tables.CURVES_CAPTION}
    return sorted(str(Path(c).resolve().relative_to(REPO)) for c in literal | {c for c in generic if c})


def report_categories() -> list[str]:
    """Every category the rules file results under, literal or a module's CATEGORY constant."""
    from xlt.analysis import targets
    from xlt.cost import ledger
    from xlt.report.positive_control import plan as positive_control

    literal = {c for rules in rule_files() for c in re.findall(r'category="([^"{]+)"', rules.read_text())}
    per_family = {family_tables.category(name) for name in registry.names()}
    return sorted(literal | per_family | {targets.CATEGORY, ledger.CATEGORY, positive_control.CATEGORY})


CAPTIONS = rule_captions()


CATEGORIES = report_categories()


def load(name: str) -> dict:
    return validate(yaml.safe_load((REPO / name).read_text()))


def test_the_report_links_snakemake_appends_are_valid_targets():
    # a category with a colon ("Statistics: ...") made every caption of the report show a
    # "Duplicate explicit target name" box
    assert len(CATEGORIES) >= 8
    assert system_messages(render("Text.", {}, CATEGORIES, ["cost.csv"])) == []
    assert system_messages(render("Text.", {}, ["Statistics: tests"])) != []


def test_every_caption_a_rule_declares_is_found():
    assert len(CAPTIONS) >= 10
    for caption in CAPTIONS:
        assert (REPO / caption).is_file(), caption


@pytest.mark.parametrize("name", CONFIGS)
def test_front_page_renders_without_system_messages(name):
    text = render(
        (REPO / "workflow" / "report" / "workflow.rst").read_text(),
        load(name),
        CATEGORIES,
        ["accuracy-heatmap.png", "freeze_depth.csv"],
    )
    assert system_messages(text) == []


@pytest.mark.parametrize("name", CONFIGS)
def test_every_caption_renders_without_system_messages(name):
    config = load(name)
    for caption in CAPTIONS:
        template = (REPO / caption).read_text()
        # the adapt caption tells its figures apart by the plot rule's `kind` wildcard
        for wildcards in [{"kind": kind} for kind in PLOT_KINDS] + [{}] if "wildcards" in template else [{}]:
            assert system_messages(render(template, config, CATEGORIES, **wildcards)) == [], (caption, wildcards)


def test_the_known_failures_are_a_list_with_one_item_per_line():
    config = load("config.yaml")
    text = render((REPO / "workflow" / "report" / "workflow.rst").read_text(), config)
    known = config["positive_control"]["known_failures"]
    assert known
    for check, why in known.items():
        assert f"\n- {check} ({why})\n" in text


def test_user_facing_text_names_no_tracker_issue():
    # a reader of the report, a config or the README cannot see the tracker
    texts = {
        path: path.read_text()
        for path in [
            *REPO.glob("config*.yaml"),
            *(REPO / "config").glob("*.yaml"),
            REPO / "README.md",
            *(REPO / "src").rglob("*.rst"),
            REPO / "workflow" / "report" / "workflow.rst",
        ]
    }
    found = {
        str(path.relative_to(REPO)): re.findall(r"\bissues? #?\d+", text, re.IGNORECASE) for path, text in texts.items()
    }
    assert {path: hits for path, hits in found.items() if hits} == {}


def test_the_freeze_depth_caption_says_how_the_frozen_prefix_ran():
    """Cached depths (eval mode, the training's autocast) beside uncached depth -1, or every depth
    uncached: the caption says which, and names the table's columns that record it per run."""
    template = (REPO / "src/xlt/families/freeze_depth/caption.rst").read_text()
    config = load("config.yaml")
    text = render(template, config)
    assert "Frozen prefix cached for depths >= 0" in text and "under the training's autocast" in text
    assert "depth -1\nfreezes nothing and trained uncached" in text and "allow_mixed_caching: true" in text
    assert "``cache_frozen_prefix`` and ``prefix_precision`` columns" in text
    config["freeze_depth"]["depths"] = [0, 4]
    assert "depth -1" not in render(template, config)
    config["freeze_depth"]["cache_frozen_prefix"] = False
    text = render(template, config)
    assert "recomputed in every step, in train mode (dropout on in the frozen part too)" in text
    assert "``prefix_precision`` columns" in text and "Frozen prefix cached" not in text
