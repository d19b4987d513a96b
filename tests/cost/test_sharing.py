"""GPU sharing (xlt.cost.sharing, config gpu_sharing): the slots a job takes, what the plan charges
it with several jobs on one GPU, and how the workflow passes the slots to Snakemake and SLURM."""

from __future__ import annotations

import copy
import re
import subprocess
import sys
import textwrap

import pytest
from helpers.rule_files import rule_files

from xlt.core import settings
from xlt.core.cluster import gpu_job_resources
from xlt.core.errors import XltError
from xlt.cost import estimate, profile, sharing, sweep
from xlt.cost.profile import H100_MEASURED, MBERT_TOKEN_FLOPS

FOUR = {"slots_per_gpu": 4, "memory_gib": 40, "slurm": "shard"}


def test_config_keys_are_validated_with_defaults():
    config = settings.load("config.yaml")
    assert config["gpu_sharing"] == {"slots_per_gpu": 1, "memory_gib": 40, "slurm": "shard"}
    assert config["keep_models"] is False
    paper = settings.load("config/paper.yaml")
    assert paper["gpu_sharing"]["slots_per_gpu"] == 4
    for bad in (
        {"gpu_sharing": {"slots_per_gpu": 0}},
        {"gpu_sharing": {"slurm": "mps"}},
        {"gpu_sharing": {"per_gpu": 2}},
        {"keep_models": "yes"},
    ):
        broken = {**copy.deepcopy(paper), **bad}
        with pytest.raises(XltError, match="gpu_sharing|keep_models"):
            settings.validate(broken)


def test_a_job_takes_slots_by_its_step_and_its_memory():
    batch32 = MBERT_TOKEN_FLOPS * 32 * 128
    assert sharing.job_slots(batch32, 4.0, FOUR) == 1  # a quarter of the saturating step
    assert sharing.job_slots(MBERT_TOKEN_FLOPS * 128 * 128, 4.0, FOUR) == 4  # fills the GPU alone
    assert sharing.job_slots(MBERT_TOKEN_FLOPS * 64 * 128, 4.0, FOUR) == 2
    assert sharing.job_slots(batch32, 25.0, FOUR) == 3  # 25 of 40 GiB: three quarters of the memory
    assert sharing.job_slots(batch32 * 100, 100.0, FOUR) == 4  # never more than the GPU holds
    assert sharing.job_slots(batch32, 4.0, {**FOUR, "slots_per_gpu": 1}) == 1


def test_the_saturating_rate_is_the_measured_batch_128_throughput():
    rate = sharing.saturated_rate(profile.load("h100"))
    assert rate / MBERT_TOKEN_FLOPS == pytest.approx(H100_MEASURED["tokens_per_s"][1], rel=1e-3)


def test_occupancy_is_bounded_by_the_saturating_rate_and_the_share():
    h100 = profile.load("h100")
    saturating = sharing.saturated_rate(h100)
    batch32_rate = MBERT_TOKEN_FLOPS * H100_MEASURED["tokens_per_s"][0]
    # a job at the H100's batch-32 rate: 0.35 of the batch-128 rate, more than 1 / speed-up(4) = 0.28
    got = sharing.gpu_seconds(100.0, batch32_rate * 100, 1, 4, h100)
    assert got == pytest.approx(100 * batch32_rate / saturating)
    assert 34 < got < 36
    # idle-bound: 1 / the measured speed-up of 4 processes (3.56), not the ideal 1/4
    assert sharing.gpu_seconds(100.0, 1e10, 1, 4, h100) == pytest.approx(100 / sharing.speedup(4))
    assert sharing.gpu_seconds(100.0, 1e10, 4, 4, h100) == 100.0  # alone on the GPU
    assert sharing.gpu_seconds(100.0, 1e10, 1, 1, h100) == 100.0  # no sharing configured
    assert sharing.gpu_seconds(100.0, saturating * 100, 1, 4, h100) == 100.0  # never more than its own time
    assert sharing.gpu_seconds(100.0, 1e10, 1, 4, profile.load("cpu")) == 100.0  # CPUs are not shared


def test_a_jobs_phases_are_charged_each_at_its_own_rate():
    """A job of idle-bound training steps and saturating evaluations (adapt: batch-8 MLM steps, then
    perplexity in batches of 128): each phase by its own rate, not the job's average, which the
    evaluations' FLOPs would lift to the cap and so charge the idle steps in full."""
    h100 = profile.load("h100")
    # an evaluation batch of 128 has no optimiser step: its FLOPs run faster than the training step's
    saturating = sharing.saturated_rate(h100)
    evaluation_rate = 4 * saturating
    job = estimate.JobCost(
        "adapt",
        "adapt_mlm",
        "run",
        seconds=h100["overhead_s"] + 800.0 + 200.0,
        peak_memory_gib=3.0,
        disk_gib=0.0,
        train_tokens=1,
        eval_tokens=1,
        flops=1e10 + 200.0 * evaluation_rate,
        step_flops=1.0,
        train_seconds=800.0,
        train_flops=1e10,
        loads_model=True,
    )
    sharing.apply([job], {"gpu_sharing": FOUR}, h100)
    assert job.slots == 1
    # start-up and idle steps: 1 / the speed-up of 4 each; the saturating evaluations: all of their 200 s
    assert job.gpu_seconds == pytest.approx((h100["overhead_s"] + 800.0) / sharing.speedup(4) + 200.0)
    average = sharing.gpu_seconds(job.seconds, job.flops, 1, 4, h100)
    assert average > job.gpu_seconds + 300  # one average rate charges the idle steps near in full


@pytest.mark.slow
def test_the_paper_plan_reports_gpu_hours_with_sharing_beside_the_jobs_hours():
    config = settings.load("config/paper.yaml")
    h100 = profile.load("h100")
    shared = sweep.plan(config, h100)
    alone = sweep.plan({**config, "gpu_sharing": {**config["gpu_sharing"], "slots_per_gpu": 1}}, h100)
    assert shared["total"]["hours"] == pytest.approx(alone["total"]["hours"])  # the jobs' own time is the same
    model_hours = sum(j["seconds"] for j in alone["jobs"] if j["loads_model"]) / 3600
    assert alone["total"]["gpu_hours"] == pytest.approx(model_hours)  # unshared: every model job's own time
    assert shared["total"]["gpu_hours"] < 0.5 * shared["total"]["hours"]
    for family, f in shared["families"].items():
        assert f["gpu_hours"] <= f["hours"] + 1e-9, family
    slots = {(j["rule"], j["slots"]) for j in shared["jobs"]}
    assert ("finetune", 1) in slots and ("train_dual", 4) in slots  # batch 32 x 128 vs 256 x 64
    table = sweep.format_table(shared)
    assert "job-h" in table and "GPU-h" in table and "4 slot(s) a GPU" in table


def test_rules_slots_are_the_plans():
    config = settings.load("config/paper.yaml")
    planned = {
        (j["family"], j["rule"], j["run_id"]): j["slots"] for j in sweep.plan(config, profile.load("h100"))["jobs"]
    }
    for family, rule in (("freeze_depth", "finetune"), ("monox", "train_teacher"), ("dual", "mine")):
        got = sharing.rule_slots(config, family, rule)
        assert got and all(planned[(family, rule, key)] == n for key, n in got.items()), rule


def test_slurm_gets_shards_or_a_whole_gpu(monkeypatch):
    config = settings.load("config/paper.yaml")
    monkeypatch.delenv("XLT_SLURM_GPU_MODEL", raising=False)
    shard = gpu_job_resources(config, "monox", 2)
    assert shard["gres"] == "shard:2" and "gpu" not in shard and shard["gpu_slots"] == 2
    whole = gpu_job_resources({**config, "gpu_sharing": {**config["gpu_sharing"], "slurm": "gpu"}}, "monox", 2)
    assert whole["gpu"] == 1 and "gres" not in whole and whole["gpu_slots"] == 2
    alone = gpu_job_resources({**config, "gpu_sharing": {**config["gpu_sharing"], "slots_per_gpu": 1}}, "monox", 1)
    assert alone["gpu"] == 1 and "gres" not in alone
    monkeypatch.setenv("XLT_SLURM_GPU_MODEL", "a100")
    with pytest.raises(XltError, match="XLT_SLURM_GPU_MODEL"):
        gpu_job_resources(config, "monox", 2)


def test_the_slurm_executor_turns_the_shards_into_sbatch_gres():
    from snakemake_executor_plugin_slurm.utils import set_gres_string

    class Job:
        resources = type("R", (dict,), {"__getattr__": dict.__getitem__})(
            gpu_job_resources(settings.load("config/paper.yaml"), "freeze_depth", 1)
        )

    assert set_gres_string(Job()).strip() == "--gres=shard:1"


@pytest.mark.slow
def test_snakemake_runs_as_many_jobs_on_a_gpu_as_its_slots_allow(tmp_path):
    """What the workflow relies on: under `--resources gpu_slots=N` jobs of one slot run N at a
    time, and a job of N slots runs alone."""
    (tmp_path / "Snakefile").write_text(
        textwrap.dedent("""\
        import time
        SLOTS = {"a": 1, "b": 1, "c": 1, "d": 1, "big": 2}
        rule all:
            input: expand("{name}.txt", name=SLOTS)
        rule job:
            output: "{name}.txt"
            resources: gpu_slots=lambda wildcards: SLOTS[wildcards.name]
            run:
                start = time.time()
                time.sleep(1.5)
                open(output[0], "w").write(f"{start} {time.time()}")
        """)
    )
    subprocess.run(
        [sys.executable, "-m", "snakemake", "--cores", "4", "--resources", "gpu_slots=2", "-q"],
        cwd=tmp_path,
        check=True,
        capture_output=True,
        timeout=300,
    )
    spans = {p.stem: tuple(map(float, p.read_text().split())) for p in tmp_path.glob("*.txt")}
    slots = {"a": 1, "b": 1, "c": 1, "d": 1, "big": 2}

    def load_at(t):
        return sum(slots[n] for n, (s, e) in spans.items() if s <= t < e)

    assert max(load_at(s) for s, _ in spans.values()) == 2
    assert max(sum(1 for s, e in spans.values() if s <= t < e) for t, _ in spans.values()) == 2
    big_start, big_end = spans["big"]
    assert all(e <= big_start or s >= big_end for n, (s, e) in spans.items() if n != "big")


@pytest.mark.slow
def test_jobs_that_load_no_model_occupy_no_gpu():
    """Their rules ask for no GPU (no job_resources): data preparation and splits are CPU work, on
    a GPU profile 0 GPU-seconds; every job that loads a model has a rule that asks for one."""
    config = settings.load("config/paper.yaml")
    planned = sweep.plan(config, profile.load("h100"))
    light = [j for j in planned["jobs"] if j["rule"] in ("prepare_data", "monox_split", "make_bucc", "adapt_eval_set")]
    assert light and all(j["gpu_seconds"] == 0 and j["slots"] == 1 and j["seconds"] > 0 for j in light)
    assert all(not j["loads_model"] for j in light)
    smk = "\n".join(path.read_text() for path in rule_files())
    asking = set(re.findall(r'job_resources\("\w+", "(\w+)"\)', smk))
    assert {j["rule"] for j in planned["jobs"] if j["loads_model"]} <= asking
    assert not {j["rule"] for j in planned["jobs"] if not j["loads_model"]} & asking
    on_cpu = sweep.plan(config, profile.load("cpu"))  # a CPU profile counts every job's own seconds
    assert all(j["gpu_seconds"] == j["seconds"] for j in on_cpu["jobs"])


@pytest.mark.slow
def test_a_model_job_without_flops_still_shares_the_gpu():
    """BUCC mining loads the trained encoder (its pools are not priced as FLOPs): its start-up
    takes a slot like any model job's, 1 / the measured speed-up of four of its seconds with four slots a GPU."""
    planned = sweep.plan(settings.load("config/paper.yaml"), profile.load("h100"))
    mine = [j for j in planned["jobs"] if j["rule"] == "mine"]
    assert mine and all(j["loads_model"] and j["slots"] == 1 for j in mine)
    assert all(j["gpu_seconds"] == pytest.approx(j["seconds"] / sharing.speedup(4)) for j in mine)


def test_compiled_training_shares_up_to_the_compiled_saturating_rate():
    """Jobs that train compiled together reach at most the compiled batch-128 rate (451,301
    tokens/s, measured), not the eager one."""
    h100 = profile.load("h100")
    compiled = sharing.saturated_rate(h100, compiled=True)
    assert compiled / MBERT_TOKEN_FLOPS == pytest.approx(451301, rel=1e-3)
    heavy = sharing.saturated_rate(h100) * 100 * 0.7  # 100 s at 0.7 of the eager rate
    eager_charge = sharing.gpu_seconds(100.0, heavy, 1, 4, h100)
    compiled_charge = sharing.gpu_seconds(100.0, heavy, 1, 4, h100, compiled=True)
    assert eager_charge == pytest.approx(70.0)
    assert compiled_charge == pytest.approx(heavy / compiled)
    assert compiled_charge < eager_charge


def test_the_plan_range_puts_in_the_fastest_hosts_overheads():
    """Host-bound steps vary with the host: the range's low end plans the demo sweep with the H100
    host's overheads (lower than the H200 fit's), a CPU profile has no range."""
    config = settings.load("config.yaml")
    h100 = profile.load("h100")
    central = sweep.plan(config, h100)["total"]
    low = sweep.host_range(config, h100)
    assert 0 < low["gpu_hours"] < central["gpu_hours"] and low["hours"] < central["hours"]
    assert low == {k: sweep.plan(config, {**h100, **h100["host_low"]})["total"][k] for k in ("hours", "gpu_hours")}
    assert sweep.host_range(config, profile.load("cpu")) is None
