"""The workflow's Snakemake files, for tests that read the rules' text: workflow/rules/*.smk and the
rules.smk in every registered family's folder (xlt.core.registry), as the Snakefile includes them."""

from __future__ import annotations

from pathlib import Path

from xlt.core import registry

REPO = Path(__file__).resolve().parents[2]


def rule_files() -> list[Path]:
    return [
        *sorted((REPO / "workflow" / "rules").glob("*.smk")),
        *(Path(registry.rules_file(n)) for n in registry.names()),
    ]
