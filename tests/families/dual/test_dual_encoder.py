"""Dual-encoder training: the loss against a hand computation, batch de-duplication, and
`xlt train-dual` end to end on a tiny demo encoder."""

import json

import numpy as np
import pytest
import torch
from conftest import tiny_config
from scipy.special import logsumexp

from xlt import cli
from xlt.core.sentence_encoder import SentenceEncoder
from xlt.core.train_args import TrainArgs
from xlt.data import demo
from xlt.data.bitext_files import Bitext
from xlt.families.dual.dual_encoder import DualSettings, distinct_pairs, make_collate, make_loss, train_dual


def bidirectional_margin_loss(x, y, scale, margin):
    """Independent numpy version: rows and columns of scale * (cos - margin * I)."""
    x = x / np.linalg.norm(x, axis=1, keepdims=True)
    y = y / np.linalg.norm(y, axis=1, keepdims=True)
    s = scale * (x @ y.T - margin * np.eye(len(x)))
    rows = np.mean(logsumexp(s, axis=1) - np.diag(s))
    cols = np.mean(logsumexp(s, axis=0) - np.diag(s))
    return rows, cols


@pytest.fixture(scope="module")
def tokenizer(demo_model_dir):
    from xlt.core.models import load_tokenizer

    return load_tokenizer(str(demo_model_dir))


def encoder_without_dropout(tokenizer, seed=0):
    from transformers import BertModel

    torch.manual_seed(seed)
    return SentenceEncoder(BertModel(tiny_config("bert", layers=2, vocab=len(tokenizer), dropout=0.0)), "mean")


def test_distinct_pairs_drops_repeated_sentences_on_either_side():
    chunk = [("a", "A"), ("b", "B"), ("c", "A"), ("a", "C"), ("d", "D")]
    assert distinct_pairs(chunk) == [("a", "A"), ("b", "B"), ("d", "D")]


@pytest.mark.parametrize("symmetric", ["sum", "mean"])
def test_loss_matches_hand_computation_in_both_directions(tokenizer, symmetric):
    model = encoder_without_dropout(tokenizer)
    records = demo.generate("bitext", "qab", "train", 6, seed=3)
    chunk = [(r["text"], r["text_pair"]) for r in records] + [(records[0]["text"] + " x", records[0]["text_pair"])]
    batch = make_collate(tokenizer, 32)(chunk)
    assert batch["pairs"] == 6  # the repeated English sentence is dropped
    losses = []
    loss = make_loss(DualSettings(margin=0.25, scale=7.0, symmetric=symmetric), losses)(model, batch)
    with torch.no_grad():
        x = model(**{k: v for k, v in batch.items() if k != "pairs"}).numpy()
    rows, cols = bidirectional_margin_loss(x[:6], x[6:], 7.0, 0.25)
    expected = rows + cols if symmetric == "sum" else (rows + cols) / 2
    assert loss.item() == pytest.approx(expected, rel=1e-5)
    assert losses == [pytest.approx(expected, rel=1e-5)]


def test_margin_raises_the_loss_of_the_same_embeddings(tokenizer):
    model = encoder_without_dropout(tokenizer)
    records = demo.generate("bitext", "qaa", "train", 8, seed=3)
    batch = make_collate(tokenizer, 32)([(r["text"], r["text_pair"]) for r in records])
    values = [make_loss(DualSettings(margin=m, scale=10.0))(model, batch).item() for m in (0.0, 0.1, 0.3)]
    assert values[0] < values[1] < values[2]


def bitexts(langs, split, size):
    return [
        Bitext(lang, *zip(*[(r["text"], r["text_pair"]) for r in demo.generate("bitext", lang, split, size, 13)]))
        for lang in langs
    ]


def test_symmetric_sum_first_loss_is_twice_the_mean(tokenizer):
    """Same seed, same first batch: the summed variant's first loss is exactly twice the averaged one."""
    first = {}
    for symmetric in ("sum", "mean"):
        losses = []
        model = encoder_without_dropout(tokenizer)
        args = TrainArgs(max_steps=2, batch_size=8, lr=1e-3, max_length=32, eval_every=2, device="cpu", log_every=1)
        train_dual(
            model,
            tokenizer,
            bitexts(["qaa"], "train", 24),
            bitexts(["qaa"], "dev", 8),
            DualSettings(margin=0.3, scale=10.0, symmetric=symmetric),
            args,
            losses,
        )
        first[symmetric] = losses[0]
    assert first["sum"] == pytest.approx(2 * first["mean"], rel=1e-6)
    with pytest.raises(ValueError, match="symmetric must be one of"):
        train_dual(
            encoder_without_dropout(tokenizer),
            tokenizer,
            bitexts(["qaa"], "train", 8),
            bitexts(["qaa"], "dev", 4),
            DualSettings(symmetric="none"),
            TrainArgs(max_steps=1, device="cpu"),
        )


def write_bitext(root, lang, split, size):
    path = root / "demo-bitext" / lang / f"{split}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in demo.generate("bitext", lang, split, size, 13)))
    return str(path)


def test_train_dual_end_to_end(tmp_path, demo_model_dir):
    train = [write_bitext(tmp_path, lang, "train", 96) for lang in ("qaa", "qac")]
    dev = [write_bitext(tmp_path, lang, "dev", 16) for lang in ("qaa", "qac")]
    out = tmp_path / "run"
    argv = [
        "train-dual",
        "--model",
        str(demo_model_dir),
        "--margin",
        "0.3",
        "--scale",
        "10",
        "--pooling",
        "mean",
        "--max-steps",
        "24",
        "--batch-size",
        "16",
        "--lr",
        "2e-3",
        "--eval-every",
        "8",
        "--max-length",
        "32",
        "--log-every",
        "8",
        "--device",
        "cpu",
        "--seed",
        "3",
        "--out",
        str(out),
        "--run-id",
        "tiny",
    ]
    for f in train:
        argv += ["--train", f]
    for f in dev:
        argv += ["--dev", f]
    assert cli.main(argv) == 0

    metrics = json.loads((out / "train.json").read_text())
    meta = metrics["meta"]
    assert meta["family"] == "dual" and meta["run_id"] == "tiny"
    assert meta["axes"] == {
        "objective": "additive_margin",
        "margin": 0.3,
        "scale": 10.0,
        "pooling": "mean",
        "batch_size": 16,
        "freeze_depth": -1,
        "seed": 3,
        "trained": True,
        "match": "index",  # the dev retrieval's rule, a table column
        "cache_frozen_prefix": False,
        "prefix_precision": "fp32",
    }  # how the frozen part ran
    assert meta["loss"]["symmetric"] == "sum" and meta["train_pairs"] == {"qaa": 96, "qac": 96}
    curve = [point["loss"] for point in meta["loss_curve"]]
    assert len(curve) == 3 and curve[-1] < curve[0]  # the loss goes down
    assert [h["step"] for h in meta["history"]] == [8, 16, 24]
    assert meta["best_dev_score"] == max(h["score"] for h in meta["history"])

    # the saved model's dev retrieval accuracy, recomputed independently, matches the records
    from xlt.core.models import load_tokenizer

    model = SentenceEncoder.from_pretrained(str(out / "model")).eval()
    assert (model.pooling.mode, model.pooling.layer) == ("mean", -1)
    tok = load_tokenizer(str(out / "model"))
    recorded = {
        (r["lang"], r["direction"]): r["value"] for r in metrics["metrics"] if r["metric"] == "dev_retrieval_acc"
    }
    assert len(recorded) == 4
    for lang, path in zip(("qaa", "qac"), dev):
        rows = [json.loads(line) for line in open(path)]
        with torch.no_grad():
            xx = model(**tok([r["text"] for r in rows], padding=True, return_tensors="pt")).numpy()
            en = model(**tok([r["text_pair"] for r in rows], padding=True, return_tensors="pt")).numpy()
        xx /= np.linalg.norm(xx, axis=1, keepdims=True)
        en /= np.linalg.norm(en, axis=1, keepdims=True)
        sims = xx @ en.T
        assert recorded[lang, "xx->en"] == pytest.approx(np.mean(sims.argmax(1) == np.arange(len(rows))), abs=1e-9)
        assert recorded[lang, "en->xx"] == pytest.approx(np.mean(sims.argmax(0) == np.arange(len(rows))), abs=1e-9)
    mean = [r for r in metrics["metrics"] if r["metric"] == "dev_retrieval_acc_mean"]
    assert mean[0]["value"] == pytest.approx(np.mean(list(recorded.values())))

    # the kept checkpoint's retrieved indices back every dev record's interval, and no paired test
    from xlt.core.metrics import read_examples
    from xlt.report.aggregate import aggregate

    sets = read_examples(out / "train.examples.jsonl.gz")
    assert len(sets) == 4 and all(one["interval_only"] and one["metric"] == "dev_retrieval_acc" for one in sets)
    assert {(one["lang"], one["direction"]): np.mean(one["correct"]) for one in sets} == recorded
    table = aggregate([out / "train.json"], resamples=200)
    dev = table[table.metric.str.startswith("dev_retrieval_acc")]
    assert len(dev) == 5 and dev.ci_low.notna().all()
    assert ((dev.ci_low <= dev.value) & (dev.value <= dev.ci_high)).all()


def test_train_dual_puts_the_prompt_before_every_sentence_it_trains_and_selects_on(
    tmp_path, demo_model_dir, monkeypatch
):
    """A model's prompt (E5's "query: ") reaches training, dev selection and the dev records, as it
    reaches its evaluation jobs (eval-embeddings, mine): it was evaluation only."""
    from xlt.families.dual import dual_encoder

    trained, embedded = [], []
    real_collate, real_encode = dual_encoder.make_collate, dual_encoder.encode

    def recording_collate(tokenizer, max_length, *rest):
        collate = real_collate(tokenizer, max_length, *rest)
        return lambda chunk: trained.extend(s for pair in chunk for s in pair) or collate(chunk)

    def recording_encode(model, tokenizer, sentences, **kwargs):
        embedded.extend(kwargs.get("prompt", "") + s for s in sentences)
        return real_encode(model, tokenizer, sentences, **kwargs)

    monkeypatch.setattr(dual_encoder, "make_collate", recording_collate)
    monkeypatch.setattr(dual_encoder, "encode", recording_encode)
    train, dev = write_bitext(tmp_path, "qaa", "train", 8), write_bitext(tmp_path, "qaa", "dev", 4)
    out = tmp_path / "run"
    assert (
        cli.main(
            [
                "train-dual",
                "--model",
                str(demo_model_dir),
                "--train",
                train,
                "--dev",
                dev,
                "--prompt",
                "query: ",
                "--max-steps",
                "2",
                "--batch-size",
                "4",
                "--eval-every",
                "1",
                "--max-length",
                "32",
                "--device",
                "cpu",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    dev_sentences = {r[key] for r in map(json.loads, open(dev)) for key in ("text", "text_pair")}
    assert len(trained) == 16 and all(s.startswith("query: ") for s in trained)
    # three dev passes (steps 1, 2 and the kept model's records), each sentence with the prompt
    assert sorted(embedded) == sorted(3 * ["query: " + s for s in dev_sentences])
    assert json.loads((out / "train.json").read_text())["meta"]["prompt"] == "query: "


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--margin", "-0.1"], "--margin -0.1"),
        (["--scale", "0"], "--scale 0"),
        (["--batch-size", "1"], "in-batch negatives need at least 2"),
        (["--freeze-depth", "2"], "leaves nothing to train in a model with 2 layers"),
        # in-batch negatives: micro-batches would change the loss, not only the memory
        (["--batch-size", "8", "--grad-accum", "2"], "--grad-accum 2: the dual encoder's loss uses in-batch negatives"),
        # distillation accumulates (a mean over examples): the first problem named is the missing teacher
        (
            ["--objective", "mse_distill", "--batch-size", "8", "--grad-accum", "2"],
            "--objective mse_distill needs --teacher",
        ),
    ],
)
def test_bad_settings_fail_before_training(tmp_path, demo_model_dir, capsys, extra, message):
    train, dev = write_bitext(tmp_path, "qaa", "train", 8), write_bitext(tmp_path, "qaa", "dev", 4)
    rc = cli.main(
        [
            "train-dual",
            "--model",
            str(demo_model_dir),
            "--train",
            train,
            "--dev",
            dev,
            "--out",
            str(tmp_path / "run"),
            *extra,
        ]
    )
    assert rc == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "run").exists()


def test_train_dual_refuses_gradient_accumulation_before_training(tokenizer, monkeypatch):
    from xlt.core.errors import XltError
    from xlt.families.dual import dual_encoder

    monkeypatch.setattr(dual_encoder, "train", lambda *a, **k: pytest.fail("training started"))
    with pytest.raises(XltError, match="grad_accum 4: .*in-batch negatives.*set it to 1"):
        train_dual(
            encoder_without_dropout(tokenizer),
            tokenizer,
            bitexts(["qaa"], "train", 8),
            bitexts(["qaa"], "dev", 4),
            DualSettings(),
            TrainArgs(batch_size=8, grad_accum=4, device="cpu"),
        )


def test_train_dual_rerun_with_another_margin_discards_the_stopped_runs_checkpoint(
    tmp_path, demo_model_dir, monkeypatch, caplog
):
    """A train-dual job stopped mid-run (SIGTERM through xlt.core.faults) and rerun with another
    --margin trains from the start: its model equals a fresh run's with that margin."""
    from xlt.core import faults

    train = [write_bitext(tmp_path, "qaa", "train", 48)]
    dev = [write_bitext(tmp_path, "qaa", "dev", 16)]

    def argv(out, margin):
        return [
            "train-dual",
            "--model",
            str(demo_model_dir),
            "--margin",
            str(margin),
            "--max-steps",
            "8",
            "--batch-size",
            "8",
            "--lr",
            "2e-3",
            "--eval-every",
            "4",
            "--max-length",
            "32",
            "--device",
            "cpu",
            "--seed",
            "3",
            "--checkpoint-every",
            "2",
            "--train",
            *train,
            "--dev",
            *dev,
            "--out",
            str(out),
        ]

    def stopped_at_step_5(out):
        monkeypatch.setattr(faults, "_reached", faults.Counter())
        monkeypatch.setenv(faults.ENV, "step:5:TERM")
        with pytest.raises(SystemExit) as stopped:
            cli.main(argv(out, 0.3))
        assert stopped.value.code == 75 and (out / "checkpoint" / "checkpoint.pt").is_file()
        monkeypatch.delenv(faults.ENV)

    # the reference also runs right after a stopped run: a run in a process that has just had one stopped (or
    # that trains for the first time) differs in the last bits from later ones, checkpoint or not
    stopped_at_step_5(tmp_path / "other")
    assert cli.main(argv(tmp_path / "fresh", 0.5)) == 0
    stopped_at_step_5(tmp_path / "run")
    with caplog.at_level("INFO", logger="xlt.core"):
        assert cli.main(argv(tmp_path / "run", 0.5)) == 0
    [line] = [r.getMessage() for r in caplog.records if r.getMessage().startswith("discarding the checkpoint")]
    assert "dual_loss.margin 0.3 -> 0.5" in line, line
    resumed = SentenceEncoder.from_pretrained(str(tmp_path / "run" / "model")).state_dict()
    fresh = SentenceEncoder.from_pretrained(str(tmp_path / "fresh" / "model")).state_dict()
    assert all(torch.equal(resumed[k], fresh[k]) for k in fresh)


def test_dev_retrieval_counts_a_duplicate_string_at_another_index_by_the_given_rule(monkeypatch):
    # "I see." twice with one vector: qaa's second sentence retrieves the first copy (the tie's first
    # index), the right string at the wrong index. Wrong under the default (index), right under text:
    # selection follows the same --match as the Tatoeba test.
    from xlt.data.bitext_files import Bitext
    from xlt.families.dual import dual_encoder

    vectors = {
        "Ich verstehe.": [1.0, 0.1, 0.0],
        "Aha.": [1.0, 0.0, 0.0],
        "Geh.": [0.0, 0.1, 1.0],
        "I see.": [1.0, 0.0, 0.0],
        "Go.": [0.0, 0.0, 1.0],
    }
    monkeypatch.setattr(
        dual_encoder,
        "sentence_vectors",
        lambda model, tokenizer, sentences, max_length: np.array([vectors[s] for s in sentences]),
    )
    bitext = Bitext("qaa", ["Ich verstehe.", "Aha.", "Geh."], ["I see.", "I see.", "Go."])

    def xx_to_en(**kwargs):
        (rec,) = [r for r in dual_encoder.dev_records(None, None, [bitext], 8, **kwargs) if r["direction"] == "xx->en"]
        return rec["value"]

    assert xx_to_en() == pytest.approx(2 / 3) == xx_to_en(match="index")
    assert xx_to_en(match="text") == 1.0
    evaluate = dual_encoder.make_evaluate(None, [bitext], 8, "text")
    assert evaluate(None)["qaa xx->en"] == 1.0
    with pytest.raises(ValueError, match="unknown match rule"):
        train_dual(None, None, [bitext], [bitext], DualSettings(match="fuzzy"), TrainArgs(max_steps=1, device="cpu"))
