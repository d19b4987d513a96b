"""Checkpoint choice for MonoX students (monox.checkpoint_selection), through the checkpoint-choice
code freeze_depth uses (xlt.evaluate.checkpoint_choice): English-dev, last and target-dev (oracle)
test accuracies of every student, with per-example outputs and intervals."""

import copy
import json

import pytest
from test_monox import ARGS, make_records, split, tiny_classifier, tokenizers  # noqa: F401 (fixtures)

from xlt.core import settings
from xlt.core.io import read_json, write_jsonl
from xlt.core.metrics import examples_path, read_examples
from xlt.evaluate.checkpoint_choice import TRACKED
from xlt.families.monox import plan


def test_plan_tracks_every_student_and_no_teacher_only_when_asked():
    config = copy.deepcopy(settings.load("config.yaml"))
    assert config["monox"]["checkpoint_selection"] is False  # the demo leaves it off (schema default)
    assert plan.CHECKPOINT_TABLE not in plan.targets(config) and plan.checkpoint_files(config) == []
    assert plan.student_outputs(config) == {}
    assert not any("--track-test" in map(str, job.args) for job in plan.jobs(config)["distill"].values())

    config["monox"]["checkpoint_selection"] = True
    planned = plan.jobs(config)
    langs = config["monox"]["tasks"][0]["eval"]["langs"]
    for job in planned["distill"].values():
        args = [str(a) for a in job.args]
        tracked = [args[i + 1].split("=")[0] for i, a in enumerate(args) if a == "--track-test"]
        dev = [args[i + 1] for i, a in enumerate(args) if a == "--track-dev"]
        assert tracked == langs and dev == ["en=results/data/demo-sentiment/en/dev.jsonl"]  # dev in English only
    assert not any("--track-test" in map(str, job.args) for job in planned["train_teacher"].values())
    assert plan.CHECKPOINT_TABLE in plan.targets(config)
    assert plan.checkpoint_files(config) == [plan.CHECKPOINTS.format(run_id=r) for r in planned["distill"]]
    assert plan.student_outputs(config) == {"checkpoints": plan.CHECKPOINTS}


def test_self_training_tracks_the_round_that_makes_the_final_model(split, tokenizers, monkeypatch):  # noqa: F811
    import xlt.families.monox.training as monox
    from xlt.families.monox.training import run_student

    real_fit, tracked = monox.fit, []

    def spying_fit(*args, **kwargs):
        tracked.append(kwargs.get("track"))
        return real_fit(*args, **kwargs)

    monkeypatch.setattr(monox, "fit", spying_fit)
    tok = tokenizers[1]
    sets = ({"xx": make_records(6, seed=4)}, {"xx": make_records(5, seed=8)})
    outcome = run_student(
        "self_train", lambda: tiny_classifier(tok, 5), tok, split, "all", 3, ARGS, rounds=2, track=sets
    )
    assert tracked == [None, None, sets]  # rounds 0 and 1 untracked, round 2 tracked
    entries = [h for h in outcome.result.history if TRACKED in h]
    assert entries and all(
        set(h[TRACKED]["xx"]) == {"test_prediction", "test_accuracy", "dev_accuracy"} for h in entries
    )


@pytest.mark.usefixtures("one_thread")
def test_distill_writes_the_choices_beside_its_metrics(tmp_path, demo_model_dir):
    from xlt.cli import main
    from xlt.data import demo
    from xlt.report.aggregate import aggregate

    write_jsonl(tmp_path / "train.jsonl", demo.generate("sentiment", "en", "train", 96, 1))
    write_jsonl(tmp_path / "dev.jsonl", demo.generate("sentiment", "en", "dev", 16, 1))
    # unbalanced (3:1), so that even a student that predicts one class scores 0.75 or 0.25, not 0.5 either way
    pool = demo.generate("sentiment", "qaa", "test", 80, 2)
    test = [r for r in pool if r["label"] == 1][:30] + [r for r in pool if r["label"] == 0][:10]
    assert len(test) == 40
    write_jsonl(tmp_path / "xx-test.jsonl", test)
    write_jsonl(tmp_path / "xx-dev.jsonl", demo.generate("sentiment", "qaa", "dev", 16, 3))
    assert (
        main(
            [
                "monox-split",
                "--train",
                str(tmp_path / "train.jsonl"),
                "--labelled-fraction",
                "0.5",
                "--dev",
                str(tmp_path / "dev.jsonl"),
                "--seed",
                "1",
                "--out",
                str(tmp_path / "split"),
            ]
        )
        == 0
    )
    flags = [
        "distill",
        "--mode",
        "finetune",
        "--model",
        str(demo_model_dir),
        "--head",
        "pooler",
        "--split",
        str(tmp_path / "split"),
        "--num-labels",
        "2",
        "--eval-data",
        str(tmp_path / "xx-test.jsonl"),
        "--eval-langs",
        "xx",
        "--seed",
        "1",
        "--max-steps",
        "12",
        "--eval-every",
        "3",
        "--batch-size",
        "8",
        "--lr",
        "3e-3",
        "--max-length",
        "32",
        "--device",
        "cpu",
        "--axes",
        json.dumps({"model": "student", "mode": "finetune", "seed": 1}),
    ]
    out = tmp_path / "s" / "metrics.json"
    assert (
        main(
            [
                *flags,
                "--track-test",
                f"xx={tmp_path / 'xx-test.jsonl'}",
                "--track-dev",
                f"xx={tmp_path / 'xx-dev.jsonl'}",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    choices = read_json(tmp_path / "s" / "checkpoints.json")
    assert choices["meta"]["family"] == "monox" and choices["meta"]["axes"]["mode"] == "finetune"
    records = {r["checkpoint"]: r for r in choices["metrics"]}
    assert set(records) == {"en_dev", "last", "target_dev"} and records["last"]["step"] == 12
    metrics = read_json(out)
    assert records["en_dev"]["step"] == metrics["meta"]["best_step"]
    # the English-dev choice is the model the student keeps: its test accuracy is the student's
    test = next(r for r in metrics["metrics"] if r["metric"] == "accuracy" and r["lang"] == "xx")
    assert records["en_dev"]["value"] == pytest.approx(test["value"])
    assert len(read_examples(examples_path(tmp_path / "s" / "checkpoints.json"))) == 3
    assert not any("test_prediction" in s for h in metrics["meta"]["history"] for s in h.get(TRACKED, {}).values())
    table = aggregate([tmp_path / "s" / "checkpoints.json"], resamples=200)
    assert sorted(table.checkpoint) == ["en_dev", "last", "target_dev"]
    assert ((table.ci_low <= table.value) & (table.value <= table.ci_high)).all()

    # without tracking: no choices file, and the same student
    assert main([*flags, "--out", str(tmp_path / "plain" / "metrics.json")]) == 0
    assert not (tmp_path / "plain" / "checkpoints.json").exists()
    plain = next(
        r
        for r in read_json(tmp_path / "plain" / "metrics.json")["metrics"]
        if r["metric"] == "accuracy" and r["lang"] == "xx"
    )
    assert plain["value"] == test["value"]
