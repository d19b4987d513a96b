"""The rehearsal's stand-ins load through the real code paths with HF_HUB_OFFLINE=1: models by
their hub ids (same architecture class and depth), hub datasets by id, config name and split
(slices included), BUCC in mteb's one-row shape, CLS in its published layout."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from xlt.core.errors import XltError
from xlt.core.settings import validate
from xlt.rehearse import datasets, models
from xlt.rehearse.derive import derive

OFFLINE = {"HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}


def offline_python(cache: Path, code: str, cwd: Path | None = None) -> dict:
    """Run `code` in a fresh interpreter pointed at `cache` and offline; it prints one JSON line."""
    env = {**os.environ, **OFFLINE, "HF_HUB_CACHE": str(cache / "hub"), "HF_DATASETS_CACHE": str(cache / "datasets")}
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, cwd=cwd)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_model_standins_have_the_real_architecture_and_depth_under_the_hub_id(tmp_path):
    models.write_model(tmp_path / "hub", "bert-base-multilingual-cased", None, 12, ["en", "de"])
    models.write_model(tmp_path / "hub", "FacebookAI/roberta-large", "v1.0", 24, ["en"])
    out = offline_python(
        tmp_path,
        """
import json
from xlt.core.models import load_encoder, load_tokenizer
from xlt.rehearse.text import vocabulary
out = {}
for ref in ("bert-base-multilingual-cased", "FacebookAI/roberta-large@v1.0"):
    model, tok = load_encoder(ref), load_tokenizer(ref)
    ids = tok(" ".join(vocabulary("en")[:5]))["input_ids"]
    out[ref] = [type(model).__name__, model.config.num_hidden_layers, tok.unk_token_id in ids, len(ids)]
print(json.dumps(out))
""",
    )
    assert out == {
        "bert-base-multilingual-cased": ["BertModel", 12, False, 7],
        "FacebookAI/roberta-large@v1.0": ["RobertaModel", 24, False, out["FacebookAI/roberta-large@v1.0"][3]],
    }


def test_an_architecture_without_a_stand_in_is_refused_by_name():
    with pytest.raises(XltError, match="xlm-roberta-base"):
        models.architecture("FacebookAI/xlm-roberta-base")


def test_dataset_standins_load_through_the_hub_loader_offline(tmp_path):
    paper = {
        "models": {"m": {"source": "hub", "path": "bert-base-multilingual-cased", "layers": 12}},
        "datasets": {
            "xnli": {
                "source": "hf",
                "task": "nli",
                "path": "facebook/xnli",
                "name": "{lang}",
                "languages": ["en", "de"],
                "splits": {"train": ["en"], "test": "all"},
                "columns": {"text": "premise", "text_pair": "hypothesis", "label": "label"},
                "item_aligned": True,
            },  # as config/paper.yaml: the stand-in must be one item list too
            "xnli-validation": {
                "source": "hf",
                "task": "nli",
                "path": "facebook/xnli",
                "name": "{lang}",
                "languages": ["en", "de"],
                "splits": {"dev": "all"},
                "split_names": {"dev": "validation"},
                "columns": {"text": "premise", "text_pair": "hypothesis", "label": "label"},
            },
            "wiki": {
                "source": "hf",
                "task": "corpus",
                "path": "wikimedia/wikipedia",
                "name": "20231101.{lang}",
                "languages": ["nl"],
                "splits": ["train", "test"],
                "sentences": {"pool": "train[:40000]", "sizes": {"train": 80000, "test": 10000}},
                "columns": {"text": "text"},
            },
        },
    }
    config = validate(derive(paper))
    assert datasets.write_hf_datasets(config, tmp_path / "datasets") == 3  # xnli en, de (both datasets), wiki nl
    models.write_model(tmp_path / "hub", "bert-base-multilingual-cased", None, 12, ["en"])
    out = offline_python(
        tmp_path,
        f"""
import json
from xlt.core.prefetch import missing
from xlt.data.sources import load_records
config = json.loads({json.dumps(json.dumps(config))})
from xlt.data.prepare import prepare
counts = {{f"{{name}}/{{lang}}/{{split}}": len(load_records(name, config["datasets"][name], lang, split))
          for name, lang, split in [("xnli", "en", "train"), ("xnli", "de", "test"), ("xnli-validation", "de", "dev")]}}
# the stand-in articles hold several sentences each: the seed's sentence draw, scaled, runs offline
counts.update({{f"wiki/{{key}}": n
               for key, n in prepare("wiki", config["datasets"]["wiki"], "{tmp_path}/data")["counts"].items()}})
first = load_records("xnli", config["datasets"]["xnli"], "en", "train")[0]
from xlt.data.item_alignment import check_aligned
check_aligned("xnli", {{(lang, "test"): load_records("xnli", config["datasets"]["xnli"], lang, "test")
                       for lang in ("en", "de")}})
print(json.dumps({{"counts": counts, "fields": sorted(first),
                  "missing": missing(config, __import__("pathlib").Path("{tmp_path}"))}}))
""",
    )
    assert out["counts"] == {
        "xnli/en/train": 300,
        "xnli/de/test": 60,
        "xnli-validation/de/dev": 60,
        "wiki/nl/train": 320,
        "wiki/nl/test": 40,
    }
    assert out["fields"] == ["label", "text", "text_pair"]
    assert out["missing"] == []  # the offline cache check (`xlt prefetch --check`) finds every load


def test_bucc_standin_has_mtebs_one_row_shape_and_one_based_gold(tmp_path):
    mining = {"source": "hf", "path": "mteb/bucc-bitext-mining", "pairs": ["de-en"], "hub_split": "test"}
    assert datasets.write_bucc(mining, tmp_path / "datasets") == 1
    out = offline_python(
        tmp_path,
        """
import json
from xlt.data.bucc_files import load_bucc_from_hub
data = load_bucc_from_hub("de-en")
text = dict(zip(data.src_ids, data.src_sentences)), dict(zip(data.tgt_ids, data.tgt_sentences))
same = [len(text[0][s].split()) == len(text[1][t].split()) for s, t in data.gold]
print(json.dumps([len(data.src_ids), len(data.tgt_ids), len(data.gold), all(same)]))
""",
    )
    assert out == [datasets.BUCC_SOURCES, datasets.BUCC_TARGETS, datasets.BUCC_GOLD, True]


def test_cls_standin_is_read_by_the_cls_reader_with_balanced_labels(tmp_path):
    from xlt.data.cls import load_cls

    spec = {
        "source": "local",
        "task": "sentiment",
        "format": "cls",
        "files": "data/cls",
        "domain": "dvd",
        "languages": ["en", "ja"],
        "splits": {"train": ["en"], "unlabeled": ["en"], "test": "all"},
    }
    assert datasets.write_local({"datasets": {"cls-dvd": spec}}, tmp_path) == 1
    train = load_cls(tmp_path / "data" / "cls", "en", "dvd", "train")
    assert len(train) == datasets.ROWS["train"] and sum(r["label"] for r in train) == len(train) // 2
    assert (tmp_path / "data" / "cls" / "jp" / "dvd" / "test.review").is_file()  # ja lives in jp/
    assert len(load_cls(tmp_path / "data" / "cls", "en", "dvd", "unlabeled")) == datasets.ROWS["unlabeled"]
