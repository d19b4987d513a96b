"""The report's first page (workflow/report/workflow.rst): for the demo it describes the synthetic
world from the config and what the demo must show; a real run keeps the plain text."""

from pathlib import Path

import yaml
from rst import render, system_messages

from xlt.core.settings import validate

REPO = Path(__file__).resolve().parents[2]


def page(config: dict) -> str:
    # rendered as `snakemake --report` renders it, and valid reStructuredText (no docutils message)
    text = render((REPO / "workflow" / "report" / "workflow.rst").read_text(), validate(config))
    assert system_messages(text) == []
    return text


def load(name: str) -> dict:
    return yaml.safe_load((REPO / name).read_text())


def demo_with_control() -> dict:
    """config.yaml with the positive control switched on, no known failures listed."""
    config = load("config.yaml")
    config["positive_control"] = {"enabled": True}
    return config


def table_rows(text: str) -> list[list[str]]:
    """The list-table's rows below its header, as cell texts."""
    body = text.split(".. list-table::")[1].split("\n\nThe encoder")[0]
    rows = []
    for line in body.splitlines():
        if line.startswith("   * - "):
            rows.append([line[len("   * - ") :]])
        elif line.startswith("     - "):
            rows[-1].append(line[len("     - ") :])
    assert rows[0] == ["language", "overlap with English", "word order", "adjectives"]
    return rows[1:]


def test_demo_page_describes_the_world_from_the_config():
    text = page(demo_with_control())
    assert "no scientific meaning" not in text
    assert "they say nothing about mBERT or about real languages" in text
    assert table_rows(text) == [
        ["``qaa``", "50 %", "SVO", "before the noun"],
        ["``qab``", "20 %", "SVO", "after the noun"],
        ["``qac``", "0 %", "SOV", "after the noun"],
    ]
    assert "a tiny BERT that this run builds and pretrains itself" in text
    assert "``demo-mbert`` (12 layers, hidden size 64, 1000 steps on mixed, en, qaa, qab, qac)" in text
    assert "``results/tables/positive_control.csv``" in text and "any failed check fails the run" in text
    assert "reaches 0.85 in English" in text and "MonoX students (finetune, kd, pl) reach 0.8" in text


def test_known_failures_are_named_on_the_first_page():
    text = page(load("config.yaml"))
    known = load("config.yaml")["positive_control"]["known_failures"]
    assert known and "**Not shown yet.**" in text
    for check, why in known.items():
        assert f"- {check} ({why})" in text
    assert "Not shown yet" not in page(demo_with_control())


def test_another_world_gives_another_table_sorted_by_overlap():
    config = demo_with_control()
    config["demo_world"] = {
        "languages": {"qaa": {"overlap": 0.1, "order": "SOV"}, "qab": {"overlap": 0.3}, "qac": {"overlap": 0.75}}
    }
    config["positive_control"]["freeze_depth"] = {"source_accuracy": 0.9}
    text = page(config)
    assert table_rows(text) == [
        ["``qac``", "75 %", "SVO", "before the noun"],  # schema defaults filled in
        ["``qab``", "30 %", "SVO", "before the noun"],
        ["``qaa``", "10 %", "SOV", "before the noun"],
    ]
    assert "reaches 0.9 in English" in text


def test_demo_without_the_positive_control_says_so():
    text = page(load("config/tiny.yaml"))
    assert "The positive control is off in this config" in text and "positive_control.csv``" not in text


def test_a_real_run_keeps_the_plain_first_page():
    text = page(load("config/paper.yaml"))
    assert "synthetic" not in text and "positive control" not in text.lower()
    assert text.startswith("xlt cross-lingual transfer report\n=================================\n")
    assert "Cross-lingual transfer experiments run by the **xlt** workflow." in text


def test_positive_control_caption_states_the_configured_thresholds():
    config = load("config.yaml")
    config["positive_control"]["dual"] = {"error_drop": 0.35}
    text = render((REPO / "src" / "xlt" / "report" / "positive_control" / "caption.rst").read_text(), validate(config))
    assert system_messages(text) == []
    assert "(overlap: qaa 0.5, qab 0.2, qac 0.0)" in text
    assert "(same model and pooling) - 0.35, per demo language" in text
    assert "source-language accuracy >= 0.85" in text and "students\n  finetune, kd, pl reach >= 0.8" in text
