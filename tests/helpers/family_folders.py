"""A family kept outside the package for a test: its folder named in XLT_FAMILY_PATH, and what
registering it left in the test's process dropped again (`forget`)."""

from __future__ import annotations

import re
import sys
from pathlib import Path

from xlt.core import registry

REPO = Path(__file__).resolve().parents[2]
ARCHITECTURE = REPO / "docs" / "architecture.md"
# a file of the walk-through family: a paragraph starting with its path in backticks, then its fenced block
DOC_FILE = re.compile(r"^`(newfam/[\w.]+)`.*?\n```\w+\n(.*?)^```$", re.M | re.S)


def documented_family() -> dict[str, str]:
    """The walk-through family of docs/architecture.md: its files' paths and texts, as the doc has them."""
    walk = ARCHITECTURE.read_text().split("## Walk-through: add a family", 1)[1]
    return {path: text for path, text in DOC_FILE.findall(walk)}


def write_family(folder: Path, files: dict[str, str]) -> Path:
    for path, text in files.items():
        (folder / path).parent.mkdir(parents=True, exist_ok=True)
        (folder / path).write_text(text)
    return folder


def forget(families: Path, name: str) -> None:
    """Drop what registering the family `name` from `families` left in this process (its modules,
    the search path, the registry's caches)."""
    import xlt.families

    for module in [m for m in sys.modules if m == f"xlt.families.{name}" or m.startswith(f"xlt.families.{name}.")]:
        del sys.modules[module]
    registry.clear()
    if str(families) in xlt.families.__path__:
        xlt.families.__path__.remove(str(families))
