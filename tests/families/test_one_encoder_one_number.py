"""Issue 35, item 4: one encoder on one test set gives one number in every family's table.

The sbert family scores the untrained encoder and its trained runs; the dual family scores the
same untrained encoder (its baseline) and the sbert run it distils from (its teacher row) on the
same Tatoeba and STS files. Both run `xlt eval-embeddings` with the arguments their plans give;
the numbers they write must agree, which needs one evaluation length (`evaluation.max_length`),
not each family's training length.
"""

import json
import shutil
from pathlib import Path

import pytest

from xlt import cli
from xlt.core.io import read_json
from xlt.core.settings import validate
from xlt.data import demo
from xlt.families.dual import plan as dual
from xlt.families.sbert import plan as sbert

LANGS = ["qaa", "qab"]
SBERT_LENGTH, DUAL_LENGTH = 32, 12  # each family's training length: neither may decide the evaluation's


def config() -> dict:
    bitext = {
        "source": "demo",
        "task": "bitext",
        "languages": LANGS,
        "splits": ["train", "dev", "test"],
        "sizes": {"train": 8, "dev": 8, "test": 12},
    }
    return validate(
        {
            "models": {"tiny": {"source": "demo", "layers": 2, "hidden_size": 32}},
            "datasets": {
                "nli": {
                    "source": "demo",
                    "task": "nli",
                    "languages": ["en"],
                    "splits": {"train": ["en"]},
                    "sizes": {"train": 8},
                },
                "sts": {
                    "source": "demo",
                    "task": "sts",
                    "languages": ["en", *LANGS],
                    "splits": {"dev": ["en"], "test": "all"},
                    "sizes": {"dev": 8, "test": 12},
                },
                "bt": bitext,
            },
            "training": {"max_steps": 2, "max_length": SBERT_LENGTH},
            "sbert": {
                "models": ["tiny"],
                "poolings": ["mean"],
                "layers": [-1],
                "depths": [-1],
                "seeds": [1],
                "train": {"dataset": "nli", "lang": "en"},
                "dev": {"dataset": "sts", "lang": "en"},
                "eval": {"bitext": {"dataset": "bt", "langs": LANGS}, "sts": {"dataset": "sts", "langs": LANGS}},
            },
            "dual": {
                "models": ["tiny"],
                "poolings": ["mean"],
                "train": {"dataset": "bt", "langs": LANGS},
                "tatoeba": {"dataset": "bt", "langs": LANGS},
                "sts": {"dataset": "sts", "langs": LANGS},
                "objectives": ["additive_margin", "mse_distill"],
                "distill": {"teacher": {"sbert_run": "tiny-mean-L-1-depthnone-seed1"}},
                "training": {"max_length": DUAL_LENGTH},
            },
        }
    )


def scoring(job) -> dict:
    """What decides an eval-embeddings job's vectors: the model, how it is pooled, the prompt, the length."""
    args = [str(a) for a in job.args]
    flags = dict(zip(args, args[1:]))
    return {
        "model": flags["--model"],
        "pooling": flags.get("--pooling", "mean"),
        "layer": flags.get("--layer", "-1"),
        "prompt": flags.get("--prompt", ""),
        "max_length": flags["--max-length"],
    }


def test_the_teacher_row_and_the_sbert_run_are_scored_alike():
    plans = config()
    teacher = dual.jobs(plans)["tatoeba_dual"]["teacher-tiny-mean-L-1-depthnone-seed1"]
    run = sbert.jobs(plans)["eval_sbert"]["tiny-mean-L-1-depthnone-seed1"]
    assert scoring(teacher) == scoring(run)
    assert scoring(run)["max_length"] == str(plans["evaluation"]["max_length"])


def _write_long_sentences(path: Path, records: list[dict]) -> None:
    """Three demo sentences joined into one, so each side runs past the shorter training length."""
    path.parent.mkdir(parents=True, exist_ok=True)
    joined = [
        {
            **records[i],
            "text": " ".join(r["text"] for r in records[i : i + 3]),
            "text_pair": " ".join(r["text_pair"] for r in records[i : i + 3]),
        }
        for i in range(len(records))
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in joined))


@pytest.fixture
def planned_inputs(tmp_path, monkeypatch, demo_model_dir):
    """The plans' model and data paths, under tmp_path: a small demo encoder and long demo sentences."""
    monkeypatch.chdir(tmp_path)
    shutil.copytree(demo_model_dir, "results/models/tiny")
    for lang in LANGS:
        _write_long_sentences(Path(f"results/data/bt/{lang}/test.jsonl"), demo.generate("bitext", lang, "test", 12, 1))
        _write_long_sentences(Path(f"results/data/sts/{lang}/test.jsonl"), demo.generate("sts", lang, "test", 12, 1))
    # sbert's dev STS set, scored for intervals only
    _write_long_sentences(Path("results/data/sts/en/dev.jsonl"), demo.generate("sts", "en", "dev", 8, 1))


def _numbers(path: str) -> dict:
    keys = ("metric", "dataset", "lang", "split", "direction", "similarity")
    return {tuple(rec.get(k) for k in keys): rec["value"] for rec in read_json(path)["metrics"]}


def test_the_untrained_encoder_gets_one_number_in_sbert_and_dual(planned_inputs, demo_model_dir):
    from xlt.core.models import load_tokenizer

    plans = config()
    jobs = {
        "sbert": sbert.jobs(plans)["eval_sbert"]["tiny-mean-L-1-untrained"],
        "dual": dual.jobs(plans)["tatoeba_dual"]["tiny-mean-untrained"],
    }
    tokenizer = load_tokenizer(str(demo_model_dir))
    longest = max(
        len(tokenizer(json.loads(line)["text"])["input_ids"])
        for line in Path("results/data/bt/qaa/test.jsonl").read_text().splitlines()
    )
    assert longest > DUAL_LENGTH  # truncation at either family's training length would change the vectors
    for job in jobs.values():
        assert cli.main(["eval-embeddings", *map(str, job.args)]) == 0
    sbert_numbers, dual_numbers = (_numbers(job.args[-1]) for job in jobs.values())
    shared = sorted(set(sbert_numbers) & set(dual_numbers))
    assert {key[0] for key in shared} >= {"spearman", "pearson", "accuracy@1", "error"}, shared  # STS and Tatoeba
    assert [sbert_numbers[key] for key in shared] == [dual_numbers[key] for key in shared]
