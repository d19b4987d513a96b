"""The sweep's HParams experiment (xlt.core.monitor_sweep) as the real TensorBoard serves it: runs
of three families written by the project's own writers (xlt.core.training.train under
xlt.core.monitor.run), the sweep's experiment beside them, and what the HParams and scalar
dashboards get over HTTP."""

from __future__ import annotations

import copy
import time
from pathlib import Path

import pytest
import torch
import yaml
from helpers.tensorboard_viewer import Viewer

from xlt.core import monitor, monitor_sweep, settings
from xlt.core.metrics import record
from xlt.core.plan import shared_jobs
from xlt.core.train_args import TrainArgs
from xlt.core.train_inputs import DevSelection, Objective
from xlt.core.training import train

ROOT = Path(__file__).resolve().parents[2]
STEPS, EVAL_EVERY = 6, 3
needs_tensorboard = pytest.mark.skipif(
    not monitor.available(), reason=f"the monitor extra is absent ({monitor.INSTALL})"
)

# three families' runs with the axes their verbs write: freeze_depth's depth (-1 is "none"), MonoX's
# size (a number or "all"), flag and unset temperature, adapt's scheme and its probes
RUNS = {
    "freeze_depth/demo-mbert-depthnone-seed1": {"freeze_depth": -1, "seed": 1, "model": "demo-mbert"},
    "freeze_depth/demo-mbert-depth03-seed1": {"freeze_depth": 3, "seed": 1, "model": "demo-mbert"},
    "monox/teachers/demo-teacher-n20-seed2": {
        "model": "demo-teacher",
        "mode": "teacher",
        "size": 20,
        "headline": False,
        "temperature": None,
        "seed": 2,
    },
    "monox/teachers/demo-teacher-nall-seed2": {
        "model": "demo-teacher",
        "mode": "teacher",
        "size": "all",
        "headline": True,
        "temperature": None,
        "seed": 2,
    },
    "adapt/demo-mbert-layers0-12-seed1": {"model": "demo-mbert", "scheme": "0-12", "seed": 1, "role": "adapted"},
}


def toy_run(run_dir: Path, axes: dict, probes: bool) -> None:
    """A linear classifier trained by the real loop with monitoring on; its evaluations score
    the dev set (and, for `probes`, return a probe's records as adapt's do)."""
    g = torch.Generator().manual_seed(sum(map(ord, run_dir.name)))
    x = torch.randn(40, 4, generator=g)
    examples = [{"x": row, "y": int(row.sum() > 0)} for row in x]
    model = torch.nn.Linear(4, 2)

    def collate(batch):
        return {"x": torch.stack([e["x"] for e in batch]), "y": torch.tensor([e["y"] for e in batch])}

    def loss_fn(m, batch):
        return torch.nn.functional.cross_entropy(m(batch["x"]), batch["y"])

    def evaluate(m):
        with torch.no_grad():
            batch = collate(examples[:20])
            accuracy = (m(batch["x"]).argmax(-1) == batch["y"]).float().mean().item()
        out = {"score": accuracy, "dev_accuracy": accuracy}
        if probes:
            out[monitor.PROBES] = [record("cka", 0.5, layer=layer, level="sentence") for layer in (0, 1)]
        return out

    args = TrainArgs(max_steps=STEPS, batch_size=8, lr=0.05, log_every=1, eval_every=EVAL_EVERY, device="cpu")
    with monitor.run(True, run_dir, axes, {"lr": args.lr}):
        train(
            model, Objective(examples, collate, loss_fn), args, dev=DevSelection(evaluate, loss_examples=examples[:20])
        )


@pytest.fixture(scope="module")
def sweep_logdir(tmp_path_factory) -> Path:
    logdir = tmp_path_factory.mktemp("runs")
    for run, axes in RUNS.items():
        toy_run(logdir / run, axes, probes=run.startswith("adapt/"))
    columns: dict[str, list] = {}
    for axes in RUNS.values():
        for axis, value in monitor.session_hparams(axes).items():
            columns.setdefault(axis, []).append(value)
    assert monitor.write_experiment(logdir / "sweep", columns)
    return logdir


@pytest.fixture(scope="module")
def viewer(sweep_logdir):
    started = Viewer(sweep_logdir)
    yield started
    started.close()


ALL_STATUSES = ["STATUS_UNKNOWN", "STATUS_SUCCESS", "STATUS_FAILURE", "STATUS_RUNNING"]


def session_groups(viewer: Viewer, col_params: list | None = None) -> dict:
    """Run -> its session's hparams and metric values, as the HParams table asks for them."""
    body = {
        "experimentName": "",
        "startIndex": 0,
        "sliceSize": 100,
        "colParams": col_params or [],
        "allowedStatuses": ALL_STATUSES,
    }
    groups = viewer.post("/data/plugin/hparams/session_groups", body)["sessionGroups"]
    return {
        group["name"]: (group["hparams"], {m["name"]["tag"]: m["value"] for m in group["metricValues"]})
        for group in groups
    }


@needs_tensorboard
@pytest.mark.slow
def test_the_hparams_table_has_every_familys_axes_typed_and_the_selected_and_final_score(viewer):
    """One experiment for the sweep: the union of the three families' axes (booleans as booleans,
    numbers as their text in the order of their values, the depth -1 as "none"), the varying ones
    first, the selected and final score as its metrics; every run is a row with its own values,
    none of them a stray 'null', -1 or 1.0."""
    viewer.tags({"train/loss", "eval/score"})
    expected_runs = set(RUNS)
    for _ in range(60):  # the viewer loads the runs one after another
        rows = session_groups(viewer)
        if set(rows) == expected_runs:
            break
        time.sleep(0.5)
    assert set(rows) == expected_runs
    experiment = viewer.post("/data/plugin/hparams/experiment", {"experimentName": ""})
    infos = {h["name"]: h for h in experiment["hparamInfos"]}
    assert {name: info["type"] for name, info in infos.items()} == {
        "freeze_depth": "DATA_TYPE_STRING",
        "seed": "DATA_TYPE_STRING",
        "model": "DATA_TYPE_STRING",
        "mode": "DATA_TYPE_STRING",
        "size": "DATA_TYPE_STRING",
        "headline": "DATA_TYPE_BOOL",
        "scheme": "DATA_TYPE_STRING",
        "role": "DATA_TYPE_STRING",
    }  # temperature: None in every run, so no column
    assert infos["freeze_depth"]["domainDiscrete"] == ["3", "none"]
    assert infos["seed"]["domainDiscrete"] == ["1", "2"]
    assert infos["size"]["domainDiscrete"] == ["20", "all"]
    assert infos["headline"]["domainDiscrete"] == [False, True]
    varying = [name for name, info in infos.items() if info["differs"]]
    assert varying == ["freeze_depth", "headline", "model", "seed", "size"]  # first, as TensorBoard sorts them
    assert list(infos)[: len(varying)] == varying
    assert [(m["name"]["tag"], m["displayName"]) for m in experiment["metricInfos"]] == [
        ("eval/best_score", "selected score"),
        ("eval/score", "final score"),
    ]
    assert rows["freeze_depth/demo-mbert-depthnone-seed1"][0] == {
        "freeze_depth": "none",
        "seed": "1",
        "model": "demo-mbert",
    }
    assert rows["monox/teachers/demo-teacher-n20-seed2"][0] == {
        "model": "demo-teacher",
        "mode": "teacher",
        "size": "20",
        "headline": False,
        "seed": "2",
    }
    for run, (_, metrics) in rows.items():
        final = viewer.scalars(run, "eval/score")
        best = max(value for _, value in final)
        assert metrics == {"eval/best_score": best, "eval/score": final[-1][1]}, run

    # the table's filters keep the runs whose values are ticked: the values match the choices
    ticked = [
        {"hparam": name, "filterDiscrete": info["domainDiscrete"], "includeInResult": True}
        for name, info in infos.items()
    ]
    assert set(session_groups(viewer, ticked)) == expected_runs


@needs_tensorboard
@pytest.mark.slow
def test_the_scalars_researchers_look_for_are_served_and_the_probes_are_apart(viewer):
    """Every run has train/loss, train/learning_rate, train/grad_norm, eval/loss and a named dev
    metric; the probes' cards are under probe/, none under eval/."""
    tags = viewer.tags({"probe/cka/0/sentence"})
    for _ in range(60):
        if set(RUNS) <= set(tags):
            break
        time.sleep(0.5)
        tags = viewer.get("/data/plugin/scalars/tags")
    wanted = {"train/loss", "train/learning_rate", "train/grad_norm", "eval/loss", "eval/dev_accuracy"}
    for run in RUNS:
        assert wanted <= set(tags[run]), (run, sorted(tags[run]))
        assert not [tag for tag in tags[run] if tag.startswith("eval/cka")], run
    adapt = tags["adapt/demo-mbert-layers0-12-seed1"]
    assert sorted(tag for tag in adapt if tag.startswith("probe/")) == ["probe/cka/0/sentence", "probe/cka/1/sentence"]
    assert "sweep" not in tags  # the sweep's experiment adds no scalars


def test_the_sweep_columns_are_every_training_jobs_axes():
    """The demo config's experiment: a column for every axis of every planned job that writes event
    files, each with every value those jobs have (as the runs write them), and the demo models'."""
    raw = yaml.safe_load((ROOT / "config.yaml").read_text())
    config = settings.validate(copy.deepcopy(raw))
    columns = monitor_sweep.columns(config)
    expected: dict[str, set] = {}
    families = set()
    for name in settings.registry.names():
        if settings.family(config, name) is None:
            continue
        for jobs in settings.plan_module(name).jobs(config).values():
            for job in jobs.values():
                if "--tensorboard" in map(str, job.args):
                    families.add(name)
                    for axis, value in monitor.session_hparams(job.axes).items():
                        expected.setdefault(axis, set()).add(value)
    expected["model"] |= set(shared_jobs(config)["build_demo_model"])
    assert {axis: set(values) for axis, values in columns.items()} == expected
    assert families == {"freeze_depth", "sbert", "adapt", "monox", "dual"}  # every family that trains
    assert "none" in expected["freeze_depth"] and {True, False} == expected["headline"]
    assert monitor_sweep.columns({**config, "monitor": {"tensorboard": False}}) == {}


def test_the_sweep_experiment_is_written_once_per_content(tmp_path):
    """A second start with the same config leaves the file (a running viewer keeps what it read
    first); a changed config replaces it, one file in the directory."""
    if not monitor.available():
        pytest.skip(f"the monitor extra is absent ({monitor.INSTALL})")
    raw = yaml.safe_load((ROOT / "config.yaml").read_text())
    config = settings.validate(copy.deepcopy(raw))
    assert monitor_sweep.write(config, tmp_path)
    first = sorted(tmp_path.iterdir())
    assert not monitor_sweep.write(config, tmp_path) and sorted(tmp_path.iterdir()) == first
    fewer = settings.validate({**copy.deepcopy(raw), "freeze_depth": {"enabled": False}})
    assert monitor_sweep.write(fewer, tmp_path)
    assert len(list(tmp_path.iterdir())) == 1
    assert not monitor_sweep.write({**config, "monitor": {"tensorboard": False}}, tmp_path / "off")
    assert not (tmp_path / "off").exists()
