import re

from xlt import __version__
from xlt.core.version import git_commit, version_string


def test_version_string_names_the_package_version_and_the_checkout_commit():
    text = version_string()
    assert text.startswith(f"xlt {__version__}")
    commit = git_commit()
    if commit is not None:  # a git checkout (CI's fresh clone is one)
        assert re.fullmatch(r"[0-9a-f]{40}(-dirty)?", commit)
        assert f"(git {commit[:12]}" in text
