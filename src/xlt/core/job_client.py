"""The client side of `xlt job-server` (xlt.jobserver): every `xlt` call first asks the server
that XLT_JOB_SERVER names to run it in a fork of the process that has imported the libraries;
`run_remote` says the job's exit status, or None when the call runs in its own process."""

from __future__ import annotations

import json
import os
import signal
import socket
import struct
import sys

VARIABLE = "XLT_JOB_SERVER"
# The SLURM job a server runs in ("" outside SLURM), set beside VARIABLE. A call made inside another
# SLURM job (a cluster job Snakemake submitted: SLURM exports the submit host's environment to it)
# runs in its own process, on the node and CPUs SLURM gave it; only the submit host's local jobs fork.
SLURM_JOB = "SLURM_JOB_ID"
SERVER_SLURM_JOB = "XLT_JOB_SERVER_SLURM_JOB"
# read at import by torch, transformers, huggingface_hub, datasets, tqdm, matplotlib or Python itself
IMPORT_TIME_PREFIXES = (
    "HF_",
    "HUGGINGFACE_",
    "TRANSFORMERS_",
    "TORCH",
    "PYTORCH_",
    "CUDA_",
    "TOKENIZERS_",
    "DATASETS_",
    "TQDM_",
    "PYTHON",
    "MPL",
    "XDG_CACHE_HOME",
    "NO_COLOR",
    "LD_",
    "KMP_",
    "OPENBLAS_CORETYPE",
)
# verbs that set import-time variables themselves before importing the libraries (prefetch --check)
DECLINED_VERBS = ("prefetch", "job-server")
HEADER = struct.Struct("!I")  # the request's length, before its JSON


def server_variables(path: str) -> dict[str, str]:
    """The variables that send a process's `xlt` calls to the server listening at `path` (in this
    process's SLURM job, if any)."""
    return {VARIABLE: path, SERVER_SLURM_JOB: os.environ.get(SLURM_JOB, "")}


def in_another_slurm_job(env: dict[str, str], server_slurm_job: str) -> bool:
    return env.get(SLURM_JOB, "") != server_slurm_job


def import_environment(env: dict[str, str]) -> dict[str, str]:
    return {k: v for k, v in env.items() if k.startswith(IMPORT_TIME_PREFIXES)}


def run_remote(argv: list[str]) -> int | None:
    """Run `xlt argv` in the server that XLT_JOB_SERVER names: the job's exit status, or None
    when there is no server to reach or it declines the call (the caller then runs it itself)."""
    path = os.environ.get(VARIABLE)
    if not path or path == "0" or (argv and argv[0] in DECLINED_VERBS):  # 0: the Snakefile starts none
        return None
    if in_another_slurm_job(os.environ, os.environ.get(SERVER_SLURM_JOB, "")):  # a cluster job: its own process
        return None
    client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        client.connect(path)
    except OSError as err:
        print(f"xlt: job server {path} unreachable ({err}); running in this process", file=sys.stderr)
        return None
    payload = json.dumps({"argv": argv, "cwd": os.getcwd(), "env": dict(os.environ)}).encode()
    socket.send_fds(client, [HEADER.pack(len(payload)) + payload], [0, 1, 2])

    def forward(signum, _frame):
        client.sendall(f"signal {signum}\n".encode())

    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, forward)
    reply = read_line(client)
    if reply.startswith("declined"):
        return None
    if not reply.startswith("status "):  # the server went away mid-job
        print(f"xlt: job server {path} ended without the job's status", file=sys.stderr)
        return 1
    status = int(reply.split()[1])
    if status < 0:  # the job was killed by a signal: end the same way
        if -status not in (signal.SIGKILL, signal.SIGSTOP):  # their handlers cannot be set (nor replaced)
            signal.signal(-status, signal.SIG_DFL)
        os.kill(os.getpid(), -status)
    return status


def read_line(sock: socket.socket) -> str:
    data = b""
    while not data.endswith(b"\n"):
        try:
            chunk = sock.recv(256)
        except InterruptedError:
            continue
        if not chunk:
            break
        data += chunk
    return data.decode().strip()
