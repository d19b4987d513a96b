"""Published labels that name our rows otherwise (xlt.report.paper_match), against the shipped
published numbers: seed 003's 1-based steps and seed 002's CLS mean over three domains."""

from __future__ import annotations

import pandas as pd
import pytest

from xlt.report import paper

MBERT = {"mbert": "bert-base-multilingual-cased", "roberta-large": "FacebookAI/roberta-large"}


def _adapt(steps, seeds=(1, 2), text_unit="sentence"):
    rows = []
    for seed in seeds:
        for step in steps:
            for lang, base in (("nl", 10.0), ("multilingual", 6.0)):
                rows.append(
                    {
                        "family": "adapt",
                        "run_id": f"mbert-layers0-12-seed{seed}",
                        "model": "mbert",
                        "scheme": "0-12",
                        "seed": float(seed),
                        "role": "adapted",
                        "text_unit": text_unit,
                        "lang": lang,
                        "step": float(step),
                        "split": "dev",
                        "metric": "perplexity",
                        "value": base + step / 1000 + seed,
                        "ci_low": base - 1,
                        "ci_high": base + 9,
                    }
                )
    return pd.DataFrame(rows)


def test_published_steps_1_501_1501_are_our_steps_0_500_1500():
    delta = paper.deltas(_adapt(range(0, 1551, 50)), "adapt", models=MBERT)
    curve = delta[delta.setting.str.contains("step=")]
    assert set(curve.matched) == {"yes"} and len(curve) == 12  # 3 steps x 2 sets x 2 seeds
    for published, ours in ((1, 0), (501, 500), (1501, 1500)):
        rows = curve[curve.setting.str.endswith(f"step={published}")]
        expected = [
            (10.0 if lang == "nl" else 6.0) + ours / 1000 + int(run[-1]) for lang, run in zip(rows.lang, rows.run_id)
        ]
        assert rows.ours.tolist() == pytest.approx(expected)
        assert rows.note.str.contains(f"published step #{published} \\(1-based\\) is our step {ours}").all()
        assert rows.ci_low.notna().all()  # the step's own interval is kept


def test_a_run_that_stops_before_a_published_step_says_which_step_it_needed():
    delta = paper.deltas(_adapt([0, 50, 100]), "adapt", models=MBERT)
    late = delta[delta.setting.str.contains("step=1501")]
    assert set(late.matched) == {"no"}
    assert late.reason.str.startswith(
        "no run with that setting (published step=1501 is our step 1500; ours: 0, 50, 100)"
    ).all()
    assert set(delta[delta.setting.str.endswith("step=1")].matched) == {"yes"}


def test_runs_on_articles_match_no_number_published_for_sentences():
    """Seed 003 trained and scored on Wikipedia sentences (A.1): a run on whole articles has other
    steps and perplexities, so none of its rows stands beside those numbers."""
    delta = paper.deltas(_adapt(range(0, 1551, 50), text_unit="document"), "adapt", models=MBERT)
    curve = delta[delta.setting.str.contains("step=")]
    assert len(curve) == 6 and set(curve.matched) == {"no"}
    assert curve.reason.str.startswith("no run with that setting (text_unit=sentence; ours: document)").all()


def _monox(domains, value):
    rows = []
    for task in domains:
        for seed in (1, 2):
            run = f"mbert-{task}-finetune-nall-seed{seed}"
            for lang, split in (("en", "test"), ("de", "test"), ("en", "dev")):
                rows.append(
                    {
                        "family": "monox",
                        "run_id": run,
                        "model": "mbert",
                        "task": task,
                        "mode": "finetune",
                        "student": "mbert",
                        "teacher": None,
                        "size": "all",
                        "temperature": None,
                        "seed": seed,
                        "headline": True,
                        "lang": lang,
                        "split": split,
                        "metric": "accuracy",
                        "value": value[task] + seed / 100,
                        "ci_low": 0.1,
                        "ci_high": 0.99,
                    }
                )
    return pd.DataFrame(rows)


def test_the_cls_number_is_the_mean_over_the_three_domains_without_an_interval():
    value = {"cls-books": 0.80, "cls-dvd": 0.90, "cls-music": 0.70, "xnli": 0.5}
    delta = paper.deltas(_monox(value, value), "monox", models=MBERT)
    cls = delta[delta.setting.str.contains("model=bert-base-multilingual-cased;task=cls")]
    assert set(cls.matched) == {"yes"} and len(cls) == 2  # one per seed; en test only
    assert cls.ours.tolist() == pytest.approx([0.81, 0.82])
    assert cls.delta.tolist() == pytest.approx([0.81 - 0.8637, 0.82 - 0.8637])
    assert cls.ci_low.isna().all() and cls.ci_high.isna().all()
    assert cls.run_id.iloc[0] == (
        "mbert-cls-books-finetune-nall-seed1+mbert-cls-dvd-finetune-nall-seed1+mbert-cls-music-finetune-nall-seed1"
    )
    assert cls.note.iloc[0] == (
        "mean over 3 domain rows (task cls-books, cls-dvd, cls-music); no interval for the mean"
    )
    xnli = delta[delta.setting.str.contains("model=bert-base-multilingual-cased;task=xnli")]
    assert set(xnli.matched) == {"yes"} and xnli.note.isna().all()


def test_a_missing_domain_is_named_and_nothing_is_averaged():
    value = {"cls-books": 0.80, "cls-dvd": 0.90}
    delta = paper.deltas(_monox(value, value), "monox", models=MBERT)
    cls = delta[delta.setting.str.contains("model=bert-base-multilingual-cased;task=cls")]
    assert cls.matched.tolist() == ["no"] and cls.ours.isna().all()
    assert cls.reason.iloc[0] == (
        "no run with every domain of that setting (task=cls is the mean over "
        "cls-books, cls-dvd, cls-music; missing: cls-music)"
    )
    none = paper.deltas(_monox({"xnli": 0.5}, {"xnli": 0.5}), "monox", models=MBERT)
    reason = none[none.setting.str.contains("model=bert-base-multilingual-cased;task=cls")].reason.iloc[0]
    assert reason == "no run with that setting (task=cls, the mean over cls-books, cls-dvd, cls-music; ours: xnli)"
