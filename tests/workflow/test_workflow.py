"""The Snakemake DAG end to end, in a scratch copy of the workflow (the package itself is
imported from the installed `xlt`)."""

import json
import re
from fnmatch import fnmatch
from pathlib import Path

import pandas as pd
import pytest
import yaml
from helpers.workflow_runs import REPO, job_counts, snakemake, workflow_copy

from xlt.cost import ledger


@pytest.mark.slow
def test_paper_config_dry_run_plans_one_finetune_per_depth_offline(dry_runs):
    counts = job_counts(dry_runs.output("config/paper.yaml"))
    config = yaml.safe_load((REPO / "config" / "paper.yaml").read_text())
    family = config["freeze_depth"]
    # 14 depths a model (-1, 0 .. 12), but a model with its own model_depths entry at those only
    per_seed = sum(len(family.get("model_depths", {}).get(model, range(14))) for model in family["models"])
    depths = per_seed * len(family["seeds"])
    assert counts["finetune"] == depths == 45  # the cased mBERT at 14 depths, the uncased at -1; 3 seeds
    assert counts["evaluate_xnli"] == depths
    assert "build_demo_model" not in counts  # real models come from the hub


def dry_run_jobs(output: str) -> list[dict]:
    """Each job block of a dry run: its rule and its `input:`, `output:` and `wildcards:` lines."""
    jobs = []
    for line in output.splitlines():
        if line.startswith(("rule ", "localrule ")) and line.rstrip().endswith(":"):
            jobs.append({"rule": line.split()[1].rstrip(":")})
        elif jobs and line.startswith("    ") and ": " in line:
            key, value = line.strip().split(": ", 1)
            jobs[-1][key] = value
    return jobs


@pytest.mark.slow
def test_dry_run_wires_the_shared_prefix_store_into_every_frozen_depth(tmp_path):
    work = workflow_copy(tmp_path)
    config = yaml.safe_load((work / "config.yaml").read_text())
    config["freeze_depth"].update(depths=[-1, 0, 7], cache_frozen_prefix=True, prefix_states={"shared": True})
    (work / "shared.yaml").write_text(yaml.safe_dump(config))
    proc = snakemake(work, "-n", "--cores", "1", "--configfile", "shared.yaml", "--until", "aggregate_freeze_depth")
    output = proc.stdout + proc.stderr
    assert job_counts(output)["prefix_states"] == 1 and job_counts(output)["finetune"] == 3
    jobs = dry_run_jobs(output)
    store = "results/prefix_states/freeze_depth/demo-mbert"
    (prefix,) = [job for job in jobs if job["rule"] == "prefix_states"]
    assert prefix["output"] == store
    assert set(prefix["input"].split(", ")) == {"results/models/demo-mbert", "results/data/demo-nli/info.json"}
    finetune = {job["wildcards"].removeprefix("run_id="): job for job in jobs if job["rule"] == "finetune"}
    assert set(finetune) == {"demo-mbert-depthnone-seed1", "demo-mbert-depth00-seed1", "demo-mbert-depth07-seed1"}
    for run_id, job in finetune.items():
        assert (store in job["input"].split(", ")) == ("depthnone" not in run_id), run_id
    # without prefix_states.shared the same sweep has no store
    config["freeze_depth"]["prefix_states"] = {"shared": False}
    (work / "shared.yaml").write_text(yaml.safe_dump(config))
    proc = snakemake(work, "-n", "--cores", "1", "--configfile", "shared.yaml", "--until", "aggregate_freeze_depth")
    assert "prefix_states" not in job_counts(proc.stdout + proc.stderr)


# rule -> the files (by name pattern) among its outputs whose command also writes
# `<stem>.examples.jsonl.gz` beside them (MetricsFile.write, where the job kept per-example outputs:
# every evaluation, the dual encoder's dev retrieval in train.json and mining's pair counts; not the
# other training runs' train.json), checked against the files a demo run writes and, in the
# end-to-end test, against Snakemake's untracked files
WRITES_EXAMPLES = {
    "evaluate_xnli": {"eval.json"},
    "eval_sbert": {"eval.json"},
    "tatoeba_dual": {"tatoeba.json"},
    "train_dual": {"train.json"},
    "mine": {"*-*.json"},
    "align_layers": {"alignment.json"},
    "train_teacher": {"metrics.json"},
    "distill": {"metrics.json"},
    "adapt_mlm": {"metrics.json"},
    "adapt_reference_perplexity": {"perplexity.json"},
}
# rule -> the family whose checkpoint_selection also gives its checkpoints.json an examples file
TRACKING = {"finetune": "freeze_depth", "distill": "monox"}


@pytest.mark.slow
@pytest.mark.parametrize("configfile", ["config.yaml", "config/tiny.yaml"])
def test_dry_run_declares_every_examples_file_as_an_output(dry_runs, configfile):
    from xlt.core.metrics import examples_path
    from xlt.core.settings import validate

    config = validate(yaml.safe_load((REPO / configfile).read_text()))
    jobs = dry_run_jobs(dry_runs(configfile).stdout)
    for job in jobs:
        outputs = job.get("output", "").split(", ")
        writes = set(WRITES_EXAMPLES.get(job["rule"], ()))
        family = TRACKING.get(job["rule"])
        if family and config[family]["checkpoint_selection"]:
            writes.add("checkpoints.json")
        expected = {examples_path(path) for path in outputs if any(fnmatch(Path(path).name, name) for name in writes)}
        assert len(expected) == len(writes), job  # each of those metrics files is an output
        assert {path for path in outputs if path.endswith(".examples.jsonl.gz")} == expected, job
    ran = {job["rule"] for job in jobs}
    assert set(WRITES_EXAMPLES) <= ran  # the config exercises every rule that writes one
    tracked = {rule for rule, family in TRACKING.items() if config[family]["checkpoint_selection"]}
    assert tracked == ({"finetune", "distill"} if configfile == "config/tiny.yaml" else set())


@pytest.mark.slow
def test_dry_run_wires_the_dual_prefix_store_into_every_frozen_depth(tmp_path):
    work = workflow_copy(tmp_path)
    config = yaml.safe_load((work / "config.yaml").read_text())
    config["dual"].update(
        freeze_depths=[-1, 6],
        margins=[0.3],
        cache_frozen_prefix=True,
        allow_mixed_caching=True,
        prefix_states={"shared": True},
        objectives=["additive_margin"],
    )  # distilled runs read no store
    (work / "shared.yaml").write_text(yaml.safe_dump(config))
    proc = snakemake(work, "-n", "--cores", "1", "--configfile", "shared.yaml", "--until", "aggregate_dual")
    output = proc.stdout + proc.stderr
    assert job_counts(output)["prefix_states_dual"] == 1 and job_counts(output)["train_dual"] == 2
    jobs = dry_run_jobs(output)
    store = "results/prefix_states/dual/demo-mbert"
    (prefix,) = [job for job in jobs if job["rule"] == "prefix_states_dual"]
    assert prefix["output"] == store
    assert set(prefix["input"].split(", ")) == {"results/models/demo-mbert", "results/data/demo-bitext/info.json"}
    train = {job["wildcards"].removeprefix("run_id="): job for job in jobs if job["rule"] == "train_dual"}
    assert len(train) == 2
    for run_id, job in train.items():
        assert (store in job["input"].split(", ")) == ("depthnone" not in run_id), run_id


@pytest.mark.slow
def test_bad_config_fails_before_any_job(tmp_path):
    work = workflow_copy(tmp_path)
    config = yaml.safe_load((work / "config" / "tiny.yaml").read_text())
    config["freeze_depth"]["depths"] = [0, 3]  # the tiny model has 2 layers
    (work / "bad.yaml").write_text(yaml.safe_dump(config))
    proc = snakemake(work, "--cores", "1", "--configfile", "bad.yaml", check=False)
    assert proc.returncode != 0
    assert "freeze depth 3 in freeze_depth.depths is out of range" in proc.stdout + proc.stderr
    assert not (work / "results" / "models").exists()


@pytest.mark.slow
def test_tiny_sweep_end_to_end_then_nothing_to_do(tiny_sweep):
    """What the session's tiny sweep (conftest.tiny_sweep: locally, or through the test SLURM
    when XLT_TEST_SLURM=1) wrote, and that running it again does nothing."""
    work = tiny_sweep.work
    # the server the Snakefile starts beside Snakemake: every job run on this host forked from it
    # (through SLURM, the local rules; test_slurm checks that the cluster jobs did not), none declined
    server_log = work / "results" / "logs" / "job-server.log"
    assert re.search(r"xlt job-server: [1-9]\d* jobs forked, 0 declined", server_log.read_text()), (
        server_log.read_text()
    )
    # every per-example file a job wrote is a declared output of it (Snakemake checks and removes it)
    written = {str(path.relative_to(work)) for path in (work / "results").rglob("*.examples.jsonl.gz")}
    assert len(written) >= sum(len(names) for names in WRITES_EXAMPLES.values())
    untracked = set(snakemake(work, "--list-untracked", "--configfile", "config/tiny.yaml").stdout.split())
    assert not written & untracked, sorted(written & untracked)
    table = pd.read_csv(work / "results" / "tables" / "freeze_depth.csv")
    acc = table[table.metric == "accuracy"]
    assert sorted(acc.freeze_depth.unique()) == [-1, 0, 1, 2]
    assert set(acc.lang) == {"en", "qaa", "qac"}  # languages only: the average is in the summary
    assert len(acc) == 4 * 3
    assert acc.value.between(0, 1).all()
    summary = pd.read_csv(work / "results" / "tables" / "freeze_depth_summary.csv")
    assert set(summary.lang) == {"avg"} and len(summary[summary.metric == "accuracy"]) == 4
    for plot in ("accuracy-vs-depth", "accuracy-heatmap"):
        assert (work / "results" / "plots" / "freeze_depth" / f"{plot}.png").stat().st_size > 5000
    # every row of a family's table says that family, so a filter on `family` keeps them all
    for family in ("freeze_depth", "sbert", "adapt", "monox", "dual", "alignment"):
        family_table = pd.read_csv(work / "results" / "tables" / f"{family}.csv")
        assert set(family_table.family) == {family}, family
        # the config's model names, never a path (the path is in each run's manifest.json)
        names = set(yaml.safe_load((work / "config" / "tiny.yaml").read_text())["models"])
        assert set(family_table.model.dropna()) <= names, (family, set(family_table.model))
        assert not set(family_table.get("lang", pd.Series(dtype=str)).dropna()) & {"avg", "multilingual"}, family
    manifests = list((work / "results" / "runs").glob("*/*/manifest.json"))
    assert manifests and all(json.loads(m.read_text())["libraries"]["torch"] for m in manifests)
    # the cost ledger: one row per model-loading job, measured by its benchmark file; peak RSS
    # from the run's manifest except for the demo models, which write no metrics
    cost = pd.read_csv(work / "results" / "tables" / "cost.csv")
    ledgered = sum(1 for rows in ledger.LEDGER_RULES.values() for _ in rows)
    assert set(zip(cost.family, cost.rule)) == {(f, r) for f, rules in ledger.LEDGER_RULES.items() for r in rules}
    assert len(set(zip(cost.family, cost.rule))) == ledgered
    assert (cost.measured_s > 0).all() and (cost.planned_s > 0).all()
    # jobs that write no metrics file (the demo models, the shared prefix store) have no manifest
    without_metrics = {
        rule for family, rules in ledger.LEDGER.items() for rule, (_, template) in rules.items() if template is None
    }
    assert without_metrics == {"build_demo_model", "prefix_states", "prefix_states_dual"}
    assert set(cost[cost.rule.isin(without_metrics)].rss_from) == {"benchmark"}
    assert set(cost[~cost.rule.isin(without_metrics)].rss_from) == {"manifest"}
    assert (work / "results" / "plots" / "cost" / "plan-vs-actual.png").stat().st_size > 5000
    disk = pd.read_csv(work / "results" / "tables" / "cost_disk.csv")  # planned beside measured, per family
    assert set(disk.family) == {*cost.family, "shared", "hub cache", "total"} and (disk.planned_disk_gib >= 0).all()
    assert (disk[disk.family.isin(["shared", "freeze_depth"])].measured_disk_gib > 0).all()
    # a training-curves figure per family that trains, from every training run's curve CSV
    for family in ("freeze_depth", "sbert", "adapt", "monox", "dual"):
        assert (work / "results" / "plots" / family / "training-curves.png").stat().st_size > 5000, family
    curves = list((work / "results" / "runs").rglob("*.curve.csv"))
    assert len(curves) == 4 + 1 + 2 + 3 + 1  # tiny.yaml: finetune, sbert, adapt, monox teacher + students, dual runs
    assert all(len(path.read_text().splitlines()) > 1 for path in curves)
    report = (work / "results" / "report.html").read_text(errors="replace")
    assert "they say nothing about mBERT or about real languages" in report and "xlt tiny via --config" in report
    again = tiny_sweep.rerun()
    assert again.returncode == 0, again.stderr[-3000:]
    assert "Nothing to be done" in again.stdout + again.stderr
    assert "writing report" not in again.stdout


@pytest.mark.slow
def test_local_model_directory_and_local_tsv_files(tmp_path, demo_model_dir):
    """The README's recipe: config/local-example.yaml pointed at a save_pretrained directory
    and headered NLI TSV files with string labels."""
    from xlt.data import demo

    work = workflow_copy(tmp_path)
    data = tmp_path / "xnli"
    data.mkdir()
    names = ["entailment", "neutral", "contradiction"]
    for split, langs, size in (("train", ["en"], 48), ("dev", ["en"], 12), ("test", ["en", "qab"], 12)):
        for lang in langs:
            rows = demo.generate("nli", lang, split, size, seed=5)
            lines = ["premise\thypothesis\tlabel"] + [
                f"{r['text']}\t{r['text_pair']}\t{names[r['label']]}" for r in rows
            ]
            (data / f"{split}.{lang}.tsv").write_text("\n".join(lines) + "\n")
    config = yaml.safe_load((work / "config" / "local-example.yaml").read_text())
    config["models"]["my-mbert"]["path"] = str(demo_model_dir)
    config["datasets"]["my-xnli"].update(files=str(data / "{split}.{lang}.tsv"), languages=["en", "qab"])
    config["freeze_depth"].update(depths=[0, 2], eval={"dataset": "my-xnli", "split": "test", "langs": ["en", "qab"]})
    config["training"] = {"max_steps": 3, "batch_size": 16, "lr": 1e-3, "max_length": 32}
    (work / "local.yaml").write_text(yaml.safe_dump(config))
    snakemake(work, "--cores", "2", "--configfile", "local.yaml")
    table = pd.read_csv(work / "results" / "tables" / "freeze_depth.csv")
    acc = table[table.metric == "accuracy"]
    assert sorted(acc.freeze_depth.unique()) == [0, 2]
    assert set(acc.lang) == {"en", "qab"}  # the average is in the summary table
    summary = pd.read_csv(work / "results" / "tables" / "freeze_depth_summary.csv")
    assert set(summary.lang) == {"avg"}
    # the table names the config's model; the directory it loaded is in each run's manifest
    assert (acc.model == "my-mbert").all()
    manifests = [
        json.loads(m.read_text()) for m in (work / "results" / "runs" / "freeze_depth").glob("*/manifest.json")
    ]
    assert len(manifests) == 2 and all(m["model"] == "my-mbert" for m in manifests)
    assert any(Path(m["model_path"]).resolve() == demo_model_dir.resolve() for m in manifests)
    # every accuracy, the averages included, has its bootstrap interval around it
    for frame in (acc, summary[summary.metric == "accuracy"]):
        assert (
            frame.ci_low.notna().all() and (frame.ci_low <= frame.value).all() and (frame.value <= frame.ci_high).all()
        )
    assert len(list((work / "results" / "runs" / "freeze_depth").glob("*/eval.examples.jsonl.gz"))) == 2


# the verbs that score a sentence encoder (model, pooling, layer); `xlt align` scores every layer it lists
ENCODER_EVALUATIONS = ("eval-embeddings", "mine", "align")


def scored_encoders(output: str) -> list[tuple[str, str, frozenset | None, str, str]]:
    """(model, pooling, layers, --max-length, job) of every encoder evaluation a dry run's `-p` prints;
    layers None means every layer (align --layers all), else the hidden-state indices as given."""
    import shlex

    scored = []
    for line in output.splitlines():
        if not line.startswith("Shell command: xlt "):
            continue
        argv = shlex.split(line.removeprefix("Shell command: xlt "))
        if argv[0] not in ENCODER_EVALUATIONS:
            continue
        flags = {flag: value for flag, value in zip(argv, argv[1:]) if flag.startswith("--")}
        layers = flags.get("--layers" if argv[0] == "align" else "--layer", "-1")  # the verbs' default: last layer
        scored.append(
            (
                flags["--model"],
                flags.get("--pooling", "mean"),
                None if layers == "all" else frozenset(layers.split(",")),
                flags["--max-length"],
                f"{argv[0]} {flags.get('--run-id')}",
            )
        )
    return scored


def test_scored_encoders_reads_model_pooling_layers_and_length():
    output = "\n".join(
        [
            "Shell command: xlt eval-embeddings --model m --pooling cls --layer -2 --max-length 64 --run-id a "
            "> log 2>&1",
            "Shell command: xlt align --model m --layers all --pooling mean --max-length 128 --run-id b",
            "Shell command: xlt mine --model d --pair de-en --max-length 32 --run-id c",
            "Shell command: xlt train-dual --model m --max-length 16",
        ]
    )
    assert scored_encoders(output) == [
        ("m", "cls", frozenset({"-2"}), "64", "eval-embeddings a"),
        ("m", "mean", None, "128", "align b"),
        ("d", "mean", frozenset({"-1"}), "32", "mine c"),
    ]


@pytest.mark.slow
def test_paper_dry_run_scores_every_encoder_at_one_max_length(dry_runs):
    """Issue 35: one model on one test set gives one number in every family's table, so every
    encoder (model, pooling, layer) of the paper sweep is scored at one --max-length, whichever
    family's job (sbert's eval, dual's Tatoeba/STS and BUCC, alignment's layers) scores it."""
    scored = scored_encoders(dry_runs.output("config/paper.yaml"))
    assert {job.split()[0] for *_, job in scored} == set(ENCODER_EVALUATIONS)
    lengths: dict[tuple, set] = {}
    for model, pooling, layers, length, job in scored:
        for other_model, other_pooling, other_layers, other_length, other_job in scored:
            same_layer = layers is None or other_layers is None or bool(layers & other_layers)
            if (model, pooling) == (other_model, other_pooling) and same_layer and length != other_length:
                lengths.setdefault((model, pooling), set()).update(
                    {f"{job} at {length}", f"{other_job} at {other_length}"}
                )
    assert not lengths, "\n".join(f"{key}: {sorted(jobs)}" for key, jobs in lengths.items())
    encoders = {(model, pooling, layers) for model, pooling, layers, _, _ in scored}
    assert len(encoders) >= 40  # every family's evaluations were read (47 encoders when issue 35 was filed)
