"""Atomic outputs: a directory output (a saved model) replaces its previous version whole or not at
all."""
from __future__ import annotations

import os

import pytest

from xlt.core.io import atomic_directory


def test_atomic_directory_replaces_the_previous_one_whole(tmp_path):
    out = tmp_path / "model"
    with atomic_directory(out) as tmp:
        (tmp / "a.json").write_text("1")
        (tmp / "b.bin").write_text("old")
        assert not out.exists()  # nothing at the final name while writing
    with atomic_directory(out) as tmp:
        (tmp / "a.json").write_text("2")
    assert sorted(p.name for p in out.iterdir()) == ["a.json"]  # b.bin of the old version is gone
    assert (out / "a.json").read_text() == "2"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model"]  # no temporaries left


def test_a_failed_directory_write_keeps_the_previous_one_and_leftovers_are_cleaned(tmp_path):
    out = tmp_path / "model"
    with atomic_directory(out) as tmp:
        (tmp / "a.json").write_text("1")
    with pytest.raises(OSError, match="disk full"):
        with atomic_directory(out) as tmp:
            (tmp / "a.json").write_text("half")
            raise OSError("disk full")
    assert (out / "a.json").read_text() == "1"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model"]

    stale = tmp_path / ".model.abc123.tmp"  # what a SIGKILL mid-write leaves
    stale.mkdir()
    (stale / "a.json").write_text("half")
    with atomic_directory(out) as tmp:
        (tmp / "a.json").write_text("3")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model"]
    assert (out / "a.json").read_text() == "3"


def test_saved_model_files_are_readable_like_any_other_output(tmp_path):
    umask = os.umask(0o022)
    os.umask(umask)
    with atomic_directory(tmp_path / "model") as tmp:
        (tmp / "a.json").write_text("1")
    assert (tmp_path / "model").stat().st_mode & 0o777 == 0o777 & ~umask
