"""`tensorboard --logdir` as a process, asked through its HTTP API as its web page asks: the
monitoring tests (tests/core/test_monitor.py, test_monitor_sweep.py) read event files through it."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest


class Viewer:
    """`tensorboard --logdir` as a process, asked through its HTTP API as its web page asks."""

    def __init__(self, logdir: Path):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        command = [sys.executable, "-m", "tensorboard.main", "--logdir", str(logdir), "--port", str(self.port)]
        self.process = subprocess.Popen(
            [*command, "--host", "127.0.0.1"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
        )

    def get(self, path: str):
        with urllib.request.urlopen(f"http://127.0.0.1:{self.port}{path}", timeout=10) as response:
            return json.load(response)

    def post(self, path: str, body: dict):
        request = urllib.request.Request(
            f"http://127.0.0.1:{self.port}{path}",
            data=json.dumps(body).encode(),
            headers={"Content-Type": "application/json", "X-XSRF-Protected": "1"},
        )
        with urllib.request.urlopen(request, timeout=10) as response:
            return json.load(response)

    def tags(self, wanted: set[str], seconds: float = 90) -> dict:
        """The scalar tags by run, once the viewer has loaded `wanted` in some run."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                pytest.fail(f"tensorboard exited: {self.process.stderr.read()[-3000:]}")
            try:
                tags = self.get("/data/plugin/scalars/tags")
                if any(wanted <= set(run_tags) for run_tags in tags.values()):
                    return tags
            except OSError:
                pass
            time.sleep(0.5)
        pytest.fail(f"tensorboard did not serve {sorted(wanted)} within {seconds} s")

    def scalars(self, run: str, tag: str) -> list[tuple[int, float]]:
        rows = self.get(f"/data/plugin/scalars/scalars?run={urllib.request.quote(run)}&tag={urllib.request.quote(tag)}")
        return [(step, value) for _, step, value in rows]

    def close(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=30)
