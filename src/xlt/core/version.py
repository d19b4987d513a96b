"""Which xlt produced a result: the package version and, in a git checkout, the commit.

Kept free of heavy imports: `xlt --version` and every run manifest call it.
"""

from __future__ import annotations

import functools
import subprocess
from pathlib import Path

from xlt import __version__

_SOURCE_DIR = Path(__file__).resolve().parent


@functools.lru_cache(maxsize=1)
def git_commit() -> str | None:
    """The commit of the checkout xlt runs from (with '-dirty' when it has local changes);
    None for an installed wheel or where git is missing."""
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=_SOURCE_DIR, capture_output=True, text=True, timeout=10, check=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=_SOURCE_DIR,
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return commit + ("-dirty" if dirty else "") if commit else None


def version_string() -> str:
    """'xlt 0.1.0 (git 67fcebb4d22f)', or 'xlt 0.1.0' outside a checkout."""
    commit = git_commit()
    return f"xlt {__version__}" + (
        f" (git {commit[:12]}{'-dirty' if commit.endswith('-dirty') else ''})" if commit else ""
    )
