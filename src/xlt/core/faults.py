"""Fault injection for the kill sweep (benchmarks/kill_sweep.py): a job started with

    XLT_FAULT=<point>:<n>:<KILL|TERM>

sends itself that signal the n-th time it reaches `point`, so a kill lands exactly inside a
checkpoint write or the final save (killing from outside hits those windows only by luck).
The points:

  step         after each optimiser step, before its evaluation and checkpoint (n = the step)
  checkpoint   a checkpoint's temporary file is written and synced, not yet renamed into place
  save         a model's files are written into their temporary directory, not yet renamed

Without XLT_FAULT (every run outside the sweep) `reached` returns at once.
"""

from __future__ import annotations

import os
import signal
from collections import Counter

from xlt.core.errors import XltError

ENV = "XLT_FAULT"
POINTS = ("step", "checkpoint", "save")
SIGNALS = {"KILL": signal.SIGKILL, "TERM": signal.SIGTERM}

_reached: Counter = Counter()


def parse(spec: str) -> tuple[str, int, signal.Signals]:

    try:
        point, n, name = spec.split(":")
        if point not in POINTS or name not in SIGNALS or int(n) < 1:
            raise ValueError
    except ValueError:
        raise XltError(
            f"{ENV}={spec!r}: expected <point>:<n>:<signal> with point in {', '.join(POINTS)}, "
            f"n >= 1 and signal KILL or TERM (e.g. checkpoint:2:KILL)"
        ) from None
    return point, int(n), SIGNALS[name]


def reached(point: str) -> None:
    spec = os.environ.get(ENV)
    if not spec:
        return
    wanted, n, signum = parse(spec)
    if point != wanted:
        return
    _reached[point] += 1
    if _reached[point] == n:
        # SIGTERM runs the process's handler (GracefulStop's flag in the training loop, else the
        # default: exit) as an outside SIGTERM would; SIGKILL ends the process here
        os.kill(os.getpid(), signum)
