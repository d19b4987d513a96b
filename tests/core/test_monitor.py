"""TensorBoard monitoring (`monitor: {tensorboard: true}`, xlt.core.monitor): a training verb's
event files as the real viewer serves them, a killed and resumed run as one curve, monitoring off
importing nothing, and the switch from the config to every training job's command line."""

from __future__ import annotations

import copy
import json
import logging
import os
import re
import subprocess
import sys
import textwrap
import time
import urllib.request
from pathlib import Path

import pytest
import torch
import yaml
from helpers.tensorboard_viewer import Viewer

from xlt.core import monitor
from xlt.core.errors import XltError
from xlt.core.io import read_json, write_jsonl

ROOT = Path(__file__).resolve().parents[2]
STEPS, LOG_EVERY, EVAL_EVERY = 6, 1, 3
needs_tensorboard = pytest.mark.skipif(
    not monitor.available(), reason=f"the monitor extra is absent ({monitor.INSTALL})"
)


@pytest.fixture(scope="module")
def tiny_inputs(tmp_path_factory):
    """A random-init 2-layer BERT classifier with a WordPiece tokenizer, demo NLI data."""
    from transformers import BertConfig, BertForSequenceClassification

    from xlt.core.models import save_model
    from xlt.data import demo
    from xlt.data.demo_model import build_tokenizer, demo_corpus

    root = tmp_path_factory.mktemp("monitor")
    tokenizer = build_tokenizer(demo_corpus(["en"], 200, 1), 150)
    torch.manual_seed(0)
    config = BertConfig(
        vocab_size=len(tokenizer),
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=64,
        num_labels=3,
    )
    save_model(BertForSequenceClassification(config), tokenizer, root / "model")
    write_jsonl(root / "train.jsonl", demo.generate("nli", "en", "train", 48, 1))
    write_jsonl(root / "dev.jsonl", demo.generate("nli", "en", "dev", 12, 1))
    return root


def finetune_argv(root: Path, out: Path, *extra: str) -> list[str]:
    return [
        "finetune",
        *("--model", str(root / "model"), "--train", str(root / "train.jsonl"), "--dev", str(root / "dev.jsonl")),
        *("--num-labels", "3", "--freeze-depth", "1", "--out", str(out), "--device", "cpu", "--seed", "3"),
        *("--max-steps", str(STEPS), "--batch-size", "8", "--lr", "1e-3", "--max-length", "32"),
        *("--log-every", str(LOG_EVERY), "--eval-every", str(EVAL_EVERY)),
        *("--axes", json.dumps({"model": "tiny-bert", "train_lang": "en"})),
        *extra,
    ]


def run_finetune(argv: list[str], env: dict | None = None) -> subprocess.CompletedProcess:
    """`xlt finetune` in its own process (as a workflow job runs it)."""
    code = f"import sys; from xlt.cli import main; sys.exit(main({argv!r}))"
    environment = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT / "src"), os.environ.get("PYTHONPATH")])),
        **(env or {}),
    }
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=environment, timeout=300)


def event_files(directory: Path) -> list[Path]:
    return sorted(directory.rglob("events.out.tfevents.*"))


@pytest.fixture
def viewer_of():
    started = []

    def start(logdir: Path) -> Viewer:
        started.append(Viewer(logdir))
        return started[-1]

    yield start
    for viewer in started:
        viewer.close()


PROGRESS = re.compile(r"step (\d+)/\d+ loss (\S+) lr (\S+) samples/s (\S+)")


@needs_tensorboard
def test_the_viewer_serves_the_progress_lines_evaluations_and_axes(tiny_inputs, tmp_path, viewer_of, caplog):
    """The real viewer reads the run's event file: train/* at every progress line with its
    numbers, eval/* at every evaluation with the run's history, the axes as HParams with the
    selection metric, the settings as text."""
    from xlt.cli import main

    out = tmp_path / "runs" / "freeze_depth" / "tiny-run"
    with caplog.at_level(logging.INFO, logger="xlt.core.training"):
        assert main(finetune_argv(tiny_inputs, out, "--tensorboard", "true")) == 0
    assert len(event_files(out)) == 1 and event_files(out)[0].parent == out  # one writer, in the run directory
    lines = [PROGRESS.search(r.getMessage()) for r in caplog.records]
    progress = [m.groups() for m in lines if m]
    assert [int(step) for step, *_ in progress] == list(range(1, STEPS + 1))
    history = read_json(out / "train.json")["meta"]["history"]
    assert [h["step"] for h in history] == [EVAL_EVERY, STEPS]

    viewer = viewer_of(tmp_path / "runs")
    tags = viewer.tags({"train/loss", "eval/score"})
    assert list(tags) == ["freeze_depth/tiny-run"]  # the run directory is the run: no stray timestamped one
    run = "freeze_depth/tiny-run"
    assert set(tags[run]) == {
        "train/loss",
        "train/learning_rate",
        "train/samples_per_s",
        "train/grad_norm",
        "eval/score",
        "eval/best_score",
        "eval/dev_accuracy",
        "eval/loss",
    }
    served = {tag: viewer.scalars(run, tag) for tag in tags[run]}
    for tag, column in (("train/loss", 1), ("train/learning_rate", 2), ("train/samples_per_s", 3)):
        assert [step for step, _ in served[tag]] == [int(p[0]) for p in progress], tag
        for (_, value), line in zip(served[tag], progress):
            printed = line[column]  # the progress line's rounding: loss .4f, lr .1e, samples/s .0f
            digits = printed.split("e")[0].split(".")[-1] if "." in printed else ""
            assert f"{value:.{len(digits)}{'e' if 'e' in printed else 'f'}}" == printed, (tag, value, printed)
    for tag, key in (("eval/score", "score"), ("eval/dev_accuracy", "dev_accuracy")):
        assert [step for step, _ in served[tag]] == [h["step"] for h in history]
        assert [value for _, value in served[tag]] == pytest.approx([h[key] for h in history], rel=1e-6)
    # (float32 on disk: rel 1e-6 is 8 ulp of float32's 2**-24 relative spacing)
    best = [max(h["score"] for h in history[: i + 1]) for i in range(len(history))]
    assert [value for _, value in served["eval/best_score"]] == pytest.approx(best, rel=1e-6)
    assert [step for step, _ in served["eval/loss"]] == [h["step"] for h in history]
    assert [step for step, _ in served["train/grad_norm"]] == [int(p[0]) for p in progress]
    assert all(value > 0 for _, value in served["train/grad_norm"] + served["eval/loss"])

    # no sweep experiment here (a verb run by hand): TensorBoard builds the columns from the session
    experiment = viewer.post("/data/plugin/hparams/experiment", {"experimentName": ""})
    hparams = {h["name"]: h["type"] for h in experiment["hparamInfos"]}
    assert hparams == {
        "model": "DATA_TYPE_STRING",
        "train_lang": "DATA_TYPE_STRING",
        "freeze_depth": "DATA_TYPE_STRING",
        "seed": "DATA_TYPE_STRING",  # a number as its text (TensorBoard would print 3 as 3.0000)
    }
    assert {"eval/score", "eval/best_score"} <= {m["name"]["tag"] for m in experiment["metricInfos"]}
    groups = viewer.post(
        "/data/plugin/hparams/session_groups",
        {
            "experimentName": "",
            "startIndex": 0,
            "sliceSize": 10,
            "colParams": [],
            "allowedStatuses": ["STATUS_UNKNOWN", "STATUS_SUCCESS", "STATUS_FAILURE", "STATUS_RUNNING"],
        },
    )
    (group,) = groups["sessionGroups"]
    assert group["hparams"] == {"model": "tiny-bert", "train_lang": "en", "freeze_depth": "1", "seed": "3"}
    (settings_tag,) = viewer.get("/data/plugin/text/tags")[run]  # the resolved settings as text
    (text,) = viewer.get(f"/data/plugin/text/text?run={urllib.request.quote(run)}&tag={settings_tag}")
    assert settings_tag.startswith("settings") and "max_steps" in text["text"] and "0.001" in text["text"]


@needs_tensorboard
@pytest.mark.slow
def test_a_killed_and_resumed_run_is_one_curve(tiny_inputs, tmp_path, viewer_of):
    """Killed right after step 4 (its checkpoint is step 2's), the rerun resumes at step 2 and
    writes from step 3 on with purge_step 3: the viewer serves one value per step."""
    out = tmp_path / "runs" / "freeze_depth" / "killed"
    argv = finetune_argv(tiny_inputs, out, "--tensorboard", "true", "--checkpoint-every", "2")
    argv += ["--checkpoint-dir", str(tmp_path / "checkpoint")]
    killed = run_finetune(argv, env={"XLT_FAULT": "step:4:KILL"})
    assert killed.returncode == -9, killed.stderr[-3000:]
    resumed = run_finetune(argv)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert "resum" in resumed.stderr.lower()
    assert len(event_files(out)) == 2

    viewer = viewer_of(tmp_path / "runs")
    viewer.tags({"train/loss"})
    time.sleep(1)  # both files read (the viewer loads a run's files in order)
    for tag in ("train/loss", "train/learning_rate"):
        steps = [step for step, _ in viewer.scalars("freeze_depth/killed", tag)]
        assert steps == list(range(1, STEPS + 1)), (tag, steps)
    assert [step for step, _ in viewer.scalars("freeze_depth/killed", "eval/score")] == [EVAL_EVERY, STEPS]


def test_monitoring_off_imports_no_tensorboard_and_writes_nothing(tiny_inputs, tmp_path):
    """Off (--tensorboard false, as the default: see the switch's test), a training job imports no
    tensorboard module and writes no event file."""
    argv = finetune_argv(tiny_inputs, tmp_path / "off", "--tensorboard", "false")
    code = textwrap.dedent(f"""
        import sys
        from xlt.cli import main
        assert main({argv!r}) == 0
        loaded = sorted(m for m in sys.modules if "tensorboard" in m)
        assert not loaded, loaded
    """)
    environment = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT / "src"), os.environ.get("PYTHONPATH")])),
    }
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=environment, timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    assert (tmp_path / "off" / "train.json").is_file() and not event_files(tmp_path)


def test_monitoring_on_without_the_package_stops_the_config_check_and_the_verb(
    tiny_inputs, tmp_path, monkeypatch, capsys
):
    """One error before any job runs, naming the extra to install; a verb run by hand stops before it
    loads the model."""
    from xlt.cli import main
    from xlt.core import settings

    monkeypatch.setattr(monitor, "available", lambda: False)
    raw = yaml.safe_load((ROOT / "config.yaml").read_text())
    with pytest.raises(XltError, match=r'config.yaml: monitor\.tensorboard: true .*pip install -e "\.\[monitor\]"'):
        settings.validate(copy.deepcopy(raw), "config.yaml")
    settings.validate({**raw, "monitor": {"tensorboard": False}})  # off: nothing to install

    out = tmp_path / "run"
    with pytest.raises(SystemExit):
        main(finetune_argv(tiny_inputs, out, "--tensorboard", "true"))
    assert 'tensorboard package is not installed; install the monitor extra (pip install -e ".[monitor]")' in (
        capsys.readouterr().err
    )
    assert not out.exists()


def planned_args(config: dict) -> dict[tuple[str, str, str], list[str]]:
    """Every job's arguments by (family, rule, job key)."""
    from xlt.core import settings

    return {
        (name, rule, key): list(map(str, job.args))
        for name in settings.registry.names()
        if settings.family(config, name)
        for rule, jobs in settings.plan_module(name).jobs(config).items()
        for key, job in jobs.items()
    }


def test_the_switch_adds_the_flag_to_every_training_job_and_changes_nothing_else(monkeypatch):
    """`monitor.tensorboard: true` (the demo's) adds `--tensorboard true` to the command line of
    every job that trains (those with the training flags) and changes no other argument."""
    from xlt.cli import build_parser
    from xlt.core import settings

    monkeypatch.setattr(monitor, "available", lambda: True)
    raw = yaml.safe_load((ROOT / "config.yaml").read_text())
    assert raw["monitor"] == {"tensorboard": True}  # the demo writes event files
    on = planned_args(settings.validate(copy.deepcopy(raw)))
    off = planned_args(settings.validate({**copy.deepcopy(raw), "monitor": {"tensorboard": False}}))
    assert on.keys() == off.keys()
    trained = 0
    for key, args in on.items():
        if "--max-steps" in off[key]:
            i = args.index("--tensorboard")
            assert args[i + 1] == "true" and args[:i] + args[i + 2 :] == off[key], key
            trained += 1
        else:
            assert args == off[key], key
    rules = {rule for family, rule, _ in on if "--max-steps" in off[(family, rule, _)]}
    assert trained >= 10 and rules == {"finetune", "train_sbert", "adapt_mlm", "train_teacher", "distill", "train_dual"}
    parse = build_parser("finetune").parse_args
    assert parse(finetune_argv(Path("in"), Path("out"))).tensorboard is False  # off unless asked
    assert parse(finetune_argv(Path("in"), Path("out"), "--tensorboard", "true")).tensorboard is True


def test_an_evaluation_becomes_eval_scalars():
    """Numbers as eval/<key> (dual's "qaa xx->en" as a legal tag), metric records as
    eval/<metric>/<dimensions> (adapt's perplexity of every set), the probes' records as
    probe/<metric>/<dimensions> (adapt's CKA), lists, dicts, flags and NaN left out."""
    from xlt.core.metrics import record

    metrics = {
        "score": -12.5,
        "target_perplexity": 12.5,
        "qaa xx->en": 0.75,
        "trainable_layers": [9, 10, 11, 12],
        "records": [
            record("perplexity", 12.5, lang="qab", split="dev", step=25),
            record("mlm_loss", 2.53, lang="multilingual", split="dev", step=25),
        ],
        "probes": [record("cka", 0.5, layer=3, level="sentence", step=25)],
        "tracked": {"en": 0.5},
        "done": True,
        "nan": float("nan"),
    }
    assert monitor.scalars(metrics) == {
        "eval/score": -12.5,
        "eval/target_perplexity": 12.5,
        "eval/qaa_xx_to_en": 0.75,
        "eval/perplexity/qab/dev": 12.5,
        "eval/mlm_loss/multilingual/dev": 2.53,
        "probe/cka/3/sentence": 0.5,
    }


def test_the_demo_models_pretraining_is_monitored_like_every_training(monkeypatch, tmp_path, capsys):
    """With monitoring on, each demo model's build gets `--tensorboard true` and its run directory
    beside the training runs' (off: neither); asked by hand without a run directory, the verb stops
    before it builds anything, naming the flag."""
    from xlt.cli import main
    from xlt.core import settings
    from xlt.core.plan import shared_jobs

    monkeypatch.setattr(monitor, "available", lambda: True)
    raw = yaml.safe_load((ROOT / "config.yaml").read_text())
    on = shared_jobs(settings.validate(copy.deepcopy(raw)))["build_demo_model"]
    off = shared_jobs(settings.validate({**copy.deepcopy(raw), "monitor": {"tensorboard": False}}))["build_demo_model"]
    assert on.keys() == off.keys() and len(on) >= 2
    for name, job in on.items():
        args = list(map(str, job.args))
        assert args == [
            *map(str, off[name].args),
            "--tensorboard",
            "true",
            "--run-dir",
            f"results/runs/demo_models/{name}",
        ]

    out = tmp_path / "model"
    assert main(["build-demo-model", "--out", str(out), "--tensorboard", "true"]) == 2
    assert "--tensorboard true writes the pretraining's curves into --run-dir; pass one" in capsys.readouterr().err
    assert not out.exists()


@needs_tensorboard
def test_the_dev_loss_changes_no_number_of_the_run(tmp_path):
    """eval/loss runs the model and the collate on the dev examples between steps; with the random
    generators restored around it, a run with monitoring on trains to the same parameters, bit for
    bit, as one without (the same arithmetic on the same batches: exact equality)."""
    from xlt.core.train_args import TrainArgs
    from xlt.core.train_inputs import DevSelection, Objective
    from xlt.core.training import train

    g = torch.Generator().manual_seed(0)
    examples = [{"x": row} for row in torch.randn(24, 4, generator=g)]

    def collate(batch):  # draws from torch's global generator, as adapt's MLM masking does
        x = torch.stack([e["x"] for e in batch])
        return {"x": x + 0.1 * torch.rand(x.shape), "y": (x.sum(1) > 0).long()}

    def loss_fn(m, batch):
        return torch.nn.functional.cross_entropy(m(batch["x"]), batch["y"])

    evaluations = []

    def evaluate(m):  # a score that grows, so the last parameters are the kept ones
        evaluations.append(1)
        return {"score": float(len(evaluations))}

    def run(on: bool) -> list[torch.Tensor]:
        evaluations.clear()
        torch.manual_seed(0)
        model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Dropout(0.3), torch.nn.Linear(8, 2))
        args = TrainArgs(max_steps=6, batch_size=4, lr=0.05, log_every=1, eval_every=2, device="cpu")
        with monitor.run(on, tmp_path / f"run-{on}", {"seed": 1}, {}):
            train(
                model,
                Objective(examples, collate, loss_fn),
                args,
                dev=DevSelection(evaluate, loss_examples=examples[:8]),
            )
        return [p.detach().clone() for p in model.parameters()]

    monitored, plain = run(True), run(False)
    assert event_files(tmp_path / "run-True") and not (tmp_path / "run-False").exists()
    assert all(torch.equal(a, b) for a, b in zip(monitored, plain))


@needs_tensorboard
def test_a_cached_run_writes_its_dev_loss_and_trains_as_unmonitored(tiny_inputs, tmp_path):
    """freeze_depth with the frozen-prefix cache: the dev set goes through the prefix once for
    eval/loss, and the run's evaluations and kept parameters are those of the run without
    monitoring (the same arithmetic on the same batches: exact equality)."""
    from tensorboard.backend.event_processing.event_file_loader import EventFileLoader

    from xlt.cli import main

    runs = {}
    for on in ("true", "false"):
        out = tmp_path / f"cached-{on}"
        assert main(finetune_argv(tiny_inputs, out, "--cache-frozen-prefix", "--tensorboard", on)) == 0
        runs[on] = read_json(out / "train.json")["meta"]["history"]
    written = {
        v.tag
        for f in event_files(tmp_path / "cached-true")
        for e in EventFileLoader(str(f)).Load()
        for v in e.summary.value
    }
    assert "eval/loss" in written and not event_files(tmp_path / "cached-false")
    assert runs["true"] == runs["false"]
