"""The plan's disk beyond models (the families' `output_bytes` cost hooks, xlt.cost.data_size): the
data-sized files a job writes, and prepared data at their own bytes a row."""

from __future__ import annotations

import json

import pytest

from xlt.core import settings
from xlt.core.job_spec import JobSpec
from xlt.cost import data_size, profile, sweep
from xlt.cost.work import costs
from xlt.families.freeze_depth import plan as freeze_depth_plan
from xlt.families.monox import costing as monox_costing


def paper_jobs() -> dict:
    planned = sweep.plan(settings.load("config/paper.yaml"), profile.load("h100"))
    return {(j["rule"], j["run_id"]): j for j in planned["jobs"]}


def test_each_data_sized_output_is_counted_from_the_rows_it_covers():
    monox = costs("monox").output_bytes
    assert monox("monox_split", JobSpec("monox-split"), 1000, 50, 200.0, 768) == 1050 * 200.0
    # a logits row: float32 per label, a 40-character id and a 10-character part name, 4 bytes a character
    labels = [("num_labels", 3)]
    assert monox("train_teacher", JobSpec("train-teacher", labels), 1000, 0, 200.0, 1024) == 1000 * (12 + 200)
    assert monox("distill", JobSpec("distill", labels), 1000, 0, 200.0, 1024) == 0
    dual = costs("dual").output_bytes
    distill = JobSpec("train-dual", [("objective", "mse_distill")])
    assert dual("train_dual", distill, 1000, 0, 200.0, 768) == 1000 * 768 * 2  # float16 vectors
    additive = JobSpec("train-dual", [("objective", "additive_margin")])
    assert dual("train_dual", additive, 1000, 0, 200.0, 768) == 0
    # a family without the hook writes nothing data-sized (the default)
    assert not hasattr(freeze_depth_plan, "output_bytes")
    assert costs("freeze_depth").output_bytes("finetune", JobSpec("finetune"), 1000, 50, 200.0, 768) == 0


def test_the_paper_plan_counts_monox_splits_and_logits_and_the_distilled_students_vectors():
    jobs = paper_jobs()
    xnli_train, xnli_dev = 392702, 2490
    split = jobs[("monox_split", "xnli/seed1")]
    assert split["disk_gib"] * 2**30 == pytest.approx((xnli_train + xnli_dev) * data_size.BYTES_PER_ROW)
    teacher = jobs[("train_teacher", "roberta-large-xnli-nall-seed1")]
    assert teacher["disk_gib"] * 2**30 == pytest.approx(xnli_train * (monox_costing.LOGIT_ROW_BYTES + 4 * 3))
    distilled = jobs[("train_dual", "mbert-distill-mean-bs64-depthnone-seed1")]
    talks = 12 * 200000  # twelve TED talks languages, each cut at the config's max_rows
    assert distilled["disk_gib"] * 2**30 == pytest.approx(talks * 768 * 2)


def test_the_ted_talks_are_planned_at_the_configs_max_rows():
    """Every language pair of config/paper.yaml has more than 200,000 rows (en-de, the smallest,
    289k), so each trains on max_rows; the plan once took DEFAULT_ROWS (2,000) for them."""
    config = settings.load("config/paper.yaml")
    assert data_size.rows(config, "talks", "train") == 200000
    margin = paper_jobs()[("train_dual", "mbert-margin0.3-scale10-cls-bs256-depthnone-seed1")]
    assert margin["train_tokens"] > 2.4e6 * 2 * 20  # one epoch of 12 x 200,000 pairs, two sentences each


def test_a_sentence_draw_is_planned_at_its_sizes():
    """adapt's Dutch Wikipedia is 80,000 / 10,000 / 10,000 drawn sentences (seed 003), not a slice
    of the hub's split; without its sizes the plan would take DEFAULT_ROWS (2,000)."""
    config = settings.load("config/paper.yaml")
    assert [data_size.rows(config, "nl-wiki", split) for split in ("train", "dev", "test")] == [80000, 10000, 10000]


def test_prepared_data_are_planned_at_their_own_bytes_a_row(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert data_size.bytes_per_row("xnli") == data_size.BYTES_PER_ROW  # not prepared: assumed
    root = tmp_path / "results" / "data" / "xnli"
    (root / "en").mkdir(parents=True)
    (root / "de").mkdir()
    (root / "en" / "train.jsonl").write_text("x" * 999 + "\n")  # 1,000 bytes, 4 rows by the counts
    (root / "de" / "test.jsonl").write_text("y" * 199 + "\n")  # 200 bytes, 1 row
    (root / "info.json").write_text(json.dumps({"counts": {"en/train": 4, "de/test": 1, "fr/test": 9}}))
    assert data_size.bytes_per_row("xnli") == pytest.approx(1200 / 5)  # fr/test has no file: not counted
