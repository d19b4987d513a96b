"""xlt plan / xlt calibrate: job counts from the workflow's planning code, FLOP arithmetic, profiles."""
import json

import pytest

from xlt.cli import main
from xlt.core import settings
from xlt.core.errors import XltError
from xlt.cost import estimate, profile

UNIT = {"name": "unit", "train_flops": 1.0, "eval_flops": 1.0, "overhead_s": 0.0, "gpu": False, "source": "test"}


def test_every_workflow_job_is_planned_once():
    config = settings.load("config.yaml")
    planned = estimate.plan(config, UNIT)
    expected = sum(len(jobs) for fam in settings.FAMILIES if settings.family(config, fam) is not None
                   for jobs in settings.plan_module(fam).jobs(config).values())
    expected += sum(len(jobs) for jobs in estimate.shared_jobs(config).values())
    assert planned["total"]["jobs"] == expected == len(planned["jobs"])
    assert sum(f["jobs"] for f in planned["families"].values()) == expected


def test_training_flops_follow_6_params_tokens_and_frozen_layers_skip_backward():
    config = settings.load("config.yaml")
    model = config["models"]["demo-mbert"]
    params = 12 * model["hidden_size"] ** 2 * model["layers"]
    base = ["--model", "results/models/demo-mbert", "--train", "results/data/demo-nli/en/train.jsonl",
            "--epochs", "1", "--max-steps", "10", "--batch-size", "4", "--max-length", "16"]
    tokens = 10 * 4 * 16
    full = estimate.job_cost(config, "freeze_depth", "finetune", "a", base + ["--freeze-depth", "-1"], UNIT)
    assert full.train_tokens == tokens and full.seconds == pytest.approx(6 * params * tokens)
    half = estimate.job_cost(config, "freeze_depth", "finetune", "b", base + ["--freeze-depth", str(model["layers"] // 2)], UNIT)
    assert half.seconds == pytest.approx(2 * params * tokens + 4 * params / 2 * tokens)


def test_epochs_bound_steps_when_max_steps_is_larger():
    config = settings.load("config.yaml")
    args = ["--model", "results/models/demo-mbert", "--train", "results/data/demo-nli/en/train.jsonl",
            "--epochs", "2", "--max-steps", "100000", "--batch-size", "100", "--max-length", "10"]
    cost = estimate.job_cost(config, "freeze_depth", "finetune", "a", args, UNIT)
    rows = config["datasets"]["demo-nli"]["sizes"]["train"]
    assert cost.train_tokens == -(-2 * rows // 100) * 100 * 10


def test_paper_plan_on_h100_covers_every_family_with_hub_cache(capsys):
    assert main(["plan", "--config", "config/paper.yaml", "--gpu", "h100", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    config = settings.load("config/paper.yaml")
    enabled = {f for f in settings.FAMILIES if settings.family(config, f) is not None}
    assert enabled <= set(result["families"])
    assert all(result["families"][f]["hours"] > 0 and result["families"][f]["peak_memory_gib"] > 0 for f in enabled)
    assert result["total"]["hub_cache_gib"] > 1  # three hub models, mBERT alone ~0.7 GiB
    assert result["total"]["hours"] == pytest.approx(sum(f["hours"] for f in result["families"].values()))


def test_unknown_gpu_is_a_clear_error(capsys):
    assert main(["plan", "--config", "config.yaml", "--gpu", "tpu9"]) == 2
    assert "not a known accelerator" in capsys.readouterr().err


def test_saved_calibration_is_used_and_checked(tmp_path):
    path = tmp_path / "t.json"
    path.write_text(json.dumps({"name": "x", "train_flops": 1e9}))
    with pytest.raises(XltError, match="rerun `xlt calibrate"):
        profile.load(None, path)
    path.write_text(json.dumps(UNIT))
    assert profile.load(None, path)["name"] == "unit"
    assert profile.load(None, tmp_path / "absent.json")["name"] == "cpu"


def test_calibrate_measures_positive_throughput():
    result = profile.calibrate(seq_lengths=(8, 16), hidden_size=64, layers=1, batch_size=2, budget_s=0.4, device="cpu")
    assert result["train_flops"] > 0 and result["eval_flops"] > 0 and result["overhead_s"] > 0
    assert [r["seq_length"] for r in result["measured"]] == [8, 16]


def test_the_shared_prefix_pass_is_planned_as_one_forward_pass_and_its_store():
    config = settings.load("config.yaml")
    config["freeze_depth"].update(cache_frozen_prefix=True, prefix_states={"shared": True, "storage_dtype": "float16",
                                                                           "max_gib": 64})
    job = settings.plan_module("freeze_depth").jobs(config)["prefix_states"]["demo-mbert"]
    cost = estimate.job_cost(config, "freeze_depth", "prefix_states", "demo-mbert", job.args, UNIT)
    model, rows = config["models"]["demo-mbert"], estimate.rows(config, "demo-nli", "train")
    tokens = rows * 48  # every training example at max_length, an upper bound
    assert cost.train_tokens == 0 and cost.eval_tokens == tokens
    assert cost.seconds == 2 * 12 * model["hidden_size"] ** 2 * model["layers"] * tokens  # all 12 layers, UNIT flops
    assert cost.disk_gib == 13 * tokens * model["hidden_size"] * 2 / 2**30  # depths 0..12 in float16
