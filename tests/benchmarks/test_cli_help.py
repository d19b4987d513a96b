"""benchmarks/cli_help.py on one repeat: it times each command and lists the heavy modules the
full parser imports (figures, not a timed test)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

import cli_help  # noqa: E402


def test_cli_help_benchmark_times_every_command_and_lists_heavy_imports():
    lines = []
    results = cli_help.run(repeats=1, echo=lines.append)
    assert set(results["commands"]) == set(cli_help.COMMANDS)
    assert all(0 < row["min_s"] <= row["median_s"] <= row["max_s"] for row in results["commands"].values())
    assert results["heavy_imports"] == []
    assert any(line.startswith("| xlt --help |") for line in lines)
