"""MLM adaptation: the layer scheme as applied inside real (tiny) training runs, and the
adapt-mlm verb end to end against the independent perplexity verb and layer comparison."""

import copy
import json

import pytest
import torch
from _tiny_mlm import DUTCH, ENGLISH, save_tiny, tiny_bert_mlm, wordpiece_tokenizer
from test_mlm_commands import compare_layers, run_verb

from xlt.core.errors import XltError
from xlt.core.io import read_json, write_jsonl
from xlt.core.training import TrainArgs
from xlt.families.adapt.adaptation import EvalSet, adapt, evaluate_sets
from xlt.families.adapt.mlm import IGNORE_INDEX, FixedMasking
from xlt.families.adapt.mlm_objective import MlmCollate, mlm_loss
from xlt.families.adapt.schemes import parse_scheme
from xlt.report.aggregate import aggregate


def _layer_flags(model):
    return tuple(all(p.requires_grad for p in layer.parameters()) for layer in model.bert.encoder.layer)


@pytest.mark.parametrize(
    "scheme_spec, expected_by_step",
    [
        # 10 sentences, batch 4 -> 3 batches per epoch: epochs start at steps 0, 3, 6
        (
            {"gradual": {"every_epochs": 1, "step": 1, "start": 1}},
            {0: {4}, 1: {4}, 2: {4}, 3: {3, 4}, 4: {3, 4}, 5: {3, 4}, 6: {2, 3, 4}, 7: {2, 3, 4}},
        ),
        (
            {"gradual": {"every_steps": 2, "step": 2, "start": 1}},
            {
                0: {4},
                1: {4},
                2: {2, 3, 4},
                3: {2, 3, 4},
                4: {1, 2, 3, 4},
                5: {1, 2, 3, 4},
                6: {1, 2, 3, 4},
                7: {1, 2, 3, 4},
            },
        ),
    ],
)
def test_gradual_unfreezing_pattern_inside_a_training_run(scheme_spec, expected_by_step):
    tokenizer = wordpiece_tokenizer(DUTCH + ENGLISH, 120)
    model = tiny_bert_mlm(len(tokenizer), layers=4, seed=3)
    initial = copy.deepcopy(model.state_dict())
    scheme = parse_scheme(scheme_spec, 4)
    target = EvalSet("nld", "dev", FixedMasking(tokenizer, DUTCH, seed=5))
    seen = []  # requires_grad of every layer at each training forward pass, observed from outside

    def record_pattern(module, args, kwargs):
        if module.training:
            seen.append((_layer_flags(model), model.bert.embeddings.word_embeddings.weight.requires_grad))

    # on the encoder: the training step runs it, and the vocabulary head on the masked rows, not the
    # whole model's forward (xlt.families.adapt.masked_head)
    model.bert.register_forward_pre_hook(record_pattern, with_kwargs=True)
    args = TrainArgs(max_steps=8, batch_size=4, lr=5e-3, warmup_ratio=0.0, eval_every=4, device="cpu", log_every=100)
    result = adapt(model, tokenizer, DUTCH, scheme, args, target, select="last")

    assert len(seen) == 8  # one forward per step (no accumulation)
    for step, (flags, embeddings_trainable) in enumerate(seen):
        assert {i + 1 for i, on in enumerate(flags) if on} == expected_by_step[step], step
        assert not embeddings_trainable
    # layers never trained kept their weights exactly; every trained one moved
    final = model.state_dict()
    trained = set().union(*expected_by_step.values())
    for layer in range(1, 5):
        key = f"bert.encoder.layer.{layer - 1}.attention.self.query.weight"
        assert torch.equal(final[key], initial[key]) == (layer not in trained), layer
    assert torch.equal(
        final["bert.embeddings.word_embeddings.weight"], initial["bert.embeddings.word_embeddings.weight"]
    )
    # trainable_layers at an evaluation = layers trained in the step just before it
    counts = {r["step"]: r["value"] for r in result.records if r["metric"] == "trainable_layers"}
    assert counts == {4: len(expected_by_step[3]), 8: len(expected_by_step[7])}
    assert result.trainable == {4: sorted(expected_by_step[3]), 8: sorted(expected_by_step[7])}


def test_a_run_that_only_gets_worse_keeps_the_step_0_model(monkeypatch):
    """Step 0 (the untouched model) competes for best: it could never win, so a run whose every
    evaluation was worse ended with a trained model anyway."""
    from xlt.core.metrics import record
    from xlt.families.adapt import adaptation

    def worsening(model, sets, batch_size, device, step=None, intervals=None, **kwargs):
        # target perplexity 10 at step 0, then higher at every checkpoint; nothing for the final pass
        return (
            []
            if step is None
            else [record("perplexity", 10.0 + step, lang=sets[0].lang, split=sets[0].split, step=step)]
        )

    monkeypatch.setattr(adaptation, "evaluate_sets", worsening)
    tokenizer = wordpiece_tokenizer(DUTCH + ENGLISH, 120)
    model = tiny_bert_mlm(len(tokenizer), layers=2, seed=3)
    initial = copy.deepcopy(model.state_dict())
    target = EvalSet("nld", "dev", FixedMasking(tokenizer, DUTCH, seed=5))
    args = TrainArgs(max_steps=4, batch_size=4, lr=5e-3, warmup_ratio=0.0, eval_every=2, device="cpu", log_every=100)
    result = adapt(model, tokenizer, DUTCH, parse_scheme("1-2", 2), args, target, select="best")
    assert result.train.best_step == 0 and result.train.best_score == -10.0
    assert [r["value"] for r in result.records if r["metric"] == "selected_step"] == [0]
    assert all(torch.equal(value, initial[key]) for key, value in model.state_dict().items())


def test_collate_masks_reproducibly_and_never_special_tokens():
    tokenizer = wordpiece_tokenizer(DUTCH, 80)
    collate = MlmCollate(tokenizer, 32)
    examples = collate.encode(DUTCH)
    torch.manual_seed(7)  # the training loop seeds the global generator; masks follow from it
    a = collate(examples)
    torch.manual_seed(7)
    b = collate(examples)
    assert all(torch.equal(a[k], b[k]) for k in a)
    assert not torch.equal(a["labels"], collate(examples)["labels"])  # the next batch gets new masks
    masked = a["labels"] != IGNORE_INDEX
    assert masked.any()
    special = torch.tensor([tokenizer.cls_token_id, tokenizer.sep_token_id, tokenizer.pad_token_id])
    assert not torch.isin(a["labels"][masked], special).any()
    assert not masked[a["attention_mask"] == 0].any()


def test_mlm_loss_is_the_mean_over_masked_tokens_and_zero_without_masks():
    tokenizer = wordpiece_tokenizer(DUTCH, 80)
    model = tiny_bert_mlm(len(tokenizer), seed=1)
    torch.manual_seed(2)
    batch = MlmCollate(tokenizer, 32)(MlmCollate(tokenizer, 32).encode(DUTCH[:4]))
    logits = model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"]).logits
    picked = batch["labels"] != IGNORE_INDEX
    log_probs = torch.log_softmax(logits[picked], dim=-1)
    by_hand = -log_probs[torch.arange(int(picked.sum())), batch["labels"][picked]].mean()
    assert mlm_loss(model, batch).item() == pytest.approx(by_hand.item(), rel=1e-5)
    none = {**batch, "labels": torch.full_like(batch["labels"], IGNORE_INDEX)}
    loss = mlm_loss(model, none)
    assert loss.detach().item() == 0.0 and loss.requires_grad


def test_checkpoint_intervals_leave_the_values_alone_and_equal_aggregates_on_kept_outputs():
    """With intervals, an evaluation's records are bit for bit those without, plus ci_low /
    ci_high equal to the interval `xlt aggregate` gives the same evaluation from its kept
    per-sentence outputs (the reference job's way)."""
    from xlt.analysis.intervals import RepeatedSetIntervals, record_interval

    tokenizer = wordpiece_tokenizer(DUTCH + ENGLISH, 120)
    model = tiny_bert_mlm(len(tokenizer), seed=3)
    sets = [
        EvalSet("nld", "dev", FixedMasking(tokenizer, DUTCH, seed=5)),
        EvalSet("multilingual", "dev", FixedMasking(tokenizer, ENGLISH, seed=5)),
    ]
    plain = evaluate_sets(model, sets, 4, "cpu", step=0)
    kept: list[dict] = []
    evaluate_sets(model, sets, 4, "cpu", examples_out=kept)
    statistics = {"resamples": 300, "seed": 2, "confidence": 0.9}
    with_bounds = evaluate_sets(model, sets, 4, "cpu", step=0, intervals=RepeatedSetIntervals(**statistics))
    assert [{k: v for k, v in r.items() if k not in ("ci_low", "ci_high")} for r in with_bounds] == plain
    for rec in with_bounds:
        final = {k: v for k, v in rec.items() if k not in ("step", "ci_low", "ci_high")}
        assert (rec["ci_low"], rec["ci_high"]) == pytest.approx(record_interval(final, kept, **statistics), rel=1e-12)
        assert rec["ci_low"] < rec["value"] < rec["ci_high"], rec


@pytest.fixture(scope="module")
def workspace(tmp_path_factory):
    root = tmp_path_factory.mktemp("adapt")
    save_tiny(root / "mbert", DUTCH + ENGLISH, vocab_size=200, layers=2, seed=1)
    save_tiny(root / "native", DUTCH, vocab_size=80, layers=2, seed=2)
    write_jsonl(root / "data" / "nld" / "train.jsonl", [{"text": t} for t in DUTCH * 4])
    write_jsonl(root / "eval" / "nld" / "dev.jsonl", [{"text": t} for t in DUTCH])
    write_jsonl(root / "eval" / "multilingual" / "dev.jsonl", [{"text": t} for t in ENGLISH])
    write_jsonl(root / "eval" / "nld" / "test.jsonl", [{"text": t} for t in reversed(DUTCH)])
    write_jsonl(root / "eval" / "nld" / "compare.jsonl", [{"text": t} for t in DUTCH[:8]])
    return root


def _argv(root, out, *extra):
    return [
        "--model",
        str(root / "mbert"),
        "--train",
        str(root / "data" / "nld" / "train.jsonl"),
        "--target",
        str(root / "eval" / "nld" / "dev.jsonl"),
        "--eval",
        str(root / "eval" / "multilingual" / "dev.jsonl"),
        "--test",
        str(root / "eval" / "nld" / "test.jsonl"),
        "--native",
        str(root / "native"),
        "--compare",
        str(root / "eval" / "nld" / "compare.jsonl"),
        "--mask-seed",
        "11",
        "--max-length",
        "32",
        "--max-steps",
        "6",
        "--eval-every",
        "3",
        "--batch-size",
        "8",
        "--lr",
        "1e-1",
        "--warmup-ratio",
        "0",
        "--device",
        "cpu",
        "--axes",
        json.dumps({"model": "mbert", "scheme": "1-2", "seed": 1, "role": "adapted"}),
        "--out",
        str(out),
        *extra,
    ]


def _values(records, metric, **dims):
    return {
        r.get("step"): r["value"]
        for r in records
        if r["metric"] == metric and all(r.get(k) == v for k, v in dims.items())
    }


def test_adapt_mlm_verb_end_to_end(workspace):
    root = workspace
    out = root / "run" / "metrics.json"
    run_verb("adapt-mlm", _argv(root, out, "--scheme", "1-2"))  # layer 2 only: embeddings and layer 1 frozen
    result = read_json(out)
    records = result["metrics"]
    assert result["meta"]["axes"]["scheme"] == "1-2" and result["meta"]["family"] == "adapt"

    target = _values(records, "perplexity", lang="nld", split="dev")
    multi = _values(records, "perplexity", lang="multilingual", split="dev")
    assert set(target) == set(multi) == {0, 3, 6, None}  # checkpoints at 0 and every K=3 steps, and final
    assert set(_values(records, "perplexity", lang="nld", split="test")) == {None}  # test: final only
    assert target[None] < target[0]  # MLM training on the target sentences lowers their perplexity

    # step 0 is the untouched model: the same numbers as the independent `xlt perplexity` job
    ref_out = root / "reference" / "perplexity.json"
    run_verb(
        "perplexity",
        [
            "--model",
            str(root / "mbert"),
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
            str(ref_out),
        ],
    )
    reference = read_json(ref_out)["metrics"]
    assert target[0] == pytest.approx(_values(reference, "perplexity", lang="nld")[None], rel=1e-6)
    assert multi[0] == pytest.approx(_values(reference, "perplexity", lang="multilingual")[None], rel=1e-6)
    # and the same intervals: step 0's, computed by the job, and the reference's, by `xlt aggregate`
    table = aggregate([out, ref_out])
    for lang in ("nld", "multilingual"):
        for metric in ("perplexity", "mlm_loss"):
            rows = table[(table.lang == lang) & (table.split == "dev") & (table.metric == metric)]
            step0 = rows[(rows.run_id == "run") & (rows.step == 0)].iloc[0]
            ((_, theirs),) = rows[rows.run_id == "reference"].iterrows()
            rows = rows[rows.run_id == "run"]
            assert (step0.ci_low, step0.ci_high) == pytest.approx((theirs.ci_low, theirs.ci_high), rel=1e-6), (
                lang,
                metric,
            )
            assert rows.ci_low.notna().all() and (rows.ci_low < rows.ci_high).all()  # every checkpoint and the final
    # selection = best: the final model is the checkpoint with the lowest target perplexity
    assert target[None] == pytest.approx(min(v for s, v in target.items() if s is not None and s > 0), rel=1e-6)
    selected = _values(records, "selected_step")[None]
    assert target[int(selected)] == pytest.approx(target[None], rel=1e-6)

    # step-0 layer comparison equals an independent comparison of the saved models on the same sentences
    compared = compare_layers(root / "mbert", root / "native", root / "eval" / "nld" / "compare.jsonl", max_length=32)
    for metric in ("euclidean", "cka"):
        for level in ("sentence", "word"):
            for layer in (0, 1, 2):
                mine = _values(records, metric, layer=layer, level=level)
                theirs = _values(compared, metric, layer=layer, level=level)[None]
                assert mine[0] == pytest.approx(theirs, rel=1e-5), (metric, level, layer)
                # embeddings and layer 1 are frozen (eval mode: no dropout), so their vectors never
                # change; layer 2 is trained
                if layer < 2:
                    assert mine[6] == mine[0], (metric, level, layer)
                else:
                    assert mine[6] != mine[0], (metric, level, layer)
    assert _values(records, "trainable_layers") == {3: 1, 6: 1}
    assert set(_values(records, "train_loss")) == {3, 6}
    assert result["meta"]["eval_sets"]["nld/dev"]["sentences"] == len(DUTCH)
    assert result["meta"]["trainable_layers"] == {"3": [2], "6": [2]}


def test_adapt_mlm_validates_before_training(workspace, tmp_path):
    root = workspace
    out = tmp_path / "metrics.json"
    with pytest.raises(XltError, match="out of range for a model with 2 layers"):
        run_verb("adapt-mlm", _argv(root, out, "--scheme", "0-12"))
    with pytest.raises(XltError, match="--grad-accum 2: adapt's MLM loss is a mean over masked tokens"):
        run_verb("adapt-mlm", _argv(root, out, "--scheme", "0-2", "--grad-accum", "2"))
    with pytest.raises(XltError, match="not valid JSON"):
        run_verb("adapt-mlm", _argv(root, out, "--scheme", "{gradual: 1}"))
    argv = _argv(root, out, "--scheme", "0-2")
    argv[argv.index("--test") + 1] = str(root / "eval" / "nld" / "dev.jsonl")
    with pytest.raises(XltError, match="share \\(language, split\\)"):
        run_verb("adapt-mlm", argv)
    with pytest.raises(XltError, match="--bootstrap-confidence in \\(0, 1\\), got 1000 and 95.0"):
        run_verb("adapt-mlm", _argv(root, out, "--scheme", "0-2", "--bootstrap-confidence", "95"))
    argv = _argv(root, out, "--scheme", "0-2")
    del argv[argv.index("--compare") : argv.index("--compare") + 2]
    with pytest.raises(XltError, match="--native and --compare together"):
        run_verb("adapt-mlm", argv)
    assert not out.exists()


def test_adapt_mlm_resumes_from_its_checkpoint_with_the_whole_curve(workspace, tmp_path, monkeypatch):
    import xlt.families.adapt.adaptation as adaptation

    root = workspace
    full = tmp_path / "full" / "metrics.json"
    run_verb("adapt-mlm", _argv(root, full, "--scheme", "0-2", "--checkpoint-every", "3"))
    assert not (full.parent / "checkpoint").exists()  # removed once the metrics are written

    real = adaptation.apply_scheme

    def killed_at_step_4(model, scheme, step, epoch, *args, **kwargs):
        if step == 4:
            raise RuntimeError("job killed")
        return real(model, scheme, step, epoch, *args, **kwargs)

    out = tmp_path / "resumed" / "metrics.json"
    monkeypatch.setattr(adaptation, "apply_scheme", killed_at_step_4)
    with pytest.raises(RuntimeError, match="job killed"):
        run_verb("adapt-mlm", _argv(root, out, "--scheme", "0-2", "--checkpoint-every", "3"))
    assert (out.parent / "checkpoint" / "checkpoint.pt").is_file() and not out.exists()
    monkeypatch.setattr(adaptation, "apply_scheme", real)
    run_verb("adapt-mlm", _argv(root, out, "--scheme", "0-2", "--checkpoint-every", "3"))

    def keyed(path):
        return {
            tuple(sorted((k, v) for k, v in r.items() if k != "value")): r["value"] for r in read_json(path)["metrics"]
        }

    uninterrupted, resumed = keyed(full), keyed(out)
    assert set(resumed) == set(uninterrupted)  # step 0, the checkpoint before the kill and after it
    for key, value in uninterrupted.items():
        assert resumed[key] == pytest.approx(value, rel=1e-6, abs=1e-9), key


def test_adapt_mlm_keeps_per_sentence_outputs_of_its_final_evaluations(workspace):
    """The final records (no step) of every set, the test set included, get per-sentence outputs
    and so intervals; the per-step curves keep none (they would be sentences x checkpoints) but
    bring the intervals the job computed from them."""
    import numpy as np

    from xlt.analysis.bootstrap import point_metric
    from xlt.core.metrics import examples_path, read_examples

    root = workspace
    out = root / "run-examples" / "metrics.json"
    run_verb("adapt-mlm", _argv(root, out, "--scheme", "0-2"))
    sets = {(s["lang"], s["split"]): s for s in read_examples(examples_path(out))}
    assert set(sets) == {("nld", "dev"), ("multilingual", "dev"), ("nld", "test")}
    assert all("step" not in s and s["mask_seed"] == 11 for s in sets.values())
    records = read_json(out)["metrics"]
    for (lang, split), one in sets.items():
        final = _values(records, "perplexity", lang=lang, split=split)[None]
        assert point_metric("perplexity", np.array(one["loss"]), np.array(one["tokens"])) == pytest.approx(
            final, rel=1e-6
        )
    table = aggregate([out], resamples=200)
    perplexities = table[table.metric == "perplexity"]
    final, curve = perplexities[perplexities.step.isna()], perplexities[perplexities.step.notna()]
    assert len(final) == 3 and ((final.ci_low < final.value) & (final.value < final.ci_high)).all()
    assert len(curve) == 2 * 3 and ((curve.ci_low < curve.value) & (curve.value < curve.ci_high)).all()
    assert read_json(out)["meta"]["step_intervals"] == {"resamples": 1000, "seed": 0, "confidence": 0.95}
