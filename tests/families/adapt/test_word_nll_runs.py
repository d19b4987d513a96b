"""NLL per word / character in the adapt jobs, end to end on tiny offline masked LMs with two
different tokenizers: `xlt perplexity` (the untouched models) and `xlt adapt-mlm` (the final
evaluation) add the rows, leave every perplexity as it was, and `xlt aggregate` keeps them."""

import json
import math

import pytest
from _tiny_mlm import DUTCH, ENGLISH, save_tiny

from xlt.core.errors import XltError
from xlt.core.io import read_json, write_jsonl
from xlt.report.aggregate import aggregate


def run_verb(verb: str, argv: list[str]) -> None:
    from xlt.cli import build_parser

    args = build_parser(verb).parse_args([verb, *argv])
    args._run(args)


@pytest.fixture(scope="module")
def workspace(tmp_path_factory):
    root = tmp_path_factory.mktemp("word-nll")
    save_tiny(root / "mbert", DUTCH + ENGLISH, vocab_size=200, layers=2, seed=1)
    save_tiny(root / "native", DUTCH, vocab_size=80, layers=2, seed=2)  # a smaller vocabulary: more pieces
    write_jsonl(root / "data" / "nld" / "train.jsonl", [{"text": t} for t in DUTCH * 4])
    write_jsonl(root / "eval" / "nld" / "dev.jsonl", [{"text": t} for t in DUTCH])
    write_jsonl(root / "eval" / "multilingual" / "dev.jsonl", [{"text": t} for t in ENGLISH])
    return root


def _final(records, metric):
    return {(r["lang"], r["split"]): r["value"] for r in records if r["metric"] == metric and "step" not in r}


def _reference(root, model, out, *extra):
    run_verb(
        "perplexity",
        [
            "--model",
            str(root / model),
            "--data",
            str(root / "eval" / "nld" / "dev.jsonl"),
            "--data",
            str(root / "eval" / "multilingual" / "dev.jsonl"),
            "--mask-seed",
            "11",
            "--max-length",
            "32",
            "--device",
            "cpu",
            "--out",
            str(out),
            *extra,
        ],
    )
    return read_json(out)


def test_reference_models_get_word_rows_and_keep_their_perplexities(workspace):
    from xlt.core.models import load_tokenizer
    from xlt.families.adapt.mlm import load_masked_lm
    from xlt.families.adapt.word_nll import spread_subset, word_nll

    root = workspace
    plain = _reference(root, "mbert", root / "plain" / "perplexity.json")
    scored = {
        model: _reference(root, model, root / model / "perplexity.json", "--pll-sentences", "6", "--pll-words", "5")
        for model in ("mbert", "native")
    }
    assert _final(scored["mbert"]["metrics"], "perplexity") == _final(plain["metrics"], "perplexity")
    assert not _final(plain["metrics"], "nll_per_word")
    assert scored["mbert"]["meta"]["word_nll"] == {"sentences": 6, "words": 5}
    # the two tokenizers cut the words differently, yet score the same words
    words = {m: _final(s["metrics"], "pll_words") for m, s in scored.items()}
    assert words["mbert"] == words["native"]
    assert len(load_tokenizer(str(root / "native")).tokenize(DUTCH[0])) != len(
        load_tokenizer(str(root / "mbert")).tokenize(DUTCH[0])
    )
    # the rows are the measure on the spread subset of the set
    texts = spread_subset(DUTCH, 6)
    direct = word_nll(
        load_masked_lm(str(root / "native")),
        load_tokenizer(str(root / "native")),
        texts,
        max_words=5,
        max_length=32,
        device="cpu",
    )
    assert words["native"][("nld", "dev")] == direct.words == sum(min(5, len(t.split())) for t in texts)
    assert _final(scored["native"]["metrics"], "nll_per_word")[("nld", "dev")] == pytest.approx(direct.per_word)
    assert _final(scored["native"]["metrics"], "nll_per_char")[("nld", "dev")] == pytest.approx(direct.per_char)
    table = aggregate([root / "mbert" / "perplexity.json", root / "native" / "perplexity.json"])
    rows = table[table.metric == "nll_per_word"]
    assert len(rows) == 4 and rows.value.map(math.isfinite).all()
    # consumers select by metric: the perplexity rows (values, intervals) are those of a run without them
    before, after = aggregate([root / "plain" / "perplexity.json"]), table[table.run_id == "mbert"]
    columns = ["metric", "lang", "split", "value", "ci_low", "ci_high"]

    def pick(t, metric):
        return t[t.metric == metric][columns].sort_values(["lang", "split"]).reset_index(drop=True)

    for metric in ("perplexity", "mlm_loss", "masked_tokens"):
        assert pick(after, metric).equals(pick(before, metric)), metric


def test_adapt_mlm_scores_words_in_its_final_evaluation_only(workspace):
    root = workspace
    out = root / "run" / "metrics.json"
    run_verb(
        "adapt-mlm",
        [
            "--model",
            str(root / "mbert"),
            "--train",
            str(root / "data" / "nld" / "train.jsonl"),
            "--target",
            str(root / "eval" / "nld" / "dev.jsonl"),
            "--eval",
            str(root / "eval" / "multilingual" / "dev.jsonl"),
            "--scheme",
            "1-2",
            "--mask-seed",
            "11",
            "--max-length",
            "32",
            "--max-steps",
            "2",
            "--eval-every",
            "2",
            "--batch-size",
            "8",
            "--lr",
            "1e-1",
            "--warmup-ratio",
            "0",
            "--device",
            "cpu",
            "--pll-sentences",
            "4",
            "--axes",
            json.dumps({"role": "adapted"}),
            "--out",
            str(out),
        ],
    )
    records = read_json(out)["metrics"]
    per_word = [r for r in records if r["metric"] == "nll_per_word"]
    assert {(r["lang"], r["split"]) for r in per_word} == {("nld", "dev"), ("multilingual", "dev")}
    assert all("step" not in r for r in per_word)  # a forward pass per piece: final evaluation only
    assert (
        set(_final(records, "nll_per_char")) == set(_final(records, "pll_words")) == set(_final(records, "perplexity"))
    )
    # the [UNK] share of the scored pieces beside them (these sets name no language per sentence: the set's)
    assert (
        set(_final(records, "unk_share")) == set(_final(records, "unk_flagged")) == set(_final(records, "perplexity"))
    )


def test_bad_word_settings_fail_before_loading(workspace, tmp_path):
    root = workspace
    with pytest.raises(XltError, match="--pll-sentences must be >= 0"):
        _reference(root, "does-not-exist", tmp_path / "x.json", "--pll-sentences", "-1")
