"""Tables a researcher reads (config model names, language codes only in `lang`, averages in the
family's summary) and the manifest every run directory gets beside its metrics."""

from __future__ import annotations

import json
import subprocess
import sys

import pandas as pd
import pytest

from xlt.core.io import read_json, write_json
from xlt.core.manifest import NAME, input_files, sha256, write_manifest
from xlt.core.metrics import MetricsFile
from xlt.core.tables import read_table, summary_path
from xlt.report.aggregate import aggregate, split_summary


def _metrics(tmp_path, run_id, model_path, axes):
    m = MetricsFile("freeze_depth", run_id, axes=axes, meta={"model": model_path})
    for lang, value in (("en", 0.8), ("de", 0.6)):
        m.add("accuracy", value, lang=lang)
    m.add("accuracy", 0.7, lang="avg")
    path = tmp_path / run_id / "eval.json"
    m.write(path)
    return path


def test_model_column_is_the_config_name_and_averages_go_to_the_summary(tmp_path):
    files = [
        _metrics(tmp_path, "r1", "/data/models/mbert", {"model": "mbert", "seed": 1}),
        _metrics(tmp_path, "r2", "results/models/tiny", {"model": "tiny", "seed": 1}),
    ]
    per_language, summary = split_summary(aggregate(files))
    assert set(per_language.model) == {"mbert", "tiny"}
    assert set(per_language.lang) == {"en", "de"}
    assert list(summary.lang) == ["avg", "avg"] and list(summary.value) == [0.7, 0.7]
    assert set(summary.run_id) == {"r1", "r2"}


def test_read_table_gives_plots_the_rows_they_read_before(tmp_path):
    files = [_metrics(tmp_path, "r1", "m", {"model": "mbert"}), _metrics(tmp_path, "r2", "m", {"model": "xlmr"})]
    out = tmp_path / "tables" / "freeze_depth.csv"
    subprocess.run([sys.executable, "-m", "xlt.cli", "aggregate", *map(str, files), "--out", str(out)], check=True)
    assert summary_path(out).name == "freeze_depth_summary.csv"
    assert "avg" not in set(pd.read_csv(out).lang)
    whole = aggregate(files)
    whole.to_csv(tmp_path / "whole.csv", index=False)
    pd.testing.assert_frame_equal(read_table(out), pd.read_csv(tmp_path / "whole.csv"))


def test_an_argument_longer_than_a_file_name_is_no_input_file(tmp_path):
    data = tmp_path / "train.jsonl"
    data.write_text("{}\n")
    axes = json.dumps({"model": "m" * 300})  # one path component over NAME_MAX (255)
    assert input_files(["--axes", axes, "--train", str(data)], set()) == [data]


def test_every_run_directory_gets_a_manifest(tmp_path):
    data = tmp_path / "train.jsonl"
    data.write_text('{"text": "a", "label": 0}\n')
    out = tmp_path / "run" / "train.json"

    class Args:
        verb, model, revision, device, precision, seed = "finetune", str(tmp_path), None, "cpu", "fp32", 3

    argv = ["finetune", "--model", str(tmp_path), "--train", str(data), "--out", str(out)]
    meta = {"run_id": "r1", "family": "freeze_depth", "samples_per_s": 12.5}
    path = write_manifest(out, meta, {"model": "tiny"}, started=0.0, argv=argv, args=Args())
    manifest = read_json(path)
    assert path.name == NAME and path.parent == out.parent
    assert manifest["model"] == "tiny" and manifest["model_path"] == str(tmp_path)
    assert manifest["inputs"] == {str(data): sha256(data)}  # the model directory and the output are not inputs
    assert manifest["libraries"]["torch"] and manifest["libraries"]["transformers"]
    assert manifest["xlt_version"] and "git_commit" in manifest
    assert (manifest["device"], manifest["precision"], manifest["seed"]) == ("cpu", "fp32", 3)
    assert manifest["samples_per_s"] == 12.5 and manifest["wall_s"] > 1e6  # started at the epoch
    assert manifest["peak_memory"]["cpu_rss_mib"] > 10
    assert manifest["effective_batch"] is None  # this job's meta holds no training settings
    # a second job of the same run (evaluation) adds its entry and keeps the first's
    write_manifest(out.parent / "eval.json", meta, {"model": "tiny"}, started=0.0, argv=[], args=Args())
    assert set(read_json(path)["jobs"]) == {"train.json", "eval.json"}


def test_the_manifest_records_the_effective_batch_of_a_training_job(tmp_path):
    """batch_size examples per optimiser step, cut into grad_accum micro-batches (the loop's split)."""
    from xlt.core.train_args import TrainArgs
    from xlt.core.training import TrainResult, result_meta

    out = tmp_path / "run" / "train.json"
    meta = {
        "run_id": "r1",
        "family": "freeze_depth",
        **result_meta(TrainResult(steps=1, best_step=1, best_score=None), TrainArgs(batch_size=30, grad_accum=4)),
    }
    path = write_manifest(out, meta, {"model": "tiny"}, started=0.0, argv=[])
    expected = {"batch_size": 30, "grad_accum": 4, "micro_batch_size": 8}
    assert read_json(path)["effective_batch"] == expected
    assert read_json(path)["jobs"]["train.json"]["effective_batch"] == expected
    write_manifest(out.parent / "eval.json", {"run_id": "r1"}, {"model": "tiny"}, started=0.0, argv=[])
    assert read_json(path)["effective_batch"] == expected  # the evaluation keeps the run's training batch
    assert read_json(path)["jobs"]["eval.json"]["effective_batch"] is None


def test_xlt_verbs_write_a_manifest_with_a_real_wall_time(tmp_path, monkeypatch):
    """A verb's wall time covers the whole job, not the moment the metrics file is created."""
    from xlt import cli
    from xlt.core import metrics
    from xlt.core.verbs import WORKFLOW, Verb

    run = tmp_path / "r"
    axes = json.dumps({"model": "tiny"})
    data = tmp_path / "in.json"
    write_json(data, {"x": 1})
    seen = {}

    def run_verb(args):
        import time

        time.sleep(0.3)
        metrics.MetricsFile("dual", "r", axes=json.loads(args.axes)).write(run / "metrics.json")
        seen["ok"] = True

    verb = Verb("xlt.test_only:run", "a test's verb", lambda p: (p.add_argument("--axes"), p.add_argument("--data")))
    monkeypatch.setattr(Verb, "function", lambda self: run_verb)  # the dotted path names the local function
    original = cli.verbs, cli.verb_groups
    cli.verbs = lambda: {"test-verb": verb}
    cli.verb_groups = lambda: {WORKFLOW: ["test-verb"]}
    try:
        assert cli.main(["test-verb", "--axes", axes, "--data", str(data)]) == 0
    finally:
        cli.verbs, cli.verb_groups = original
    manifest = read_json(run / NAME)
    assert seen and manifest["wall_s"] >= 0.3 and manifest["model"] == "tiny"
    assert manifest["inputs"] == {str(data): sha256(data)}


@pytest.mark.parametrize("lang", ["avg", "multilingual"])
def test_summary_langs(lang):
    table = pd.DataFrame(
        {"family": ["f"] * 2, "run_id": ["r"] * 2, "lang": ["en", lang], "metric": ["m"] * 2, "value": [1.0, 2.0]}
    )
    per_language, summary = split_summary(table)
    assert list(per_language.lang) == ["en"] and list(summary.lang) == [lang]
