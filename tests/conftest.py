"""Shared fixtures: tiny random encoders of each supported architecture (no downloads), a
real single-node SLURM when asked for, and what the workflow tests share: one dry run per
repository config and the one tiny sweep."""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import tempfile
import time
import warnings
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import pytest
import torch
from helpers import worker_groups
from helpers.workflow_runs import (
    ASK_SLURM,
    SLURM_DIR,
    SNAKEMAKE,
    DryRuns,
    local_env,
    slurm_env,
    slurm_snakemake,
    workflow_copy,
)

REPO = Path(__file__).resolve().parents[1]


def pytest_configure(config):
    """The controller of an xdist run (`make test`) names the file its workers write the test
    groups to (helpers/worker_groups.py); the workers inherit it with the environment."""
    if getattr(config.option, "numprocesses", None) and "PYTEST_XDIST_WORKER" not in os.environ:
        os.environ[worker_groups.GROUPS_FILE] = str(Path(tempfile.mkdtemp(prefix="xlt-test-groups-")) / "groups.json")


def pytest_unconfigure(config):
    groups_file = os.environ.get(worker_groups.GROUPS_FILE)
    if groups_file and "PYTEST_XDIST_WORKER" not in os.environ:
        shutil.rmtree(Path(groups_file).parent, ignore_errors=True)


def pytest_collection_modifyitems(config, items):
    """Under pytest-xdist (`make test`): tests that share an expensive fixture go to one worker,
    the longest work first (helpers/worker_groups.py)."""
    if "PYTEST_XDIST_WORKER" in os.environ:
        worker_groups.assign(items, os.environ.get(worker_groups.GROUPS_FILE))


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    return worker_groups.Scheduling(config, log)


@pytest.fixture(autouse=True)
def _environment_restored():
    """Each test leaves os.environ as it found it: verbs run in-process set variables (`xlt
    prefetch` points HF_HUB_CACHE/HF_DATASETS_CACHE at its cache, `--check` turns the hub
    offline) that would otherwise reach every later test's subprocesses, e.g. a workflow run's
    jobs reading a removed temporary cache."""
    saved = dict(os.environ)
    yield
    os.environ.clear()
    os.environ.update(saved)


@pytest.fixture(autouse=True)
def _job_command_line_restored():
    """Each test leaves the job's command line (xlt.core.metrics.JOB_ARGV/JOB_ARGS, which
    `xlt.cli.main` sets for the run manifest) as it found it: an in-process verb's argv would
    otherwise be read as the command line of a later test's metrics file, in whatever order
    the tests run (under xdist a JSON argument of one test reached another's manifest)."""
    from xlt.core import metrics

    saved = metrics.JOB_ARGS, metrics.JOB_ARGV
    yield
    metrics.JOB_ARGS, metrics.JOB_ARGV = saved


def shared_data_dir() -> Path:
    """../shared/data beside the checkout (or $XLT_SHARED_DATA); tests skip when absent."""
    return Path(os.environ.get("XLT_SHARED_DATA", REPO.parent / "shared" / "data"))


def tiny_config(arch: str, layers: int = 4, vocab: int = 120, dropout: float = 0.1):
    from transformers import BertConfig, DistilBertConfig, XLMRobertaConfig

    if arch == "bert":
        return BertConfig(
            vocab_size=vocab,
            hidden_size=32,
            num_hidden_layers=layers,
            num_attention_heads=2,
            intermediate_size=64,
            max_position_embeddings=64,
            hidden_dropout_prob=dropout,
            attention_probs_dropout_prob=dropout,
        )
    if arch == "xlmr":
        return XLMRobertaConfig(
            vocab_size=vocab,
            hidden_size=32,
            num_hidden_layers=layers,
            num_attention_heads=2,
            intermediate_size=64,
            max_position_embeddings=70,
            pad_token_id=1,
            hidden_dropout_prob=dropout,
            attention_probs_dropout_prob=dropout,
        )
    if arch == "distilbert":
        return DistilBertConfig(
            vocab_size=vocab,
            dim=32,
            n_layers=layers,
            n_heads=2,
            hidden_dim=64,
            max_position_embeddings=64,
            dropout=dropout,
            attention_dropout=dropout,
        )
    raise ValueError(arch)


def tiny_classifier(arch: str, layers: int = 4, num_labels: int = 3, seed: int = 0, dropout: float = 0.1):
    from transformers import AutoModelForSequenceClassification

    torch.manual_seed(seed)
    config = tiny_config(arch, layers, dropout=dropout)
    config.num_labels = num_labels
    return AutoModelForSequenceClassification.from_config(config)


@pytest.fixture(params=["bert", "xlmr", "distilbert"])
def arch(request):
    return request.param


with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # pandas 3 says the switch goes in pandas 4
    STRING_MODES = [True, False] if "infer_string" in dir(pd.options.future) else [None]


@pytest.fixture(params=STRING_MODES, ids=lambda mode: f"infer_string={mode}")
def string_mode(request):
    """The test under each of pandas' string modes (pyarrow-backed strings on and off) where the
    installed pandas has the switch; the mode, or None where it has none."""
    if request.param is None:
        yield None
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # pandas 3 says the switch goes in pandas 4
        with pd.option_context("future.infer_string", request.param):
            yield request.param


@pytest.fixture(scope="session")
def demo_model_dir(tmp_path_factory) -> Path:
    """A small demo encoder built by the project's own builder (2 layers, a few MLM steps)."""
    from xlt.data.demo_model import build_demo_model

    out = tmp_path_factory.mktemp("demo-model")
    build_demo_model(
        out, ["mixed"], layers=2, hidden_size=32, heads=2, pretrain_steps=5, corpus_size=200, vocab_size=300
    )
    return out


@pytest.fixture
def one_thread():
    """Run the test on one torch thread, then restore the previous count."""
    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(previous)


@pytest.fixture
def bag_of_words_bert(tmp_path):
    """A saved 2-layer BERT whose layer 0 is a bag of words (tests/helpers/bag_of_words.py)."""
    from helpers.bag_of_words import save_bag_of_words_bert

    return save_bag_of_words_bert(tmp_path)


def _slurm_responds() -> bool:
    try:
        out = subprocess.run(["sinfo", "-h", "-N", "-o", "%T"], capture_output=True, text=True, timeout=10)
    except (FileNotFoundError, subprocess.TimeoutExpired):
        return False
    return out.returncode == 0 and "idle" in out.stdout.split()


@pytest.fixture(scope="session")
def slurm_cluster():
    """A running single-node SLURM for the whole session (tests/slurm/slurm_up.sh); stopped,
    its configuration removed, at the end if this fixture started it."""
    if os.environ.get(ASK_SLURM) != "1":
        pytest.skip(f"real-SLURM test: set {ASK_SLURM}=1 to run it (it apt-installs slurm-wlm and munge as root)")
    if os.geteuid() != 0:
        pytest.skip("the SLURM test needs root (it writes /etc/slurm and starts daemons)")
    if shutil.which("slurmctld") is None and shutil.which("apt-get") is None:
        pytest.skip("slurm-wlm is not installed and apt-get is unavailable")
    # one SLURM test session at a time on a machine: the cluster and /etc/slurm are global
    lock = open("/tmp/xlt-slurm.lock", "w")
    fcntl.flock(lock, fcntl.LOCK_EX)
    already_up = _slurm_responds()
    started = time.monotonic()
    up = subprocess.run([str(SLURM_DIR / "slurm_up.sh")], capture_output=True, text=True)
    if up.returncode != 0:
        lock.close()
        if shutil.which("slurmctld") is None:
            pytest.skip(f"could not install slurm-wlm/munge: {up.stderr.strip()[-500:]}")
        pytest.fail(f"SLURM did not come up:\n{up.stderr}")
    print(f"SLURM bring-up: {time.monotonic() - started:.1f} s; {up.stderr.strip()}")
    try:
        yield
    finally:
        if not already_up:
            subprocess.run([str(SLURM_DIR / "slurm_down.sh")], check=False)
        lock.close()


@pytest.fixture(scope="session")
def dry_runs(tmp_path_factory) -> DryRuns:
    """The session's dry runs of the repository's configs, each run once and shared by every
    test that reads one (helpers.workflow_runs.DryRuns)."""
    return DryRuns(workflow_copy(tmp_path_factory.mktemp("dry-runs")))


@dataclass
class TinySweep:
    """The tiny sweep (config/tiny.yaml) one test session ran: its workflow copy, the Snakemake
    command (run again the same way, it must find nothing to do), and what the run printed."""

    work: Path
    command: list[str]
    env: dict[str, str]
    log: str
    seconds: float
    through_slurm: bool

    def rerun(self) -> subprocess.CompletedProcess:
        return subprocess.run(self.command, cwd=self.work, env=self.env, capture_output=True, text=True)


# a --config override must reach the report too (the onsuccess hook runs a second snakemake)
TINY_SWEEP_ARGS = ("--configfile", "config/tiny.yaml", "--config", "report={title: xlt tiny via --config}")


class StartedSweep:
    """The tiny sweep's Snakemake, started and not yet waited for; `finish` waits for it."""

    def __init__(self, work: Path, command: list[str], env: dict[str, str], through_slurm: bool):
        self.work, self.command, self.env, self.through_slurm = work, command, env, through_slurm
        self._log = work.parent / "tiny-sweep.log"  # outside the workflow copy the tests read
        self._started = time.monotonic()
        with open(self._log, "w") as log:
            self._proc = subprocess.Popen(command, cwd=work, env=env, stdout=log, stderr=subprocess.STDOUT, text=True)
        self._done: TinySweep | None = None

    def finish(self) -> TinySweep:
        if self._done is None:
            try:
                status = self._proc.wait(timeout=max(1, 1200 - (time.monotonic() - self._started)))
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()
                status = "killed after 1200 s"
            seconds = time.monotonic() - self._started
            log = self._log.read_text()
            if status != 0:
                where = "SLURM" if self.through_slurm else "local"
                pytest.fail(f"the tiny sweep failed ({where}, exit {status}):\n{log[-6000:]}")
            self._done = TinySweep(self.work, self.command, self.env, log, seconds, self.through_slurm)
        return self._done

    def stop(self) -> None:
        if self._proc.poll() is None:
            self._proc.terminate()
            self._proc.wait()


@pytest.fixture(scope="session")
def tiny_sweep_started(request, tmp_path_factory) -> StartedSweep:
    """config/tiny.yaml end to end, once per session: through sbatch when the real-SLURM tests
    are asked for (test_slurm checks how it went through the queue), locally otherwise; the
    workflow tests check what it wrote either way. The sweep takes minutes: running it once
    instead of once per path keeps the suite within its time. Started here and waited for by
    `tiny_sweep`, so that tests which mostly wait on SLURM themselves (its preemption and GPU
    shard tests) run while the sweep's jobs go through the same queue."""
    try:
        request.getfixturevalue("slurm_cluster")
        through_slurm = True
    except pytest.skip.Exception:
        through_slurm = False
    work = workflow_copy(tmp_path_factory.mktemp("tiny-sweep"))
    if through_slurm:
        # exactly what the profile's header tells users to type
        command, env = slurm_snakemake("--profile", "profiles/cluster", *TINY_SWEEP_ARGS), slurm_env()
    else:
        # --cores 4 on the 2-core test machine: tiny.yaml gives the 8 freeze_depth jobs 2 threads and
        # they come last, one at a time with --cores 2 (or 3), one core idle; the jobs' threads stay as
        # configured. Plain `snakemake`, as a user types it: its jobs fork from the job server the
        # Snakefile starts beside it (start_job_server in workflow/rules/common.smk)
        command, env = [*SNAKEMAKE, "--cores", "4", *TINY_SWEEP_ARGS], local_env()
    started = StartedSweep(work, command, env, through_slurm)
    yield started
    started.stop()  # a session that ends (or fails) before waiting for it


@pytest.fixture(scope="session")
def tiny_sweep(tiny_sweep_started) -> TinySweep:
    """The tiny sweep (tiny_sweep_started), finished: it failed the test if the run failed."""
    return tiny_sweep_started.finish()
