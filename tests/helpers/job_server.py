"""An `xlt job-server` for a test's own `xlt` subprocesses: each call forks from one process that
imported torch and transformers once (xlt.jobserver), as a workflow run's jobs do, instead of
paying those imports again (seconds of CPU a call)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from xlt.core.job_client import server_variables


class Served:
    """What the server said when it stopped: its last line counts the calls it forked and declined."""

    summary = ""


@contextmanager
def job_server(env: dict[str, str]) -> Iterator[Served]:
    """Within the block, `xlt` calls that inherit os.environ fork from a server started with `env`
    (the environment those calls run with: the server declines a call whose import-time variables
    differ from its own); the server is stopped at the end and its summary line kept."""
    server = subprocess.Popen(
        [sys.executable, "-m", "xlt.cli", "job-server", "--beside", str(os.getpid())],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    served = Served()
    try:
        path = server.stdout.readline().strip()
        if not path:
            pytest.fail(f"the job server did not start:\n{server.stderr.read()[-3000:]}")
        with pytest.MonkeyPatch.context() as patch:
            for name, value in server_variables(path).items():
                patch.setenv(name, value)
            yield served
    finally:
        server.send_signal(signal.SIGTERM)
        _, err = server.communicate(timeout=120)
        served.summary = err.strip().splitlines()[-1] if err.strip() else ""
