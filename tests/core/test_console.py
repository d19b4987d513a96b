"""Job logs read well: no ANSI codes or progress bars in a file, one line per load report,
a throughput/ETA line every log_every steps."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from xlt.core.console import one_line_load_report, progress_line

REPO = Path(__file__).resolve().parents[2]

REPORT = (
    "\x1b[1mBertForSequenceClassification LOAD REPORT\x1b[0m from: /m\n"
    "Key               | Status  | \n------------------+---------+-\n"
    "classifier.bias   | \x1b[31mMISSING\x1b[0m | \nclassifier.weight | \x1b[31mMISSING\x1b[0m | \n"
    "cls.predictions.bias | UNEXPECTED | \n\nNotes:\n- MISSING:\tthose params were newly initialized.\n"
)


def test_a_load_report_becomes_one_plain_line():
    line = one_line_load_report(REPORT)
    assert line == (
        "BertForSequenceClassification load report from: /m "
        "MISSING (newly initialised): classifier.bias, classifier.weight; UNEXPECTED (not used): cls.predictions.bias"
    )


def test_the_progress_line_reads_as_documented():
    assert (
        progress_line(40, 300, 0.69314, 4.1e-4, 812.3, 12.4, 80.9)
        == "step 40/300 loss 0.6931 lr 4.1e-04 samples/s 812 elapsed 0:00:12 eta 0:01:20"
    )


@pytest.fixture(scope="module")
def finetune_inputs(tmp_path_factory):
    """A tiny BERT encoder without a classification head (so from_pretrained reports the missing
    head), a WordPiece tokenizer and demo NLI data."""
    import torch
    from transformers import BertConfig, BertModel

    from xlt.core.io import write_jsonl
    from xlt.core.models import save_model
    from xlt.data import demo
    from xlt.data.demo_model import build_tokenizer, demo_corpus

    root = tmp_path_factory.mktemp("console")
    tokenizer = build_tokenizer(demo_corpus(["en"], 200, 1), 150)
    torch.manual_seed(0)
    config = BertConfig(
        vocab_size=len(tokenizer),
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=64,
    )
    save_model(BertModel(config), tokenizer, root / "model")
    write_jsonl(root / "train.jsonl", demo.generate("nli", "en", "train", 40, 1))
    write_jsonl(root / "dev.jsonl", demo.generate("nli", "en", "dev", 12, 1))
    return root


@pytest.mark.slow
def test_a_finetune_log_file_is_plain_and_shows_progress(finetune_inputs, tmp_path):
    log_path = tmp_path / "finetune.log"
    env = {**os.environ, "PYTHONPATH": str(REPO / "src"), "OMP_NUM_THREADS": "1"}
    for name in ("TQDM_DISABLE", "HF_HUB_DISABLE_PROGRESS_BARS", "NO_COLOR"):
        env.pop(name, None)  # the job itself must switch them off
    with open(log_path, "w") as log:
        subprocess.run(
            [
                sys.executable,
                "-m",
                "xlt.cli",
                "finetune",
                "--model",
                str(finetune_inputs / "model"),
                "--train",
                str(finetune_inputs / "train.jsonl"),
                "--dev",
                str(finetune_inputs / "dev.jsonl"),
                "--num-labels",
                "3",
                "--out",
                str(tmp_path / "run"),
                "--max-steps",
                "6",
                "--batch-size",
                "8",
                "--log-every",
                "2",
                "--device",
                "cpu",
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
            env=env,
            check=True,
            timeout=300,
        )
    text = log_path.read_text()
    assert "\x1b" not in text, "ANSI escape in the job log"
    assert "\r" not in text and "it/s]" not in text, "a progress bar in the job log"
    progress = re.findall(
        r"step (\d+)/6 loss \d+\.\d{4} lr \S+ samples/s \d+ elapsed \d+:\d\d:\d\d eta \d+:\d\d:\d\d$", text, flags=re.M
    )
    assert progress == ["2", "4", "6"]
    reports = [line for line in text.splitlines() if "load report" in line.lower()]
    assert len(reports) == 1 and "MISSING (newly initialised): classifier.bias, classifier.weight" in reports[0]
    assert "Key" not in text and "Notes:" not in text
    # the run's training curve beside its metrics: every logged step and every evaluation
    import csv

    with open(tmp_path / "run" / "train.curve.csv") as f:
        curve = list(csv.DictReader(f))
    assert [row["step"] for row in curve] == ["2", "4", "5", "6"]  # log_every 2, one epoch = 5 steps
    assert [bool(row["dev_score"]) for row in curve] == [False, False, True, True]
    assert all(float(row["loss"]) > 0 for row in curve) and float(curve[-1]["lr"]) == 0.0


def test_a_library_record_is_printed_once_when_the_library_also_propagates(monkeypatch):
    """transformers prints with its own handler and, under CI=true, also propagates to the root."""
    import io
    import logging

    from xlt.core.console import PrintedByLibrary

    own, root = io.StringIO(), io.StringIO()
    library = logging.getLogger("transformers")
    own_handler, root_handler = logging.StreamHandler(own), logging.StreamHandler(root)
    root_handler.addFilter(PrintedByLibrary())
    monkeypatch.setattr(library, "handlers", [own_handler])
    monkeypatch.setattr(library, "propagate", True)
    monkeypatch.setattr(logging.getLogger(), "handlers", [root_handler])
    logging.getLogger("transformers.modeling_utils").warning("a load report")
    logging.getLogger("xlt.core.training").warning("step 2/6")
    assert own.getvalue() == "a load report\n" and root.getvalue() == "step 2/6\n"
