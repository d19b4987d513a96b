"""End-to-end runs of `xlt align` on a tiny random BERT saved in tmp_path, and its verb."""

import csv
import json

import pytest
from helpers.bag_of_words import sentence

from xlt import cli
from xlt.core.metrics import examples_path, read_examples
from xlt.families.alignment.align import layer_table
from xlt.families.alignment.commands import VERBS


def write_jsonl(path, rows):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


def test_align_verb_is_registered_and_every_flag_has_help():
    assert cli.verbs()["align"] is VERBS["align"]
    parser = cli.build_parser("align")
    (sub,) = [a for a in parser._actions if a.dest == "verb"]
    flags = [a for a in sub.choices["align"]._actions if a.dest != "help"]
    assert {a.dest for a in flags} >= {"model", "bitext", "layers", "center", "tsne_layers", "out_metrics", "out_plots"}
    assert [a.dest for a in flags if not a.help] == []


def test_align_end_to_end(tmp_path, bag_of_words_bert):
    n = 12
    # "deu": each English side is the same text -> identical vectors -> accuracy 1 at every layer
    write_jsonl(
        tmp_path / "data" / "deu" / "test.jsonl", [{"text": sentence(i), "text_pair": sentence(i)} for i in range(n)]
    )
    write_jsonl(
        tmp_path / "data" / "fra" / "test.jsonl",
        [{"text": sentence(i), "text_pair": sentence(i + 20)} for i in range(n)],
    )
    out = tmp_path / "out"
    rc = cli.main(
        [
            "align",
            "--model",
            str(bag_of_words_bert),
            "--bitext",
            str(tmp_path / "data" / "deu" / "test.jsonl"),
            "--bitext",
            str(tmp_path / "data" / "fra" / "test.jsonl"),
            "--layers",
            "all",
            "--center",
            "--tsne-layers",
            "0,2",
            "--tsne-sample",
            "6",
            "--axes",
            '{"source": "pretrained", "source_run": ""}',
            "--run-id",
            "pretrained-tiny",
            "--out-metrics",
            str(out / "metrics.json"),
            "--out-table",
            str(out / "layers.csv"),
            "--out-plots",
            str(out / "plots"),
        ]
    )
    assert rc == 0
    metrics = json.loads((out / "metrics.json").read_text())
    gaps = [r for r in metrics["metrics"] if r["metric"].startswith("cosine_gap")]
    records = [r for r in metrics["metrics"] if r["metric"].startswith("bitext_retrieval_acc")]
    assert len(records) == 3 * 2 * 2 * 2  # layers x directions x langs x (raw, centred)
    assert len(gaps) == len(metrics["metrics"]) - len(records) == 3 * 2 * 2  # layers x langs x (raw, centred)
    # "deu" has identical sides: its raw gap is 1 minus the mean cosine of its random pairs, below 1
    assert all(0 < r["value"] < 1 for r in gaps if r["lang"] == "deu" and r["metric"] == "cosine_gap")
    assert {one["kind"] for one in read_examples(examples_path(out / "metrics.json"))} == {"retrieval", "cosine_gap"}
    deu = [r for r in records if r["lang"] == "deu"]
    assert {r["value"] for r in deu} == {1.0}
    assert {(r["layer"], r["direction"]) for r in records} == {
        (layer, d) for layer in range(3) for d in ("xx->en", "en->xx")
    }
    meta = metrics["meta"]
    assert (
        meta["bitexts"]["fra"]["pairs"] == n and meta["family"] == "alignment" and meta["run_id"] == "pretrained-tiny"
    )
    assert meta["axes"] == {"source": "pretrained", "source_run": "", "match": "index"}  # the retrieval rule
    assert meta["layers"] == [0, 1, 2] and meta["center"] is True
    assert meta["cosine_gap"] == {"random_pairs": "sattolo_derangement", "seed": 0}
    assert meta["projection"] == {"layers": [0, 2], "sample": 6, "method": ["tsne", "tsne"]}
    rows = list(csv.DictReader((out / "layers.csv").open()))
    assert [r["layer"] for r in rows] == ["0", "1", "2"]
    for rec in records:
        column = f"{rec['lang']} {rec['direction']}" + (" centered" if rec["metric"].endswith("_centered") else "")
        assert float(rows[rec["layer"]][column]) == pytest.approx(rec["value"], abs=5e-5)
    assert sorted(p.name for p in (out / "plots").iterdir()) == ["retrieval_by_layer.png", "tsne_layers.png"]


def test_align_rejects_bad_input_before_loading(tmp_path, bag_of_words_bert, capsys):
    bitext = tmp_path / "deu" / "test.jsonl"
    write_jsonl(bitext, [{"text": sentence(i), "text_pair": sentence(i)} for i in range(3)])
    base = [
        "align",
        "--model",
        str(bag_of_words_bert),
        "--bitext",
        str(bitext),
        "--out-metrics",
        str(tmp_path / "m.json"),
    ]
    assert cli.main(base + ["--layers", "0,3"]) == 2
    assert "between 0 (embeddings) and 2" in capsys.readouterr().err
    assert cli.main(base + ["--langs", "deu,fra"]) == 2
    assert "one code per file" in capsys.readouterr().err
    assert cli.main(base + ["--tsne-layers", "1"]) == 2
    assert "--out-plots" in capsys.readouterr().err
    assert cli.main(base + ["--tsne-sample", "1"]) == 2
    assert "--tsne-sample must be at least 2" in capsys.readouterr().err
    assert not (tmp_path / "m.json").exists()


def test_layer_table_has_a_column_per_language_direction_and_variant():
    records = [
        {"metric": "bitext_retrieval_acc", "lang": "deu", "layer": 1, "direction": "xx->en", "value": 0.5},
        {"metric": "bitext_retrieval_acc", "lang": "deu", "layer": 0, "direction": "xx->en", "value": 0.25},
        {"metric": "bitext_retrieval_acc_centered", "lang": "deu", "layer": 1, "direction": "xx->en", "value": 2 / 3},
    ]
    assert layer_table(records) == "layer,deu xx->en,deu xx->en centered\n0,0.2500,\n1,0.5000,0.6667\n"
