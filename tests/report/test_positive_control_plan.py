"""The positive-control job: the config section, what the plan passes (checks a cut-down sweep
cannot answer are planned as not run), and `xlt positive-control` end to end on crafted tables
and data files (exit 0 / 1 / 2)."""

import copy
import json
from pathlib import Path

import pandas as pd
import pytest
import yaml
from test_positive_control import spec as crafted_spec
from test_positive_control import tables as crafted_tables

from xlt import cli
from xlt.core import settings
from xlt.core.errors import XltError
from xlt.core.io import write_jsonl
from xlt.report.positive_control import plan
from xlt.report.positive_control.checks import FAIL, NOT_RUN, PASS, check_names

CHECK_NAMES = check_names()  # family -> its checks' names, from the registered families

REPO = Path(__file__).resolve().parents[2]


def demo_config():
    """config.yaml with the control switched on and every setting at its default (config.yaml
    itself also lists known failures)."""
    config = yaml.safe_load((REPO / "config.yaml").read_text())
    config["positive_control"] = {"enabled": True}
    return config


def test_off_unless_switched_on():
    demo = settings.validate(demo_config())
    assert demo["positive_control"]["enabled"] is True
    assert plan.targets(demo) == ["results/tables/positive_control.csv"]
    shipped = settings.load(REPO / "config.yaml")["positive_control"]
    assert shipped["enabled"] is True  # the demo guards its effects; what it cannot show yet is listed
    assert set(shipped["known_failures"]) <= {f"{f}: {c}" for f, names in CHECK_NAMES.items() for c in names}
    for name in ("tiny.yaml", "paper.yaml"):
        config = settings.load(REPO / "config" / name)
        assert config["positive_control"]["enabled"] is False, name  # the default
        assert plan.targets(config) == [] and plan.jobs(config) == {"positive_control": {}}


def test_schema_defaults_are_the_issue_thresholds():
    config = settings.validate(demo_config())
    assert config["positive_control"] == {
        "enabled": True,
        "freeze_depth": {"source_accuracy": 0.85, "above_chance": 0.2, "order_tolerance": 0.0, "depth_gain": 0.1},
        "alignment": {"chance_factor": 10},
        "dual": {"error_drop": 0.2, "distill_gain": 0.3},
        "monox": {"modes": ["finetune", "kd", "pl"], "source_accuracy": 0.8, "max_majority_share": 0.7},
        "sbert": {"spearman_gain": 0.1},
        "known_failures": {},
    }
    config = demo_config()
    config["positive_control"]["dual"] = {"error_drop": 2}
    with pytest.raises(XltError, match="config error at positive_control.dual.error_drop"):
        settings.validate(config)


def test_the_demo_spec():
    config = settings.validate(demo_config())
    spec = plan.spec(config)
    assert spec["world"] == settings.demo_world(config)
    assert spec["thresholds"] == {
        k: v for k, v in config["positive_control"].items() if k not in ("enabled", "known_failures")
    }
    assert spec["known_failures"] == {}
    assert spec["freeze_depth"] == {
        "source_lang": "en",
        "models": {"demo-mbert": {"name": "demo-mbert", "layers": 12}},
        "label_files": [f"results/data/demo-nli/{lang}/test.jsonl" for lang in ("en", "qaa", "qab", "qac")],
        "not_run": {},
    }
    # keyed as freeze_depth.csv names the model: the `model` axis its runs record
    from xlt.families.freeze_depth import plan as freeze_depth

    assert set(spec["freeze_depth"]["models"]) == {
        job.axes["model"] for job in freeze_depth.jobs(config)["finetune"].values()
    }
    assert spec["alignment"] == {
        "runs": ["pretrained-demo-mbert"],
        "metric": "bitext_retrieval_acc_centered",
        "bitext_files": {lang: f"results/data/demo-bitext/{lang}/test.jsonl" for lang in ("qaa", "qab", "qac")},
        "not_run": {},
    }
    distilled = "demo-mbert-distill-mean-bs32-depthnone-seed1"
    assert spec["dual"] == {
        "pairs": {
            "demo-mbert-margin0-scale10-mean-bs32-depthnone-seed1": "demo-mbert-mean-untrained",
            "demo-mbert-margin0.3-scale10-mean-bs32-depthnone-seed1": "demo-mbert-mean-untrained",
        },
        "langs": ["qaa", "qab", "qac"],
        "not_run": {},
        # the zero-overlap language, against the sbert teacher scored by the dual evaluation
        "distill": {distilled: "teacher-demo-mbert-mean-L-1-depthnone-seed1"},
        "distill_lang": "qac",
    }
    assert spec["monox"] == {"source_lang": "en", "modes": ["finetune", "self_train", "kd", "pl"], "not_run": {}}
    assert spec["sbert"] == {
        "pairs": {
            f"demo-mbert-{p}-L-1-depthnone-seed1": f"demo-mbert-{p}-L-1-untrained" for p in ("mean", "max", "cls")
        },
        "lang": "en",
        "dataset": "demo-sts",
        "split": "test",
        "not_run": {},
    }
    assert spec["adapt"] == {
        "target": "qab",
        "target_split": "test",
        "multilingual": "multilingual",
        "multilingual_split": "dev",
        "references": {"demo-mbert": "reference-demo-mbert"},
        "all_layers": {"demo-mbert": "0-12"},
        "not_run": {},
    }
    config["alignment"]["center"] = False
    assert plan.spec(config)["alignment"]["metric"] == "bitext_retrieval_acc"


def test_the_job_reads_every_enabled_table_and_the_counted_data():
    config = demo_config()
    config["adapt"]["enabled"] = False
    config = settings.validate(config)
    (job,) = plan.jobs(config)["positive_control"].values()
    assert list(plan.jobs(config)["positive_control"]) == [""]  # the rule has no wildcards
    tables = [f"results/tables/{f}.csv" for f in settings.FAMILIES if f != "adapt"]  # in the registered order
    assert job.inputs == {
        "tables": tables,
        "data": ["results/data/demo-nli/info.json", "results/data/demo-bitext/info.json"],
    }
    args = [str(a) for a in job.args]
    assert args[0] == "--spec" and json.loads(args[1]) == plan.spec(config) and "adapt" not in json.loads(args[1])
    assert args[2:] == [
        a for f in settings.FAMILIES if f != "adapt" for a in ("--table", f"{f}=results/tables/{f}.csv")
    ] + ["--out", plan.TABLE]


FD, AL = CHECK_NAMES["freeze_depth"], CHECK_NAMES["alignment"]


@pytest.mark.parametrize(
    "mutate, family, expected",
    [
        (
            lambda c: c["freeze_depth"]["eval"].update(langs=["en", "qaa", "qab"]),
            "freeze_depth",
            {FD[2]: "qac not in freeze_depth.eval.langs"},
        ),
        (
            lambda c: c["freeze_depth"]["eval"].update(langs=["qaa", "qab", "qac"]),
            "freeze_depth",
            {FD[0]: "the training language en is not in freeze_depth.eval.langs"},
        ),
        (
            lambda c: c["freeze_depth"]["eval"].update(langs=["en", "qab", "qac"]),
            "freeze_depth",
            {
                FD[1]: "the high-overlap language qaa is not in freeze_depth.eval.langs",
                FD[2]: "qaa not in freeze_depth.eval.langs",
                FD[3]: "the high-overlap language qaa is not in freeze_depth.eval.langs",
            },
        ),
        (
            lambda c: c["freeze_depth"].update(depths=[0, 6, 12]),
            "freeze_depth",
            dict.fromkeys(FD[:3], "depth -1 (nothing frozen) is not in freeze_depth.depths"),
        ),
        (
            lambda c: c["freeze_depth"].update(depths=[-1, 6]),
            "freeze_depth",
            {FD[3]: "depth 12 (every layer of demo-mbert frozen) is not in freeze_depth.depths"},
        ),
        (
            lambda c: c["alignment"].update(models=[]),
            "alignment",
            dict.fromkeys(AL, "alignment.models is empty: no pretrained model is analysed"),
        ),
        (
            lambda c: c["alignment"]["data"].update(langs=["qab", "qac"]),
            "alignment",
            dict.fromkeys(AL, "the high-overlap language qaa is not in alignment.data.langs"),
        ),
        (
            lambda c: c["alignment"].update(layers=[6, 12]),
            "alignment",
            {AL[1]: "layer 0 (the embeddings) is not in alignment.layers"},
        ),
        (
            lambda c: c["dual"].update(baselines=False),
            "dual",
            {"training lowers the retrieval error": "dual.baselines is false: no untrained encoder to compare with"},
        ),
        (
            lambda c: c["dual"].update(objectives=["additive_margin"]),
            "dual",
            {
                "distillation beats the zero-shot teacher without overlap": (
                    "no distilled runs: mse_distill is not in dual.objectives"
                )
            },
        ),
        (
            lambda c: c["dual"]["distill"].update(evaluate_teacher=False),
            "dual",
            {
                "distillation beats the zero-shot teacher without overlap": (
                    "dual.distill.evaluate_teacher is false: no zero-shot teacher to compare with"
                )
            },
        ),
        (
            lambda c: c["sbert"].update(baselines=False),
            "sbert",
            {"training raises source-language STS": "sbert.baselines is false: no untrained model to compare with"},
        ),
        (
            lambda c: c["sbert"]["eval"].pop("sts"),
            "sbert",
            {"training raises source-language STS": "no en STS set in sbert.eval.sts"},
        ),
        (
            lambda c: c["monox"]["tasks"][0]["eval"].update(langs=["qaa", "qab"]),
            "monox",
            {"student accuracy in the source language": "en is not among the test languages of demo-sentiment"},
        ),
        (
            lambda c: c["adapt"].update(schemes=["6-12", "9-12"]),
            "adapt",
            {
                "training all layers costs the other languages most": (
                    'no scheme in adapt.schemes trains every layer of demo-mbert (e.g. "0-12")'
                )
            },
        ),
    ],
)
def test_a_check_the_sweep_cannot_answer_is_planned_as_not_run_with_the_reason(mutate, family, expected):
    config = copy.deepcopy(demo_config())
    mutate(config)
    spec = plan.spec(settings.validate(config))  # no config error: the demo's sweep may be cut down
    assert spec[family]["not_run"] == expected
    assert all(spec[other]["not_run"] == {} for other in plan.enabled_families(config) if other != family)


def test_monox_modes_the_sweep_lacks_are_planned_for_a_not_run_row():
    config = demo_config()
    config["monox"]["modes"] = ["finetune", "kd"]
    spec = plan.spec(settings.validate(config))
    assert spec["monox"]["modes"] == ["finetune", "kd"] and spec["monox"]["not_run"] == {}


def test_an_empty_world_is_a_config_error():
    config = settings.validate(demo_config())
    config["demo_world"] = {"languages": {}}
    with pytest.raises(XltError, match="positive_control: demo_world.languages is empty"):
        plan.check(config)
    with pytest.raises(XltError, match="not in demo_world.languages"):  # the demo data needs its languages too
        settings.validate(config)


def test_a_disabled_family_is_not_checked_and_not_required():
    config = demo_config()
    config["freeze_depth"] = {"enabled": False}
    config["alignment"]["enabled"] = False
    config = settings.validate(config)
    spec = plan.spec(config)
    assert "freeze_depth" not in spec and "alignment" not in spec and "dual" in spec
    assert "results/tables/freeze_depth.csv" not in plan.tables(config).values()


# ------------------------------------------------------------------ the verb


def write_inputs(tmp_path, tables):
    """Crafted tables as CSVs and the data files the job counts; returns the --spec JSON and --table args."""
    table_args = []
    for family, table in tables.items():
        path = tmp_path / f"{family}.csv"
        table.to_csv(path, index=False)
        table_args += ["--table", f"{family}={path}"]
    spec = crafted_spec()
    spec["freeze_depth"].pop("labels")
    spec["freeze_depth"]["label_files"] = []
    for lang in ("en", "qaa"):  # gold labels 0, 1, 2 over the two files: chance 1/3
        path = tmp_path / f"nli-{lang}.jsonl"
        write_jsonl(
            path, [{"text": "x", "text_pair": "y", "label": label} for label in ((0, 1) if lang == "en" else (2, 2))]
        )
        spec["freeze_depth"]["label_files"].append(str(path))
    spec["alignment"].pop("candidates")
    bitext = tmp_path / "bitext-qaa.jsonl"
    write_jsonl(bitext, [{"text": f"x{i}", "text_pair": f"y{i}"} for i in range(100)])  # chance 1/100
    spec["alignment"]["bitext_files"] = {"qaa": str(bitext)}
    return spec, table_args


def test_verb_passes_writes_the_table_and_prints_it(tmp_path, capsys):
    spec, table_args = write_inputs(tmp_path, crafted_tables())
    out = tmp_path / "positive_control.csv"
    assert cli.main(["positive-control", "--spec", json.dumps(spec), *table_args, "--out", str(out)]) == 0
    result = pd.read_csv(out)
    assert set(result["pass"]) == {PASS} and len(result) == 25  # 24 + the distilled student
    row = result[result.check == "high-overlap language above chance, nothing frozen"].iloc[0]
    assert row["expected"] == ">= chance 1/3 + 0.2 = 0.533"  # 3 labels counted from the data files
    assert "chance 1/100 = 0.100" in result[result.family == "alignment"].iloc[0]["expected"]  # 100 pairs counted
    printed = capsys.readouterr().out
    assert "positive control: 25 passed, 0 failed, 0 known failures, 0 not run" in printed and "FAILED" not in printed


def test_verb_exits_1_after_writing_the_table_when_a_check_fails(tmp_path, capsys):
    from test_positive_control import adapt_table

    spec, table_args = write_inputs(tmp_path, {**crafted_tables(), "adapt": adapt_table({("2-4", "qab"): 120})})
    out = tmp_path / "positive_control.csv"
    assert cli.main(["positive-control", "--spec", json.dumps(spec), *table_args, "--out", str(out)]) == 1
    result = pd.read_csv(out)
    assert list(result[result["pass"] == FAIL].subject) == ["m, scheme 2-4"]
    printed = capsys.readouterr().out
    assert "24 passed, 1 failed, 0 known failures, 0 not run" in printed
    failures = printed.split("FAILED (1)")[1].splitlines()[1:]
    assert failures == [
        "     NO  adapt: target perplexity falls [m, scheme 2-4]",
        "         expected < untouched 100.000 (qab test perplexity, the selected model); observed 120.000",
    ]


def test_a_known_failure_is_reported_but_fails_the_run_only_once_it_passes(tmp_path, capsys):
    from test_positive_control import adapt_table

    key = "adapt: target perplexity falls"
    spec, table_args = write_inputs(tmp_path, {**crafted_tables(), "adapt": adapt_table({("2-4", "qab"): 120})})
    spec["known_failures"] = {key: "issue 13"}
    out = tmp_path / "positive_control.csv"
    assert cli.main(["positive-control", "--spec", json.dumps(spec), *table_args, "--out", str(out)]) == 0
    result = pd.read_csv(out, keep_default_na=False)
    known = result[result["pass"] == FAIL]
    assert list(known.subject) == ["m, scheme 2-4"] and list(known.known_failure) == ["issue 13"]
    assert "24 passed, 0 failed, 1 known failures, 0 not run" in capsys.readouterr().out
    # another check failing still fails the run
    spec, table_args = write_inputs(tmp_path, {**crafted_tables(), "adapt": adapt_table({("2-4", "multilingual"): 75})})
    spec["known_failures"] = {key: "issue 13"}
    assert cli.main(["positive-control", "--spec", json.dumps(spec), *table_args, "--out", str(out)]) == 1
    # every row of the listed check passes: the stale entry fails the run and is named
    capsys.readouterr()
    spec, table_args = write_inputs(tmp_path, crafted_tables())
    spec["known_failures"] = {key: "issue 13"}
    assert cli.main(["positive-control", "--spec", json.dumps(spec), *table_args, "--out", str(out)]) == 1
    assert f"take them off positive_control.known_failures: {key}" in capsys.readouterr().out


def test_a_known_failure_must_name_a_check():
    config = demo_config()
    config["positive_control"] = {"enabled": True, "known_failures": {"sbert: trains well": "why"}}
    with pytest.raises(XltError, match="known_failures: 'sbert: trains well' names no check"):
        settings.validate(config)
    config["positive_control"]["known_failures"] = {"sbert: training raises source-language STS": "issue 13"}
    assert plan.spec(settings.validate(config))["known_failures"] == config["positive_control"]["known_failures"]


def test_verb_reports_a_family_without_spec_entry_as_not_run(tmp_path):
    tables = crafted_tables()
    del tables["sbert"]
    spec, table_args = write_inputs(tmp_path, tables)
    del spec["sbert"]
    out = tmp_path / "pc.csv"
    assert cli.main(["positive-control", "--spec", json.dumps(spec), *table_args, "--out", str(out)]) == 0
    result = pd.read_csv(out)
    assert list(result[result["pass"] == NOT_RUN].family) == ["sbert"]


def test_verb_missing_table_or_data_is_a_clear_error(tmp_path, capsys):
    spec, table_args = write_inputs(tmp_path, crafted_tables())
    (tmp_path / "dual.csv").unlink()
    out = tmp_path / "pc.csv"
    assert cli.main(["positive-control", "--spec", json.dumps(spec), *table_args, "--out", str(out)]) == 2
    assert f"{tmp_path / 'dual.csv'} not found: the dual checks read the dual family's table" in capsys.readouterr().err
    assert not out.exists()
    i = table_args.index(f"monox={tmp_path / 'monox.csv'}")
    no_monox = table_args[: i - 1] + table_args[i + 1 :]  # without "--table monox=..."
    (tmp_path / "dual.csv").write_text(crafted_tables()["dual"].to_csv(index=False))
    assert cli.main(["positive-control", "--spec", json.dumps(spec), *no_monox, "--out", str(out)]) == 2
    assert "no table for monox: pass --table monox=results/tables/monox.csv" in capsys.readouterr().err
    Path(spec["alignment"]["bitext_files"]["qaa"]).unlink()
    assert cli.main(["positive-control", "--spec", json.dumps(spec), *table_args, "--out", str(out)]) == 2
    assert "bitext-qaa.jsonl" in capsys.readouterr().err
    with pytest.raises(SystemExit) as usage_error:  # a usage error, before the verb runs
        cli.main(["positive-control", "--spec", "{}", "--table", "monox", "--out", str(out)])
    assert usage_error.value.code == 2
    assert "argument --table: 'monox': give FAMILY=CSV" in capsys.readouterr().err


def test_verb_with_a_config_reads_the_plans_tables(tmp_path, monkeypatch, capsys):
    config = demo_config()
    for name in settings.FAMILIES:
        config[name] = {"enabled": False}
    config_file = tmp_path / "c.yaml"
    config_file.write_text(yaml.safe_dump(config))
    monkeypatch.chdir(tmp_path)
    assert cli.main(["positive-control", "--config", str(config_file), "--out", "pc.csv"]) == 2
    assert "the sweep is empty" in capsys.readouterr().err  # nothing to check: a config error
    config["sbert"] = demo_config()["sbert"]
    config_file.write_text(yaml.safe_dump(config))
    assert cli.main(["positive-control", "--config", str(config_file), "--out", "pc.csv"]) == 2
    assert "results/tables/sbert.csv not found" in capsys.readouterr().err
