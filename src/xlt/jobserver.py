"""A fork server for `xlt` jobs: one process imports torch, transformers and the other heavy
libraries once, then each `xlt` call of a workflow run runs in a fork of it.

A rehearsal job's own work (a few optimiser steps on a tiny model) takes about a CPU-second, its
imports about five: of 496 jobs, the imports would be most of the run. `xlt job-server -- COMMAND`
runs COMMAND (snakemake) with XLT_JOB_SERVER naming the server's socket. An `xlt` call that finds
the variable sends the server its arguments, working directory, environment and its stdin, stdout
and stderr, and exits with the job's exit status (the client: xlt.core.job_client); the job runs the
`run_argv` the server was given (`xlt.cli.main`, which starts the server) in a fork, as a fresh
process would. Signals the call receives are passed on to the job.

The server declines a call (which then runs in its own process, as without the server) whose
environment differs from the server's in a variable the libraries read once, at import: the
Hugging Face caches and offline switches, PYTHONPATH and the like. A forked job would not see it.
"""

from __future__ import annotations

import atexit
import gc
import importlib
import json
import os
import select
import signal
import socket
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path
from typing import Callable

from xlt.core.console import QUIET_ENV
from xlt.core.job_client import (
    DECLINED_VERBS,
    HEADER,
    SLURM_JOB,
    VARIABLE,
    import_environment,
    in_another_slurm_job,
    server_variables,
)
from xlt.core.prefetch import cache_dir, cache_environment

RunArgv = Callable[[list[str]], int]  # runs `xlt ARGV` in this process: xlt.cli.main

THREAD_VARIABLE = "OMP_NUM_THREADS"  # Snakemake sets it to the rule's threads; applied with torch.set_num_threads
PRELOAD = (
    "torch",
    "transformers",
    "transformers.models.bert.modeling_bert",
    "transformers.models.roberta.modeling_roberta",
    "transformers.models.auto.tokenization_auto",
    "datasets",
    "numpy",
    "pandas",
    "scipy.stats",
    "sklearn.manifold",
    "xlt.report.figures",
    "xlt.core.training",
    "xlt.core.models",
)


# ---------------------------------------------------------------- the server


class Server:
    def __init__(
        self,
        path: str,
        run_argv: RunArgv,
        environment: dict[str, str],
        set_by_imports: dict[str, str],
        stats: str | None = None,
    ):
        self.path = path
        self.run_argv = run_argv
        self.stats = stats
        self.environment = import_environment(environment)  # as the libraries found it
        # what they set themselves (torch: KMP_DUPLICATE_LIB_OK): a caller that imported them too has it
        self.set_by_imports = set_by_imports
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listener.bind(path)
        self.listener.listen(64)
        self.handlers: set[int] = set()
        self.forked = self.declined = 0

    def decline_reason(self, request: dict, fds: list[int]) -> str | None:
        argv = request["argv"]
        if argv and argv[0] in DECLINED_VERBS:
            return f"verb {argv[0]}"
        if in_another_slurm_job(request["env"], os.environ.get(SLURM_JOB, "")):
            return f"a call from SLURM job {request['env'].get(SLURM_JOB, '(none)')} runs in its own process"
        env = dict(request["env"])
        if not all(os.isatty(fd) for fd in fds[1:3]):  # as console.configure() sets them in a fresh job
            env = {**QUIET_ENV, **env}
        theirs = import_environment(env)
        differ = sorted(
            k
            for k in theirs.keys() | self.environment.keys()
            if theirs.get(k) != self.environment.get(k)
            and not (k in self.set_by_imports and theirs.get(k) == self.set_by_imports[k])
        )
        return f"import-time variables differ: {', '.join(differ)}" if differ else None

    def accept(self) -> None:
        conn, _ = self.listener.accept()
        request, fds = _receive(conn)
        reason = self.decline_reason(request, fds)
        if reason:
            self.declined += 1
            print(f"xlt job-server: declined `xlt {' '.join(request['argv'][:1])}` ({reason})", file=sys.stderr)
            conn.sendall(b"declined\n")
            conn.close()
            for fd in fds:
                os.close(fd)
            return
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            try:
                signal.signal(signal.SIGTERM, signal.SIG_DFL)  # the server's passes it on to the command
                self.listener.close()
                _handle(conn, request, fds, self.stats, self.run_argv)
            finally:
                os._exit(1)
        self.forked += 1
        self.handlers.add(pid)
        conn.close()
        for fd in fds:
            os.close(fd)

    def reap(self) -> None:
        for pid in list(self.handlers):
            if os.waitpid(pid, os.WNOHANG)[0]:
                self.handlers.discard(pid)

    def serve_until(self, finished: int) -> None:
        """Accept calls (and reap their handlers) until the pidfd `finished` says its process ended."""
        while True:
            ready, _, _ = select.select([self.listener, finished], [], [], 1.0)
            self.reap()
            if self.listener in ready:
                self.accept()
            if finished in ready:
                return

    def close(self) -> None:
        self.listener.close()
        for pid in self.handlers:
            os.waitpid(pid, 0)
        Path(self.path).unlink(missing_ok=True)


def _receive(conn: socket.socket) -> tuple[dict, list[int]]:
    data, fds, _, _ = socket.recv_fds(conn, 1 << 16, 3)
    size = HEADER.unpack(data[: HEADER.size])[0]
    body = data[HEADER.size :]
    while len(body) < size:
        chunk = conn.recv(size - len(body))
        if not chunk:
            raise ConnectionError("the xlt call closed its connection mid-request")
        body += chunk
    return json.loads(body), list(fds)


def _handle(conn: socket.socket, request: dict, fds: list[int], stats: str | None, run_argv: RunArgv) -> None:
    """In a fork of the server: run the job in a fork of this process, pass on the signals the
    caller forwards (its hang-up ends the job) and answer with the job's exit status. With
    `stats`, append the job's verb, run id, CPU and wall seconds to that file."""
    started = time.monotonic()
    job = os.fork()
    if job == 0:
        conn.close()
        _run_job(request, fds, run_argv)
    for fd in fds:
        os.close(fd)
    done = os.pidfd_open(job)
    watching = [conn, done]
    while True:
        ready, _, _ = select.select(watching, [], [])
        if done in ready:
            _, wait_status, usage = os.wait4(job, 0)
            status = os.waitstatus_to_exitcode(wait_status)
            if stats:
                _record(stats, request["argv"], usage.ru_utime + usage.ru_stime, time.monotonic() - started)
            try:
                conn.sendall(f"status {status}\n".encode())
            except OSError:
                pass  # the caller is gone
            os._exit(0)
        message = conn.recv(256).decode()
        if not message:  # the caller ended without waiting: end its job too
            os.kill(job, signal.SIGTERM)
            watching = [done]
        for line in message.splitlines():
            if line.startswith("signal "):
                os.kill(job, int(line.split()[1]))


def _record(stats: str, argv: list[str], cpu_s: float, wall_s: float) -> None:
    run_id = argv[argv.index("--run-id") + 1] if "--run-id" in argv[:-1] else ""
    with open(stats, "a") as f:  # one short line a write: jobs ending together do not interleave
        f.write(f"{argv[0] if argv else ''}\t{run_id}\t{cpu_s:.3f}\t{wall_s:.3f}\n")


def _run_job(request: dict, fds: list[int], run_argv: RunArgv) -> None:
    """In the job's process: become the caller (stdio, directory, environment, argv), run the verb, exit."""
    code = 1
    try:
        for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGCHLD):
            signal.signal(signum, signal.SIG_DFL)
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
            os.close(fd)
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        os.environ.pop(VARIABLE, None)  # the job runs here; an `xlt` it starts itself runs on its own
        sys.argv = ["xlt", *request["argv"]]
        _fresh_runtime()
        try:
            code = run_argv(request["argv"])
        except SystemExit as exit_:
            code = _exit_code(exit_.code)
    except BaseException:  # noqa: BLE001 (as an uncaught exception ends a fresh process)
        traceback.print_exc()
        code = 1
    finally:
        try:
            atexit._run_exitfuncs()
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)


def _exit_code(code) -> int:
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)
    return 1


def _fresh_runtime() -> None:
    """What a fresh process would have that a fork shares with the server: the thread count
    Snakemake asks for, and numpy's unseeded random state (Python's `random` reseeds itself)."""
    # imported by preload() before any fork; named here, not at the top, so that importing this
    # module (the cli does, for every call) imports no library
    import numpy as np
    import torch  # deferred: imports torch

    threads = os.environ.get(THREAD_VARIABLE)
    torch.set_num_threads(int(threads) if threads and threads.isdigit() and int(threads) > 0 else os.cpu_count())
    np.random.seed()


def preload() -> None:
    """Import what the jobs import, build what transformers builds once a process, and freeze
    the result: the collector then never walks those objects, in the server or in a job (where
    walking them would also copy every page the fork shares)."""
    for name in PRELOAD:
        importlib.import_module(name)
    try:  # the checkpoint key renamings of every architecture (~1,500 regexes), built at a job's first load
        from transformers.conversion_mapping import get_checkpoint_conversion_mapping  # deferred: imports torch

        get_checkpoint_conversion_mapping("bert")
    except ImportError:  # another transformers version: each job builds its own
        pass
    gc.collect()
    gc.freeze()


def serve(
    command: list[str],
    run_argv: RunArgv,
    hf_cache: str | None = None,
    stats: str | None = None,
    beside: int | None = None,
) -> int:
    """Run `command` with a job server for its `xlt` calls, each run by `run_argv` in a fork;
    its exit status. `hf_cache`: the
    Hugging Face cache the workflow's jobs read (the Snakefile points them at its resources/hf
    unless HF_HUB_CACHE says otherwise; the server must import the libraries with the same).
    `stats`: a TSV file to append each forked job's verb, run id, CPU and wall seconds to.
    `beside`: no command; serve the calls of process `beside` (and its children) until it ends."""
    env = dict(os.environ)  # the command's
    if hf_cache:
        for name, value in cache_environment(cache_dir(hf_cache)).items():
            env.setdefault(name, value)
    os.environ.update(env)
    # the server's libraries start no thread pools: a fork only copies the calling thread
    for name in (THREAD_VARIABLE, "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        os.environ.setdefault(name, "1")
    os.environ.update({k: v for k, v in QUIET_ENV.items() if k not in os.environ})  # jobs write log files
    imported_with = dict(os.environ)
    preload()
    # not a TemporaryDirectory: its clean-up at exit would run in every job too (they are forks)
    tmp = tempfile.mkdtemp(prefix="xlt-job-server-")
    set_by_imports = {k: v for k, v in os.environ.items() if k not in imported_with}
    if stats:
        Path(stats).write_text("verb\trun_id\tcpu_s\twall_s\n")
        stats = str(Path(stats).resolve())
    server = Server(str(Path(tmp) / "socket"), run_argv, imported_with, set_by_imports, stats)
    if beside is not None:
        return _serve_beside(server, tmp, beside)
    # a server told to stop stops its command (Snakemake ends its jobs) and then cleans up; the
    # handler is in place before the command starts, so a stop that comes early is not lost
    started, early = [], []
    signal.signal(
        signal.SIGTERM, lambda signum, _frame: started[0].send_signal(signum) if started else early.append(signum)
    )
    try:
        proc = subprocess.Popen(command, env={**env, **server_variables(server.path)})
        started.append(proc)
        for signum in early:
            proc.send_signal(signum)
        try:
            server.serve_until(os.pidfd_open(proc.pid))
        except KeyboardInterrupt:
            pass
        status = proc.wait()
    finally:
        server.close()
        os.rmdir(tmp)
    print(f"xlt job-server: {server.forked} jobs forked, {server.declined} declined", file=sys.stderr)
    return 128 - status if status < 0 else status  # a command killed by a signal: as a shell reports it


def _serve_beside(server: Server, tmp: str, pid: int) -> int:
    """Serve until process `pid` ends or SIGTERM comes; the socket's path, printed on stdout once
    it listens, tells the process that started this server where to send its calls."""
    watched = os.pidfd_open(pid)
    signal.signal(signal.SIGTERM, lambda signum, _frame: sys.exit(0))  # the finally below cleans up
    print(server.path, flush=True)
    try:
        server.serve_until(watched)
    finally:
        server.close()
        os.rmdir(tmp)
        print(f"xlt job-server: {server.forked} jobs forked, {server.declined} declined", file=sys.stderr)
    return 0


def start_beside(log: str, server: list[str]) -> str | None:
    """Start a job server for this process's `xlt` calls (Snakemake's local jobs) and return its
    socket's path for XLT_JOB_SERVER; it ends when this process does. None (the calls then run
    in their own processes) when it does not come up; `log` gets the server's stderr. `server`
    is the command that runs `xlt job-server` (the caller's: this module sits below the cli)."""
    with open(log, "w") as err:
        proc = subprocess.Popen(
            [*server, "--beside", str(os.getpid())],
            stdout=subprocess.PIPE,
            stderr=err,
            text=True,
            start_new_session=True,
        )
    return proc.stdout.readline().strip() or None  # empty: it ended before listening
