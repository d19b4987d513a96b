"""Every number the plan assumes or measured sits in one table with its source (xlt.cost.constants),
and the modules of xlt.cost plan with the table's values."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from xlt.cost import constants, data_size, profile, shapes, sharing, tokens

KINDS = ("measured:", "paper:", "datasheet:", "code:", "assumed:")
REPO = Path(__file__).resolve().parents[2]


def test_every_constant_has_a_unit_and_says_where_it_comes_from():
    names = [c.name for c in constants.TABLE]
    assert len(names) == len(set(names)), "a constant is in the table twice"
    for constant in constants.TABLE:
        assert constant.unit.strip(), f"{constant.name} has no unit"
        assert constant.source.startswith(KINDS), f"{constant.name}: its source must start with one of {KINDS}"
        assert len(constant.source) > len("assumed: "), f"{constant.name} says no more than its kind"


def test_a_cited_measurement_file_exists():
    measurements = REPO / constants.MEASUREMENTS
    if not measurements.is_dir():
        pytest.skip(f"{measurements} is not here (the shared measurements sit beside a checkout)")
    cited = {
        name
        for c in constants.TABLE
        for name in re.findall(r"[\w.-]+\.(?:json|md)", c.source)
        if name.startswith("h100-")
    }
    assert cited, "no constant cites a measurement file"
    assert sorted(name for name in cited if not (measurements / name).is_file()) == []


def test_the_h200_files_the_constants_cite_are_in_the_repository():
    pattern = constants.H200_FILES
    assert pattern in constants.value.__globals__["_BY_NAME"]["h200_eager_step_s"].source
    for i in (1, 2):
        assert (REPO / pattern.replace("{1,2}", str(i))).is_file()


def test_the_modules_plan_with_the_tables_values():
    value = constants.value
    assert profile.COMPILE_S == value("compile_s")
    assert profile.PREFIX_CACHE_STEPS_PER_S == value("prefix_cache_steps_per_s")
    assert profile.H100_MEASURED["tokens_per_s"] == value("h100_tokens_per_s")
    assert profile.KNOWN["cpu"]["step_s"] == value("cpu_loop")["step_s"]
    assert sharing.SHARING_SPEEDUPS == value("sharing_speedups")
    assert profile.KNOWN["h100"]["compile_s"] == value("compile_s")
    assert tokens.BUCKETED_OVER_USEFUL == value("bucketed_over_useful")
    assert tokens.KNOWN_LENGTHS is value("known_lengths")
    assert data_size.KNOWN_ROWS is value("known_rows") and data_size.BYTES_PER_ROW == value("bytes_per_row")
    assert shapes.KNOWN_MODELS is value("known_models")
    with pytest.raises(KeyError, match="no constant 'nonsense'"):
        value("nonsense")
