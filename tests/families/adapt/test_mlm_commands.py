"""The adapt family's verbs end to end on tiny offline masked LMs: `xlt perplexity`, and the
per-layer comparison the adaptation runs are checked against."""

import math
from pathlib import Path

import pytest
from _tiny_mlm import DUTCH, ENGLISH, save_tiny

from xlt.core.errors import XltError
from xlt.core.io import read_json, read_jsonl, write_jsonl


def run_verb(verb: str, argv: list[str]) -> None:
    """What `xlt VERB ...` does, without catching errors: the registered verb's own parser and run."""
    from xlt.cli import build_parser

    args = build_parser(verb).parse_args([verb, *argv])
    args._run(args)


def compare_layers(
    model: Path,
    reference: Path,
    data: Path,
    layers=None,
    levels=("sentence", "word"),
    max_sentences: int = 512,
    max_length: int = 128,
) -> list[dict]:
    """Per-layer distance / CKA of two saved models on the first sentences of a JSONL file,
    computed independently of an adaptation run (what the retired `xlt compare-layers` did)."""
    from xlt.core.models import encoder_parts, load_encoder, load_tokenizer
    from xlt.families.adapt.mlm import iter_texts
    from xlt.families.adapt.similarity import compare_models

    texts = list(iter_texts(read_jsonl(data), str(data)))[:max_sentences]
    a, b = load_encoder(str(model)), load_encoder(str(reference))
    top = min(encoder_parts(a).num_layers, encoder_parts(b).num_layers)
    return compare_models(
        a,
        load_tokenizer(str(model)),
        b,
        load_tokenizer(str(reference)),
        texts,
        layers if layers is not None else list(range(top + 1)),
        levels=levels,
        max_length=max_length,
        device="cpu",
    )


@pytest.fixture(scope="module")
def workspace(tmp_path_factory):
    root = tmp_path_factory.mktemp("mlm")
    _, tok_a = save_tiny(root / "mbert", DUTCH + ENGLISH, vocab_size=200, layers=2, seed=1)
    save_tiny(root / "bertje", DUTCH, vocab_size=80, layers=2, seed=2)
    write_jsonl(root / "data" / "nld" / "validation.jsonl", [{"text": t} for t in DUTCH * 3] + [{"text": "  "}])
    write_jsonl(root / "data" / "eng" / "validation.jsonl", [{"text": t, "label": 0} for t in ENGLISH * 3])
    return root, len(tok_a)


def _by(records, metric):
    return {r["lang"]: r["value"] for r in records if r["metric"] == metric}


def test_perplexity_end_to_end_is_fixed_across_runs(workspace):
    root, vocab = workspace
    files = [str(root / "data" / "nld" / "validation.jsonl"), str(root / "data" / "eng" / "validation.jsonl")]
    argv = [
        "--model",
        str(root / "mbert"),
        "--data",
        files[0],
        "--data",
        files[1],
        "--mask-seed",
        "1234",
        "--batch-size",
        "4",
        "--device",
        "cpu",
    ]
    run_verb("perplexity", argv + ["--out", str(root / "ppl1.json")])
    run_verb("perplexity", argv + ["--batch-size", "7", "--out", str(root / "ppl2.json")])
    first, second = read_json(root / "ppl1.json"), read_json(root / "ppl2.json")
    ppl, loss = _by(first["metrics"], "perplexity"), _by(first["metrics"], "mlm_loss")
    assert set(ppl) == {"nld", "eng"}
    assert all(r["split"] == "validation" for r in first["metrics"])
    for lang in ppl:
        assert ppl[lang] == pytest.approx(math.exp(loss[lang]))
        # a random-init model is close to uniform over the vocabulary
        assert vocab / 2 < ppl[lang] < 2 * vocab
    assert ppl == pytest.approx(_by(second["metrics"], "perplexity"), rel=1e-6)  # batch size does not matter
    assert first["meta"]["files"] == second["meta"]["files"]
    assert first["meta"]["files"][files[0]]["sentences"] == len(DUTCH) * 3  # blank record skipped

    run_verb(
        "perplexity",
        argv + ["--mask-seed", "99", "--max-sentences", "5", "--langs", "nl", "en", "--out", str(root / "ppl3.json")],
    )
    third = read_json(root / "ppl3.json")
    assert set(_by(third["metrics"], "perplexity")) == {"nl", "en"}
    assert third["meta"]["files"][files[0]]["mask_fingerprint"] != first["meta"]["files"][files[0]]["mask_fingerprint"]
    assert third["meta"]["files"][files[0]]["sentences"] == 5


def test_perplexity_validates_before_loading(workspace, tmp_path):
    root, _ = workspace
    data = str(root / "data" / "nld" / "validation.jsonl")
    with pytest.raises(XltError, match="--langs has 1 entries but --data has 2"):
        run_verb(
            "perplexity",
            [
                "--model",
                "/nonexistent",
                "--data",
                data,
                "--data",
                data,
                "--langs",
                "nl",
                "--out",
                str(tmp_path / "x.json"),
            ],
        )
    with pytest.raises(XltError, match="share language and split"):
        run_verb(
            "perplexity", ["--model", "/nonexistent", "--data", data, "--data", data, "--out", str(tmp_path / "x.json")]
        )
    bad = tmp_path / "nld" / "bad.jsonl"
    write_jsonl(bad, [{"sentence": "geen tekst"}])
    with pytest.raises(XltError, match="record 1 has no string 'text'"):
        run_verb("perplexity", ["--model", "/nonexistent", "--data", str(bad), "--out", str(tmp_path / "x.json")])
    assert not (tmp_path / "x.json").exists()


def test_compare_layers_end_to_end(workspace):
    root, _ = workspace
    data = root / "data" / "nld" / "validation.jsonl"
    records = compare_layers(root / "mbert", root / "bertje", data, max_sentences=8)
    keys = {(r["metric"], r["level"], r.get("layer")) for r in records}
    for metric in ("euclidean", "cka"):
        for level in ("sentence", "word"):
            assert {(metric, level, layer) for layer in (0, 1, 2)} <= keys
    vectors = {r["level"]: r["value"] for r in records if r["metric"] == "vectors"}
    assert vectors == {"sentence": 8, "word": sum(len(s.split()) for s in DUTCH[:8])}

    values = {
        r["metric"]: r["value"]
        for r in compare_layers(root / "mbert", root / "mbert", data, layers=[2], levels=["word"])
    }
    assert values["euclidean"] == pytest.approx(0.0, abs=1e-5) and values["cka"] == pytest.approx(1.0, abs=1e-5)


def test_perplexity_writes_per_sentence_outputs_that_give_its_interval(workspace):
    """`xlt perplexity` keeps every sentence's loss and masked tokens beside its metrics; they
    recompute the recorded perplexity, and `xlt aggregate` turns them into ci_low/ci_high around
    the perplexity and the loss (not around the token count)."""
    import numpy as np

    from xlt.analysis.bootstrap import point_metric
    from xlt.core.metrics import examples_path, read_examples
    from xlt.report.aggregate import aggregate

    root, _ = workspace
    data = root / "data" / "nld" / "validation.jsonl"
    out = root / "reference-mbert" / "perplexity.json"
    run_verb(
        "perplexity",
        [
            "--model",
            str(root / "mbert"),
            "--data",
            str(data),
            "--mask-seed",
            "7",
            "--batch-size",
            "4",
            "--device",
            "cpu",
            "--family",
            "adapt",
            "--out",
            str(out),
        ],
    )
    (one,) = read_examples(examples_path(out))
    assert (one["kind"], one["lang"], one["split"], one["mask_seed"]) == ("perplexity", "nld", "validation", 7)
    assert len(one["loss"]) == len(DUTCH) * 3  # one entry per sentence (the blank record is no sentence)
    recorded = _by(read_json(out)["metrics"], "perplexity")["nld"]
    assert point_metric("perplexity", np.array(one["loss"]), np.array(one["tokens"])) == pytest.approx(
        recorded, rel=1e-6
    )
    assert sum(one["tokens"]) == _by(read_json(out)["metrics"], "masked_tokens")["nld"]

    table = aggregate([out], resamples=200).set_index("metric")
    for metric in ("perplexity", "mlm_loss"):
        assert table.loc[metric, "ci_low"] < table.loc[metric, "value"] < table.loc[metric, "ci_high"]
    assert math.isnan(table.loc["masked_tokens", "ci_low"])
