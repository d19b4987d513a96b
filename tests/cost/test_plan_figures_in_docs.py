"""The paper plan's figures that the README and the docs quote are what `xlt plan` prints today."""

import json
import re
from pathlib import Path

import pytest

from xlt.cli import main

REPO = Path(__file__).resolve().parents[2]
# (file, pattern): each group is a figure of `xlt plan --config config/paper.yaml --gpu h100 --json`'s total
QUOTES = [
    (
        "README.md",
        r"(?P<jobs>\d+) jobs, (?P<hours>\d+) job-hours that `xlt plan` fits\s+into about (?P<gpu_hours>[\d.]+) hours",
    ),
    ("docs/rehearsal.md", r"(?P<jobs>\d+) jobs, about (?P<gpu_hours>[\d.]+) H100-hours \(`xlt plan`\)"),
    ("docs/cluster.md", r"\(`config/paper.yaml`: (?P<jobs>\d+) jobs\)"),
]


@pytest.fixture(scope="module")
def paper_total():
    import contextlib
    import io

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["plan", "--config", "config/paper.yaml", "--gpu", "h100", "--json"]) == 0
    return json.loads(out.getvalue())["total"]


@pytest.mark.parametrize("path, pattern", QUOTES, ids=[q[0] for q in QUOTES])
def test_docs_quote_the_current_paper_plan(paper_total, path, pattern):
    found = re.search(pattern, (REPO / path).read_text())
    assert found, f"{path} no longer quotes the paper plan as {pattern!r}: update the pattern with the text"
    for name, quoted in found.groupdict().items():
        decimals = len(quoted.partition(".")[2])
        assert float(quoted) == round(paper_total[name], decimals), (
            f"{path} says {quoted} {name}; `xlt plan --config config/paper.yaml --gpu h100` gives "
            f"{paper_total[name]:.2f}: update the figure"
        )


LEVER_ROW = re.compile(
    r"^\| (?P<lever>[^|]+?) \| (?P<status>measured|assumed)[^|]* \| (?P<hours>[+-][\d.]+) \| (?P<share>\d+) % \|$", re.M
)


@pytest.mark.slow  # the paper sweep planned once more per lever
def test_the_lever_table_in_the_docs_is_what_plan_levers_prints(capsys):
    assert main(["plan", "--config", "config/paper.yaml", "--gpu", "h100", "--levers", "--json"]) == 0
    planned = json.loads(capsys.readouterr().out)
    text = (REPO / "docs" / "performance.md").read_text()
    assert f"| share of {planned['total']['gpu_hours']:.2f} |" in text, "docs/performance.md: update the total"
    quoted = {m["lever"]: m for m in LEVER_ROW.finditer(text)}
    assert list(quoted) == [row["lever"] for row in planned["levers"]], "docs/performance.md: update the levers"
    for row in planned["levers"]:
        m = quoted[row["lever"]]
        assert (m["status"], float(m["hours"]), int(m["share"])) == (
            row["status"],
            round(row["hours"], 2),
            round(100 * row["share"]),
        ), f"docs/performance.md quotes {row['lever']} as {m.group(0)}; `xlt plan --levers` gives {row}"


@pytest.mark.slow  # the paper sweep planned once more, on the fastest host's overheads
def test_docs_quote_the_current_plan_range():
    from xlt.core import settings
    from xlt.cost import profile, sweep

    config, h100 = settings.load("config/paper.yaml"), profile.load("h100")
    low, central = sweep.host_range(config, h100)["gpu_hours"], sweep.plan(config, h100)["total"]["gpu_hours"]
    readme = re.search(r"four jobs sharing it \((?P<low>[\d.]+) on a faster host", (REPO / "README.md").read_text())
    assert readme and float(readme["low"]) == round(low, 1), f"README.md: the range's low end is {low:.2f}"
    assert f"{low:.2f}-{central:.2f} GPU-h" in (REPO / "docs" / "performance.md").read_text(), (
        f"docs/performance.md: the range is {low:.2f}-{central:.2f} GPU-h"
    )
