"""Checkpoint choice (freeze_depth.checkpoint_selection): English-dev, last and target-dev
(oracle) test accuracies read off the run's evaluation history, with per-example outputs."""

import copy

import pytest
import torch

from xlt.cli import main
from xlt.core import settings
from xlt.core.io import read_json, write_jsonl
from xlt.core.metrics import examples_path, read_examples
from xlt.evaluate.checkpoint_choice import TRACKED, choose, selection_records, without_predictions
from xlt.families.freeze_depth import plan

GOLD = [0, 1, 2, 0]


def entry(step, test_pred, dev_acc=None):
    scores = {"test_prediction": test_pred, "test_accuracy": sum(p == g for p, g in zip(test_pred, GOLD)) / 4}
    if dev_acc is not None:
        scores["dev_accuracy"] = dev_acc
    return {"step": step, "score": 0.0, TRACKED: {"de": scores}}


HISTORY = [entry(20, [0, 0, 0, 0], 0.5), entry(40, [0, 1, 2, 1], 0.9), entry(60, [0, 1, 0, 0], 0.9)]


def test_the_three_choices():
    chosen = choose(HISTORY, best_step=20, lang="de")
    assert {k: v["step"] for k, v in chosen.items()} == {"en_dev": 20, "last": 60, "target_dev": 40}  # tie: earliest
    records, examples = selection_records(HISTORY, 20, {"de": GOLD})
    by_choice = {r["checkpoint"]: r for r in records}
    assert {k: r["value"] for k, r in by_choice.items()} == {"en_dev": 0.5, "last": 0.75, "target_dev": 0.75}
    assert [(e["checkpoint"], e["prediction"]) for e in examples] == [
        ("en_dev", [0, 0, 0, 0]),
        ("last", [0, 1, 0, 0]),
        ("target_dev", [0, 1, 2, 1]),
    ]
    assert all(e["gold"] == GOLD and e["lang"] == "de" for e in examples)


def test_no_dev_set_no_oracle_and_predictions_stay_out_of_train_json():
    history = [entry(20, [0, 0, 0, 0]), entry(40, [0, 1, 2, 0])]
    assert set(choose(history, 40, "de")) == {"en_dev", "last"}
    assert choose(history, 40, "fr") == {}
    stripped = without_predictions(history)
    assert "test_prediction" not in stripped[0][TRACKED]["de"] and stripped[0][TRACKED]["de"]["test_accuracy"] == 0.5
    assert "test_prediction" in history[0][TRACKED]["de"]  # the original is left alone


def test_plan_tracks_every_eval_language_and_dev_where_the_dataset_has_it():
    config = copy.deepcopy(settings.load("config.yaml"))
    config["freeze_depth"]["checkpoint_selection"] = True
    job = next(iter(plan.jobs(config)["finetune"].values()))
    args = [str(a) for a in job.args]
    tracked = [args[i + 1].split("=")[0] for i, a in enumerate(args) if a == "--track-test"]
    dev = [args[i + 1].split("=")[0] for i, a in enumerate(args) if a == "--track-dev"]
    assert tracked == config["freeze_depth"]["eval"]["langs"] and dev == ["en"]  # demo-nli: dev in English only
    assert plan.CHECKPOINT_TABLE in plan.targets(config)
    config["freeze_depth"]["checkpoint_selection"] = False
    assert plan.CHECKPOINT_TABLE not in plan.targets(config)
    assert "--track-test" not in [str(a) for a in next(iter(plan.jobs(config)["finetune"].values())).args]


@pytest.mark.usefixtures("one_thread")
def test_the_english_dev_choice_is_the_model_the_evaluate_job_scores(demo_model_dir, tmp_path):
    from xlt.data import demo

    write_jsonl(tmp_path / "train.jsonl", demo.generate("nli", "en", "train", 48, 1))
    write_jsonl(tmp_path / "dev.jsonl", demo.generate("nli", "en", "dev", 16, 1))
    write_jsonl(tmp_path / "qaa.jsonl", demo.generate("nli", "qaa", "test", 30, 2))
    out = tmp_path / "run"
    torch.manual_seed(0)
    assert (
        main(
            [
                "finetune",
                "--model",
                str(demo_model_dir),
                "--train",
                str(tmp_path / "train.jsonl"),
                "--dev",
                str(tmp_path / "dev.jsonl"),
                "--num-labels",
                "3",
                "--out",
                str(out),
                "--max-steps",
                "6",
                "--eval-every",
                "2",
                "--batch-size",
                "8",
                "--lr",
                "3e-3",
                "--max-length",
                "32",
                "--device",
                "cpu",
                "--head",
                "pooler",
                "--track-test",
                f"qaa={tmp_path / 'qaa.jsonl'}",
                "--track-dev",
                f"qaa={tmp_path / 'qaa.jsonl'}",
            ]
        )
        == 0
    )
    choices = read_json(out / "checkpoints.json")
    records = {r["checkpoint"]: r for r in choices["metrics"]}
    assert set(records) == {"en_dev", "last", "target_dev"} and records["last"]["step"] == 6
    assert records["en_dev"]["step"] == read_json(out / "train.json")["meta"]["best_step"]
    # the oracle picks on the set it is scored on here, so it can only be at least as good
    assert records["target_dev"]["value"] >= max(records["en_dev"]["value"], records["last"]["value"])
    assert len(read_examples(examples_path(out / "checkpoints.json"))) == 3
    assert (
        main(
            [
                "evaluate",
                "--model",
                str(out / "model"),
                "--data",
                str(tmp_path / "qaa.jsonl"),
                "--langs",
                "qaa",
                "--out",
                str(tmp_path / "eval.json"),
                "--max-length",
                "32",
                "--device",
                "cpu",
            ]
        )
        == 0
    )
    evaluated = next(r for r in read_json(tmp_path / "eval.json")["metrics"] if r["lang"] == "qaa")
    assert evaluated["value"] == pytest.approx(records["en_dev"]["value"])
