"""The paper overlay for a paper-config run: run tables built the way `xlt aggregate` builds them
(config nicknames in `model`, each family's own columns, metrics files carrying the axes the
plan gives its jobs), matched against the shipped published numbers through `xlt paper-delta`
with the arguments the workflow rule passes."""

from __future__ import annotations

import shlex
from pathlib import Path

import pandas as pd
import pytest

from xlt.cli import main
from xlt.core import settings
from xlt.core.metrics import MetricsFile
from xlt.report import paper, paper_overlay

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module", params=["paper", "rehearsal"])
def config(request):
    """config/paper.yaml, and the config `xlt rehearse` derives from it (its paper_delta.csv is
    the rehearsal's: the same models and axes, so the same published rows must match)."""
    import yaml

    from xlt.rehearse.derive import derive

    raw = yaml.safe_load((REPO / "config" / "paper.yaml").read_text())
    return settings.validate(derive(raw) if request.param == "rehearsal" else raw)


def _job_axes(config, family, rule):
    return [job.axes for job in settings.plan_module(family).jobs(config)[rule].values()]


def _write(tmp, family, run_id, axes, records):
    m = MetricsFile(family, run_id, axes=axes, meta={"model": "loaded/elsewhere"}, manifest=False)
    for metric, value, dims in records:
        m.add(metric, value, **dims)
    path = tmp / "runs" / family / run_id.replace("/", "_") / "metrics.json"
    m.write(path)
    return path


def _records(config, tmp):
    """family -> metrics files with the records each family's jobs write (values made up)."""
    files = {"freeze_depth": [], "sbert": [], "adapt": [], "monox": [], "dual": []}
    for i, axes in enumerate(_job_axes(config, "freeze_depth", "evaluate_xnli")):
        run_id = f"{axes['model']}-depth{axes['freeze_depth']}-seed{axes['seed']}"
        recs = [
            ("accuracy", 0.6 + i / 1000, {"lang": lang})  # no split: see eval.split
            for lang in config["freeze_depth"]["eval"]["langs"]
        ]  # every language evaluate_xnli scores
        recs.append(("accuracy", 0.6, {"lang": "avg"}))
        files["freeze_depth"].append(_write(tmp, "freeze_depth", run_id, axes, recs))
    for job in settings.plan_module("sbert").jobs(config)["eval_sbert"].values():
        axes = job.axes
        run_id = f"{axes['model']}-{axes['pooling']}-L{axes['layer']}-{axes['seed']}"
        # every English STS file the job scores (--sts, --dev-sts), dims from its path as eval-embeddings takes them
        sts = [Path(str(v)) for flag, v in zip(job.args, job.args[1:]) if flag in ("--sts", "--dev-sts")]
        recs = [
            (
                c,
                0.7 if path.stem == "test" else 0.75,
                {"similarity": s, "dataset": path.parts[-3], "lang": "en", "split": path.stem},
            )
            for path in sts
            if path.parts[-2] == "en"
            for c in ("pearson", "spearman")
            for s in ("cosine", "euclidean", "manhattan", "dot")
        ]
        recs += [("mean_accuracy@1", 0.3, {"dataset": "tatoeba", "lang": "deu", "split": "test"})]
        files["sbert"].append(_write(tmp, "sbert", run_id, axes, recs))
    for axes in _job_axes(config, "adapt", "adapt_mlm"):
        recs = [
            ("perplexity", 9.0, {"lang": lang, "split": "dev", "step": step})
            for lang in ("nl", "multilingual")
            for step in (0, 50, 100)
        ]
        recs += [("perplexity", 8.0, {"lang": "nl", "split": split}) for split in ("dev", "test")]
        files["adapt"].append(_write(tmp, "adapt", f"{axes['model']}-{axes['scheme']}-seed{axes['seed']}", axes, recs))
    for axes in _job_axes(config, "adapt", "adapt_reference_perplexity"):
        recs = [("perplexity", 20.0, {"lang": "nl", "split": split}) for split in ("dev", "test")]
        files["adapt"].append(_write(tmp, "adapt", f"reference-{axes['model']}", axes, recs))
    monox = _job_axes(config, "monox", "train_teacher") + _job_axes(config, "monox", "distill")
    for i, axes in enumerate(monox):
        langs = ["en"] if axes["mode"] == "teacher" else ["en", "de"]
        recs = [("accuracy", 0.8, {"lang": lang, "split": "test"}) for lang in langs]
        run_id = f"{i}-{axes['model']}-{axes['task']}-{axes['mode']}-{axes['size']}-seed{axes['seed']}"
        recs.append(("accuracy", 0.8, {"lang": "en", "split": "dev"}))
        files["monox"].append(_write(tmp, "monox", run_id, axes, recs))
    for run_id, job in settings.plan_module("dual").jobs(config)["tatoeba_dual"].items():
        # every STS file the job scores (--sts), one record per similarity, as eval-embeddings writes them
        sts = [Path(str(v)) for flag, v in zip(job.args, job.args[1:]) if flag == "--sts"]
        recs = [
            ("spearman", 0.5, {"similarity": s, "dataset": path.parts[-3], "lang": path.parts[-2], "split": path.stem})
            for path in sts
            for s in ("cosine", "euclidean", "manhattan", "dot")
        ]
        recs.append(("mean_error", 0.4, {"dataset": "tatoeba", "lang": "deu", "split": "test"}))
        files["dual"].append(_write(tmp, "dual", run_id, job.axes, recs))
    return files


@pytest.fixture(scope="module")
def delta(config, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("paper")
    tables = {}
    for family, files in _records(config, tmp).items():
        tables[family] = tmp / "tables" / f"{family}.csv"
        assert main(["aggregate", *map(str, files), "--out", str(tables[family])]) == 0
    assert "split" not in pd.read_csv(tables["freeze_depth"]).columns  # the defect this guards against
    assert set(pd.read_csv(tables["freeze_depth"]).model) == {"mbert", "mbert-uncased"}
    out = tmp / "paper_delta.csv"
    args = [f"{family}={path}" for family, path in tables.items()] + shlex.split(paper.config_args(config))
    assert main(["paper-delta", *args, "--out-table", str(out), "--out-plot", str(tmp / "overlay.png")]) == 0
    return pd.read_csv(out, dtype={"run_id": str})


def _rows(delta, family, **setting):
    rows = delta[delta.family == family]
    for key, value in setting.items():
        rows = rows[rows.setting.str.contains(f"{key}={value}(?:;|$)", regex=True)]
    return rows


def test_every_published_number_has_a_row(delta):
    for family in paper.published_families():
        published = paper.load(family)
        rows = delta[delta.family == family]
        assert len(rows[["setting", "lang", "metric"]].drop_duplicates()) == len(published)
        assert set(rows.matched) <= {"yes", "no"}
        assert rows[rows.matched == "no"].reason.str.len().min() > 10 if (rows.matched == "no").any() else True
        # an unmatched number is one row; a matched one is one row per matching run
        unmatched = rows[rows.matched == "no"]
        assert not unmatched.duplicated(["setting", "lang", "metric"]).any()


def test_the_cased_mbert_rows_match_through_the_loaded_model(delta):
    sbert = _rows(delta, "sbert", split="test")
    assert len(sbert) == 8 and set(sbert.matched) == {"yes"}
    assert set(sbert.run_id) == {"mbert-mean-L-1-1"}  # the published layer: not L-2, not untrained
    assert sbert.delta.tolist() == pytest.approx((0.7 - sbert.theirs).tolist())
    test = _rows(delta, "adapt", split="test")
    matched = test[test.matched == "yes"]
    schemes = {"0-12", "6-12", "9-12", "11-12", "gradual-start4-step4-every1epochs", "pre-trained"}
    assert set(matched.setting.str.extract(r"scheme=([^;]+)")[0]) == schemes
    assert len(matched[matched.setting.str.contains("scheme=0-12")]) == 3  # three seeds, three rows
    assert set(matched[matched.setting.str.contains("pre-trained")].run_id) == {"reference-bertje"}
    teacher = _rows(delta, "monox", model="roberta-large", task="xnli")
    assert set(teacher.matched) == {"yes"} and len(teacher) == 3
    student = _rows(delta, "monox", model="bert-base-multilingual-cased", task="xnli")
    assert set(student.matched) == {"yes"} and len(student) == 3 and student.run_id.str.contains("finetune").all()


def test_the_published_uncased_xnli_numbers_match_the_uncased_anchor_runs(delta):
    """The depth -1 anchor of freeze_depth (issue 35, item 6): the published zero-shot XNLI rows
    are the uncased mBERT's, and config/paper.yaml sweeps it at depth -1 beside the cased model:
    each of the six published languages matches the three seeds' runs, and no cased run."""
    uncased = _rows(delta, "freeze_depth", model="bert-base-multilingual-uncased", freeze_depth=-1)
    assert set(uncased.matched) == {"yes"}, uncased.reason.tolist()
    assert len(uncased) == 6 * 3 and sorted(set(uncased.lang)) == ["ar", "de", "en", "es", "ur", "zh"]
    assert set(uncased.run_id) == {f"mbert-uncased-depth-1-seed{seed}" for seed in (1, 2, 3)}  # this file's ids
    assert len(_rows(delta, "freeze_depth")) == len(uncased)  # every published freeze_depth number matched


def test_unmatched_rows_say_why(delta):
    monolingual = _rows(delta, "monox", model="roberta-base")
    assert monolingual.reason.str.startswith("different model").all()
    steps = _rows(delta, "adapt", step=501)  # our made-up runs evaluate at steps 0, 50 and 100 only
    assert set(steps.matched) == {"no"}
    assert steps.reason.str.startswith("no run with that setting (published step=501 is our step 500; ").all()
    step_mix = _rows(delta, "adapt", step=1501)
    assert step_mix.reason.str.contains("ours: 0, 50, 100").all()  # validation -> dev and xnli-mix -> multilingual


def test_the_published_sts_validation_numbers_match_our_dev_rows(delta):
    """Seed 000's "Validation set performance" block (STS-b dev): eval_sbert scores sbert.dev's STS
    set too (--dev-sts), so its rows carry split dev, like the published rows' split=validation."""
    dev = _rows(delta, "sbert", split="dev")
    assert len(dev) == 8 and set(dev.matched) == {"yes"}, dev.reason.tolist()
    assert set(dev.run_id) == {"mbert-mean-L-1-1"}
    assert dev.delta.tolist() == pytest.approx((0.75 - dev.theirs).tolist())
    test = _rows(delta, "sbert", split="test")
    assert test.delta.tolist() == pytest.approx((0.7 - test.theirs).tolist())  # the test rows stay the test set's


def test_the_published_first_step_is_our_step_0(delta):
    """Seed 003's Table 1 counts steps from 1 ("#1, #501, #1501", measured every 50 steps): #1 is
    the untouched model, our step 0, in Dutch and on the pooled XNLI set, once per seed."""
    first = _rows(delta, "adapt", step=1)
    assert len(first) == 6 and set(first.matched) == {"yes"}
    assert sorted(first.lang) == ["nl"] * 3 + ["xnli-mix"] * 3
    assert first.run_id.str.startswith("mbert-0-12-seed").all()  # scheme 0-12, three seeds
    assert first.note.str.contains("published step #1 \\(1-based\\) is our step 0").all()
    assert first.delta.tolist() == pytest.approx((9.0 - first.theirs).tolist())


def test_the_published_cls_number_is_the_mean_over_our_three_domains(delta):
    """Seed 002's Table 1 averages CLS over its three domains; our table has one task per domain."""
    for model, mode in (("roberta-large", "teacher"), ("bert-base-multilingual-cased", "finetune")):
        cls = _rows(delta, "monox", model=model, task="cls")
        assert len(cls) == 3 and set(cls.matched) == {"yes"}, cls.reason.tolist()  # one per seed
        assert cls.run_id.str.count("cls-books|cls-dvd|cls-music").eq(3).all()
        assert cls.run_id.str.contains(f"-{mode}-").all() and cls.note.str.startswith("mean over 3 domain rows").all()
        assert cls.ci_low.isna().all() and cls.ci_high.isna().all()
        assert cls.ours.tolist() == pytest.approx([0.8] * 3)


def test_the_published_untrained_mbert_sts2017_numbers_match_the_dual_baseline(delta):
    """The anchor of dual's untrained baselines (issue 35, item 6): Reimers & Gurevych's mBERT mean
    pooling on STS 2017 (extended), AR-AR, ES-ES and EN-EN, is our untrained mean-pooled mBERT on
    the same sets (config dual.sts); the paper names no similarity, so each of ours is a row, noted."""
    mbert = _rows(delta, "dual", model="bert-base-multilingual-cased")
    languages = mbert[mbert.lang != "avg"]
    assert set(languages.matched) == {"yes"}, languages.reason.tolist()
    assert sorted(set(languages.lang)) == ["ar", "en", "es"] and len(languages) == 3 * 4
    assert set(languages.run_id) == {"mbert-mean-untrained"}
    for _, rows in languages.groupby("lang"):
        assert sorted(rows.note.str.extract(r"similarity=(\w+)")[0]) == ["cosine", "dot", "euclidean", "manhattan"]
    assert languages.note.str.endswith("(the paper names none)").all()
    assert languages.delta.tolist() == pytest.approx((0.5 - languages.theirs).tolist())
    # its average is over ten columns, seven of them cross-lingual pairs: no row of ours is that
    average = mbert[mbert.lang == "avg"]
    assert len(average) == 1 and average.reason.iloc[0].startswith("no run in that language")
    for other in ("labse", "laser", "distiluse-base-multilingual-cased"):
        rows = _rows(delta, "dual", model=other)
        assert set(rows.matched) == {"no"} and rows.reason.str.startswith("different model").all()


def test_the_overlay_draws_matched_rows_only_and_says_why_when_none(delta, tmp_path):
    fig = paper_overlay.overlay_plot(delta, tmp_path / "o.png")
    published = [line for line in fig.axes[0].lines if line.get_label() == "published"]
    assert len(fig.axes[0].get_yticks()) == (delta.matched == "yes").sum() and published
    nothing = delta[delta.matched == "no"]
    fig = paper_overlay.overlay_plot(nothing, tmp_path / "n.png")
    text = fig.axes[0].texts[0].get_text()
    assert f"none of the {len(nothing)} published numbers" in text and "different model" in text


def test_a_demo_run_lists_every_published_number_unmatched(tmp_path):
    delta = paper.compare({}, demo=True)
    assert len(delta) == sum(len(paper.load(f)) for f in paper.published_families())
    assert set(delta.matched) == {"no"} and delta.reason.str.startswith("demo run").all()
    fig = paper_overlay.overlay_plot(delta, tmp_path / "o.png", demo=True)
    assert "demo run" in fig.axes[0].texts[0].get_text()


def test_the_rule_passes_what_each_config_name_loads(config):
    args = shlex.split(paper.config_args(config))
    assert "mbert=bert-base-multilingual-cased" in args and "roberta-large=FacebookAI/roberta-large" in args
    assert "freeze_depth=test" in args
    assert paper.loaded_name("FacebookAI/roberta-large@abc123", "roberta-large")
    assert not paper.loaded_name("someone/roberta-large", "FacebookAI/roberta-large")
    assert paper.split_name("validation") == "dev"


def test_an_interval_that_leaves_out_our_mean_draws_an_empty_whisker(delta, tmp_path):
    """A mean over seeds beside the mean of their bounds can lie outside them (issue 49: the paper
    config on synthetic metrics crashed the overlay with matplotlib's negative-xerr error)."""
    matched = delta[delta.matched == "yes"].head(1).assign(ours=0.5, ci_low=0.6, ci_high=0.7)
    fig = paper_overlay.overlay_plot(matched, tmp_path / "o.png")
    ((segment,),) = [c.get_segments() for c in fig.axes[0].collections if c.get_segments()]
    assert [round(x, 6) for x, _ in segment] == [0.5, 0.7]  # nothing below 0.5, up to ci_high
