"""benchmarks/tatoeba_duplicates.py: the counts behind docs/tatoeba-matching.md's table."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from conftest import shared_data_dir

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))

import tatoeba_duplicates  # noqa: E402


def test_counts_repeated_strings_and_the_queries_the_rules_can_score_differently():
    xx = ["a", "b", "b", "c"]
    en = ["x", "x", "x", "z"]
    assert tatoeba_duplicates.duplicate_stats(xx, en) == {
        "pairs": 4,
        "xx_dup_strings": 1,
        "xx_dup_lines": 2,
        "en_dup_strings": 1,
        "en_dup_lines": 3,
        "xx->en_can_differ": 0.75,
        "en->xx_can_differ": 0.5,
    }


def test_the_demo_bitext_repeats_no_string():
    # why the index default moves no demo number (docs/tatoeba-matching.md)
    sets = tatoeba_duplicates.config_sets(BENCHMARKS.parent / "config.yaml", "demo-bitext", None)
    assert len(sets) == 9
    for xx, en in sets.values():
        stats = tatoeba_duplicates.duplicate_stats(xx, en)
        assert stats["xx_dup_strings"] == stats["en_dup_strings"] == 0


@pytest.mark.realdata
def test_the_shared_laser_files_repeat_no_string():
    directory = shared_data_dir() / "tatoeba"
    if not directory.is_dir():
        pytest.skip(f"no Tatoeba files under {directory}")
    sets = tatoeba_duplicates.laser_sets(directory, None)
    assert sorted(sets) == ["ara", "cmn", "deu", "fra", "jpn", "nld", "rus", "spa"]
    assert all(tatoeba_duplicates.duplicate_stats(*pair)["xx->en_can_differ"] == 0 for pair in sets.values())
    langs = tatoeba_duplicates.tatoeba_langs(BENCHMARKS.parent / "config" / "paper.yaml")
    assert [lang for lang in langs if lang not in sets] == ["ita", "por", "pol", "tur"]
