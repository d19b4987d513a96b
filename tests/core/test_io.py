"""Atomic outputs: a directory output (a saved model) replaces its previous version whole or not at
all, and the fault-injection hook the kill sweep uses is inert unless asked."""

from __future__ import annotations

import os
import signal

import pytest

from xlt.core import faults
from xlt.core.errors import XltError
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


def test_the_fault_hook_is_inert_without_its_variable_and_checks_its_syntax(monkeypatch):
    monkeypatch.delenv(faults.ENV, raising=False)
    faults.reached("step")  # no signal, no error
    assert faults.parse("checkpoint:2:KILL") == ("checkpoint", 2, signal.SIGKILL)
    for bad in ("checkpoint:0:KILL", "nowhere:1:KILL", "step:1:HUP", "step:1"):
        with pytest.raises(XltError, match="XLT_FAULT"):
            faults.parse(bad)


def test_the_fault_hook_signals_on_the_nth_time(monkeypatch):
    received = []
    previous = signal.signal(signal.SIGTERM, lambda signum, frame: received.append(signum))
    try:
        monkeypatch.setenv(faults.ENV, "save:2:TERM")
        monkeypatch.setattr(faults, "_reached", faults.Counter())
        faults.reached("save")
        faults.reached("step")
        assert received == []
        faults.reached("save")
        assert received == [signal.SIGTERM]
        faults.reached("save")
        assert received == [signal.SIGTERM]  # only the n-th time
    finally:
        signal.signal(signal.SIGTERM, previous)
