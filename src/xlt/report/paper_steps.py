"""The checkpoints a family's seed study published numbers for, in our step numbering: what a
rehearsal must train its per-step runs to (a family's rehearsal hook reads them)."""

from __future__ import annotations

from xlt.report import paper, paper_match


def published_steps(family: str) -> list[int]:
    """Our steps (xlt.report.paper_match) of the family's published per-step numbers (its
    paper_results.csv rows with a `step=` setting); [] when it has none."""
    steps = {
        paper_match.ours(family, "step", setting["step"])[0]
        for setting in map(paper.parse_setting, paper.load(family).setting)
        if "step" in setting
    }
    return sorted(int(step) for step in steps)
