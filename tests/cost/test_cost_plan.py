"""xlt plan / xlt calibrate: job counts from the workflow's planning code, FLOP arithmetic, profiles."""

import copy
import json

import pytest

from xlt.cli import main
from xlt.core import settings
from xlt.core.errors import XltError
from xlt.core.job_spec import ON, JobSpec
from xlt.cost import calibration, data_size, estimate, profile, retention, shapes, sweep

UNIT = {"name": "unit", "train_flops": 1.0, "eval_flops": 1.0, "overhead_s": 0.0, "gpu": False, "source": "test"}


def test_every_workflow_job_is_planned_once():
    config = settings.load("config.yaml")
    planned = sweep.plan(config, UNIT)
    expected = sum(
        len(jobs)
        for fam in settings.FAMILIES
        if settings.family(config, fam) is not None
        for jobs in settings.plan_module(fam).jobs(config).values()
    )
    expected += sum(len(jobs) for jobs in sweep.shared_jobs(config).values())
    assert planned["total"]["jobs"] == expected == len(planned["jobs"])
    assert sum(f["jobs"] for f in planned["families"].values()) == expected


def test_training_flops_follow_6_params_tokens_and_frozen_layers_skip_backward():
    config = settings.load("config.yaml")
    model = config["models"]["demo-mbert"]
    params = 12 * model["hidden_size"] ** 2 * model["layers"]
    base = [
        ("model", "results/models/demo-mbert"),
        ("train", "results/data/demo-nli/en/train.jsonl"),
        ("epochs", "1"),
        ("max_steps", "10"),
        ("batch_size", "4"),
        ("max_length", "16"),
    ]
    tokens = 10 * 4 * 16
    full = estimate.job_cost(
        config, "freeze_depth", "finetune", "a", JobSpec("finetune", base + [("freeze_depth", "-1")]), UNIT
    )
    assert full.train_tokens == tokens and full.seconds == pytest.approx(6 * params * tokens)
    half = estimate.job_cost(
        config,
        "freeze_depth",
        "finetune",
        "b",
        JobSpec("finetune", base + [("freeze_depth", str(model["layers"] // 2))]),
        UNIT,
    )
    assert half.seconds == pytest.approx(2 * params * tokens + 4 * params / 2 * tokens)


@pytest.mark.parametrize(
    "epochs,max_steps,batch,accum",
    [(2.0, 100000, 100, 1), (2.0, 0, 100, 1), (0.5, 0, 32, 2), (1.0, 300, 32, 1), (3.0, 0, 7, 3)],
)
def test_steps_are_the_training_loops_own(epochs, max_steps, batch, accum):
    """--max-steps > 0 overrides --epochs, as in xlt.core.training (the plan once took the smaller)."""
    from xlt.core.train_args import TrainArgs
    from xlt.core.training import total_optimizer_steps

    config = settings.load("config.yaml")
    job_settings = [
        ("model", "results/models/demo-mbert"),
        ("train", "results/data/demo-nli/en/train.jsonl"),
        ("epochs", str(epochs)),
        ("max_steps", str(max_steps)),
        ("batch_size", str(batch)),
        ("grad_accum", str(accum)),
        ("max_length", "10"),
    ]
    cost = estimate.job_cost(config, "freeze_depth", "finetune", "a", JobSpec("finetune", job_settings), UNIT)
    rows = config["datasets"]["demo-nli"]["sizes"]["train"]
    steps = total_optimizer_steps(
        rows, TrainArgs(epochs=epochs, max_steps=max_steps, batch_size=batch, grad_accum=accum)
    )
    assert cost.train_tokens == steps * batch * 10  # --grad-accum splits each batch of --batch-size


LOOP = {
    **UNIT,
    "train_flops": 1e30,
    "eval_flops": 1e30,
    "overhead_s": 5.0,
    "step_s": 0.01,
    "step_layer_s": 0.002,
    "step_example_layer_s": 0.001,
    "eval_batch_s": 0.1,
    "eval_batch_layer_s": 0.05,
}


def test_overheads_add_per_step_and_per_evaluation_batch():
    """FLOPs free (1e30 FLOP/s): the seconds are start-up + steps x per-step + eval batches x per-batch."""
    config = settings.load("config.yaml")
    layers = config["models"]["demo-mbert"]["layers"]
    dev = config["datasets"]["demo-nli"]["sizes"]["dev"]
    job_settings = [
        ("model", "results/models/demo-mbert"),
        ("train", "results/data/demo-nli/en/train.jsonl"),
        ("dev", "results/data/demo-nli/en/dev.jsonl"),
        ("max_steps", "120"),
        ("eval_every", "50"),
        ("batch_size", "16"),
        ("max_length", "48"),
    ]
    cost = estimate.job_cost(config, "freeze_depth", "finetune", "a", JobSpec("finetune", job_settings), LOOP)
    evaluations = 3  # after steps 50, 100 and the last (120)
    per_step = 0.01 + 0.002 * layers + 0.001 * 16 * layers
    per_batch = 0.1 + 0.05 * layers
    assert cost.eval_tokens == evaluations * dev * 48
    assert cost.seconds == pytest.approx(5.0 + 120 * per_step + evaluations * -(-dev // 64) * per_batch, rel=1e-9)
    # an evaluation-only job: its batches are --batch-size wide, no steps
    test = config["datasets"]["demo-nli"]["sizes"]["test"]
    only = estimate.job_cost(
        config,
        "freeze_depth",
        "evaluate_xnli",
        "a",
        JobSpec(
            "evaluate",
            [
                ("model", "results/models/demo-mbert"),
                ("data", "results/data/demo-nli/qaa/test.jsonl"),
                ("batch_size", "10"),
                ("max_length", "48"),
            ],
        ),
        LOOP,
    )
    assert only.seconds == pytest.approx(5.0 + -(-test // 10) * per_batch, rel=1e-9)


def test_a_cached_frozen_prefix_runs_once_and_steps_run_the_top_layers_only():
    config = settings.load("config.yaml")
    model = config["models"]["demo-mbert"]
    layers, params = model["layers"], 12 * model["hidden_size"] ** 2 * model["layers"]
    rows = config["datasets"]["demo-nli"]["sizes"]["train"]
    job_settings = [
        ("model", "results/models/demo-mbert"),
        ("train", "results/data/demo-nli/en/train.jsonl"),
        ("max_steps", "10"),
        ("batch_size", "4"),
        ("max_length", "16"),
        ("freeze_depth", "9"),
    ]
    top = params * (layers - 9) / layers
    flops = {**UNIT, "eval_flops": 1e30}
    assert estimate.job_cost(
        config,
        "freeze_depth",
        "finetune",
        "a",
        JobSpec("finetune", job_settings + [("cache_frozen_prefix", ON)]),
        flops,
    ).seconds == pytest.approx(6 * top * 10 * 4 * 16 + 2 * (params - top) * rows * 16)
    assert estimate.job_cost(
        config, "freeze_depth", "finetune", "a", JobSpec("finetune", job_settings + [("prefix_states", "store")]), flops
    ).seconds == pytest.approx(6 * top * 10 * 4 * 16)
    steps_only = {**LOOP, "overhead_s": 0.0}
    assert estimate.job_cost(
        config,
        "freeze_depth",
        "finetune",
        "a",
        JobSpec("finetune", job_settings + [("cache_frozen_prefix", ON)]),
        steps_only,
    ).seconds == pytest.approx(10 * (0.01 + (0.002 + 0.001 * 4) * (layers - 9)))


def test_self_training_trains_once_and_once_more_each_round():
    config = settings.load("config.yaml")
    job_settings = [
        ("mode", "self_train"),
        ("model", "results/models/demo-mbert"),
        ("split", "results/runs/monox/splits/x/seed1"),
        ("max_steps", "20"),
        ("batch_size", "4"),
        ("max_length", "16"),
        ("rounds", "2"),
    ]
    cost = estimate.job_cost(config, "monox", "distill", "a", JobSpec("distill", job_settings), UNIT)
    finetune = estimate.job_cost(
        config, "monox", "distill", "a", JobSpec("distill", [("mode", "finetune"), *job_settings[1:-1]]), UNIT
    )
    assert cost.train_tokens == 3 * finetune.train_tokens == 3 * 20 * 4 * 16


def test_a_profile_without_overheads_plans_flops_and_start_up_only():
    config = settings.load("config.yaml")
    job_settings = [
        ("model", "results/models/demo-mbert"),
        ("train", "results/data/demo-nli/en/train.jsonl"),
        ("max_steps", "10"),
    ]
    bare = {k: v for k, v in LOOP.items() if k not in profile.OVERHEADS[1:]}
    assert estimate.job_cost(
        config, "freeze_depth", "finetune", "a", JobSpec("finetune", job_settings), bare
    ).seconds == pytest.approx(5.0)
    assert (
        estimate.job_cost(config, "freeze_depth", "finetune", "a", JobSpec("finetune", job_settings), LOOP).seconds
        > 5.5
    )


def test_every_built_in_profile_has_every_overhead():
    """Every key present; step_example_layer_s may be 0 where a two-batch-size fit folds it into the
    measured FLOP rate (h100, a100), but a step and an evaluation batch always cost something."""
    for name, known in profile.KNOWN.items():
        assert all(known[key] >= 0 for key in profile.OVERHEADS), name
        assert known["overhead_s"] > 0 and known["step_s"] > 0 and known["step_layer_s"] > 0, name
        assert known["eval_batch_s"] > 0 and known["eval_batch_layer_s"] > 0, name


def test_paper_plan_on_h100_covers_every_family_with_hub_cache(capsys):
    assert main(["plan", "--config", "config/paper.yaml", "--gpu", "h100", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    config = settings.load("config/paper.yaml")
    enabled = {f for f in settings.FAMILIES if settings.family(config, f) is not None}
    assert enabled <= set(result["families"])
    assert all(result["families"][f]["hours"] > 0 and result["families"][f]["peak_memory_gib"] > 0 for f in enabled)
    assert result["total"]["hub_cache_gib"] > 1  # three hub models, mBERT alone ~0.7 GiB
    assert result["total"]["hours"] == pytest.approx(sum(f["hours"] for f in result["families"].values()))


def test_unknown_gpu_is_a_clear_error(capsys):
    assert main(["plan", "--config", "config.yaml", "--gpu", "tpu9"]) == 2
    assert "not a known accelerator" in capsys.readouterr().err


def test_saved_calibration_is_used_and_checked(tmp_path):
    path = tmp_path / "t.json"
    path.write_text(json.dumps({"name": "x", "train_flops": 1e9}))
    with pytest.raises(XltError, match="rerun `xlt calibrate"):
        profile.load(None, path)
    path.write_text(json.dumps(UNIT))
    old = profile.load(None, path)  # a calibration from before the loop overheads: they plan as 0, and it says so
    assert old["name"] == "unit" and old["step_s"] == 0.0 and "rerun `xlt calibrate" in old["source"]
    path.write_text(json.dumps(LOOP))
    assert profile.load(None, path) == LOOP
    assert profile.load(None, tmp_path / "absent.json")["name"] == "cpu"


@pytest.mark.slow
def test_calibrate_measures_positive_throughput():
    result = calibration.calibrate(
        seq_lengths=(8, 16), hidden_size=64, layers=1, batch_size=2, budget_s=0.4, device="cpu", threads=1, loop_steps=5
    )
    assert result["train_flops"] > 0 and result["eval_flops"] > 0 and result["overhead_s"] > 0
    assert [r["seq_length"] for r in result["measured"]] == [8, 16]
    assert result["threads"] == 1 and all(result[key] >= 0 for key in profile.OVERHEADS)
    # a training step and an evaluation batch take time even without FLOPs: the fitted overhead at
    # each probed shape (how the fit splits it between its terms moves with the machine's load)
    for m in result["loop_measured"]:
        overhead = (
            result["step_s"] + m["layers"] * (result["step_layer_s"] + m["batch_size"] * result["step_example_layer_s"])
            if m["mode"] == "train"
            else result["eval_batch_s"] + m["layers"] * result["eval_batch_layer_s"]
        )
        assert overhead > 0, m
    assert [(m["mode"], m["layers"]) for m in result["loop_measured"]] == [
        ("train", 1),
        ("train", 1),
        ("eval", 1),
        ("train", 8),
        ("train", 8),
        ("eval", 8),
    ]


def test_overhead_fit_recovers_known_coefficients_and_clamps_negatives():
    rows = [[1.0, layers, batch * layers] for layers in (1, 8) for batch in (8, 32)]
    assert calibration.least_squares(rows, [0.01 + 0.002 * r[1] + 0.0005 * r[2] for r in rows]) == pytest.approx(
        [0.01, 0.002, 0.0005]
    )
    assert calibration.least_squares([[1.0, 1], [1.0, 8]], [0.02, 0.01])[1] == 0.0  # a negative slope is noise


def test_the_shared_prefix_pass_is_planned_as_one_forward_pass_and_its_store():
    config = settings.load("config.yaml")
    config["freeze_depth"].update(
        cache_frozen_prefix=True, prefix_states={"shared": True, "storage_dtype": "float16", "max_gib": 64}
    )
    job = settings.plan_module("freeze_depth").jobs(config)["prefix_states"]["demo-mbert"]
    cost = estimate.job_cost(config, "freeze_depth", "prefix_states", "demo-mbert", job.spec, UNIT)
    model, rows = config["models"]["demo-mbert"], data_size.rows(config, "demo-nli", "train")
    tokens = rows * 48  # every training example at max_length, an upper bound
    assert cost.train_tokens == 0 and cost.eval_tokens == tokens
    assert cost.seconds == 2 * 12 * model["hidden_size"] ** 2 * model["layers"] * tokens  # all 12 layers, UNIT flops
    assert cost.disk_gib == 13 * tokens * model["hidden_size"] * 2 / 2**30  # depths 0..12 in float16


@pytest.mark.slow
def test_disk_counts_a_model_only_for_the_rules_that_keep_one(dry_runs):
    # the rules whose outputs hold a model directory, read off the paper config's dry run: MonoX
    # teachers and students and adapt runs keep metrics and logits only
    keeps, rule = set(), None
    for line in dry_runs.output("config/paper.yaml").splitlines():
        if line.startswith(("rule ", "localrule ")) and line.rstrip().endswith(":"):
            rule = line.split()[1].rstrip(":")
        elif line.strip().startswith("output:") and any(
            o.strip().rstrip(",").endswith("/model") for o in line.split(":", 1)[1].split(",")
        ):
            keeps.add(rule)
    assert keeps == set(retention.keeps_model()) - {"build_demo_model"}  # the paper config builds no demo model
    planned = sweep.plan(settings.load("config/paper.yaml"), profile.load("h100", None))
    by_rule = {}
    for job in planned["jobs"]:
        by_rule.setdefault(job["rule"], []).append(job)
    assert all(j["disk_gib"] == 0 for r in ("distill", "adapt_mlm") for j in by_rule[r])
    # a teacher keeps its logits (xlt.cost.outputs), not RoBERTa-large's 1.3 GiB of weights
    assert all(0 < j["disk_gib"] < 0.1 for j in by_rule["train_teacher"])
    # mBERT's fp32 weights: kept for the freeze_depth runs alignment analyses, temp() for the others
    kept = {
        path.split("/")[3] for path in settings.plan_module("alignment").kept_models(settings.load("config/paper.yaml"))
    }
    assert len(kept) == 5  # four depths of the cased sweep and the uncased anchor at depth -1
    assert all(j["disk_gib"] > 0.5 and j["temp_gib"] == 0 for j in by_rule["finetune"] if j["run_id"] in kept)
    assert all(j["disk_gib"] == 0 and j["temp_gib"] > 0.5 for j in by_rule["finetune"] if j["run_id"] not in kept)
    assert all(
        j["disk_gib"] == 0 and j["temp_gib"] > 0.5
        for r in ("train_sbert", "train_dual")
        for j in by_rule[r]
        if "distill" not in j["run_id"]
    )  # the distilled student also keeps its teacher's vectors (outputs)
    # checkpoints are scratch while a job runs, not kept
    assert max(j["scratch_gib"] for j in planned["jobs"]) == planned["total"]["scratch_gib"] > 0


def test_a_cached_hub_model_is_planned_with_its_own_shape(tmp_path, monkeypatch):
    from xlt.rehearse.models import HIDDEN, write_model

    config = settings.load("config/paper.yaml")
    assert shapes.model_shape(config, "bert-base-multilingual-cased") == (119547, 768, 12)  # not cached: known shape
    write_model(tmp_path / "hub", "bert-base-multilingual-cased", None, 12, ["en"])
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    vocab, hidden, layers = shapes.model_shape(config, "bert-base-multilingual-cased")
    assert (hidden, layers) == (HIDDEN, 12) and vocab < 1000
    # a local directory is not a hub id: its shape is the config's, never looked up in the hub cache
    local = settings.load("config.yaml")
    local["models"]["mine"] = {"source": "local", "path": str(tmp_path / "model"), "layers": 6}
    assert shapes.model_shape(local, str(tmp_path / "model"))[2] == 6


def test_prepared_data_are_planned_with_their_own_row_counts(tmp_path, monkeypatch):
    # the cost ledger plans after the data step: its rows are the prepared files', not the hub's sizes
    config = settings.load("config/paper.yaml")
    assert data_size.rows(config, "xnli", "train") == 392702
    monkeypatch.chdir(tmp_path)
    (tmp_path / "results" / "data" / "xnli").mkdir(parents=True)
    (tmp_path / "results" / "data" / "xnli" / "info.json").write_text(
        json.dumps({"counts": {"en/train": 501, "en/test": 60, "de/test": 70}})
    )
    assert (data_size.rows(config, "xnli", "train"), data_size.rows(config, "xnli", "test")) == (501, 70)
    assert data_size.rows(config, "xnli", "dev") == 2490  # not prepared: the known size


def test_adapt_evaluations_are_planned_from_each_runs_flags():
    """A run of adapt.scheme_eval scores its sets as often as its flags say: the multilingual set at
    every checkpoint, once on the selected model (final) or never; the target set every
    scheme_eval.eval_every steps. A curve run is planned as before."""

    def eval_tokens(multilingual: str, eval_every=None) -> dict:
        config = settings.load("config.yaml")
        config["adapt"].update(
            curve={"schemes": ["0-12"], "training": {}},
            scheme_eval={"eval_every": eval_every, "multilingual": multilingual},
        )
        planned = settings.plan_module("adapt").jobs(config)["adapt_mlm"]
        return {
            run_id: estimate.job_cost(config, "adapt", "adapt_mlm", run_id, job.spec, UNIT).eval_tokens
            for run_id, job in planned.items()
        }

    curve, scheme = "demo-mbert-layers0-12-seed1", "demo-mbert-layers9-12-seed1"
    demo = settings.load("config.yaml")
    default = {
        run_id: estimate.job_cost(demo, "adapt", "adapt_mlm", run_id, job.spec, UNIT).eval_tokens
        for run_id, job in settings.plan_module("adapt").jobs(demo)["adapt_mlm"].items()
    }
    every, final, none = eval_tokens("checkpoints"), eval_tokens("final"), eval_tokens("none")
    assert every == default  # scheme_eval.eval_every null, multilingual at checkpoints: today's plan
    assert final[curve] == none[curve] == default[curve]
    # 100 steps, checkpoints at 0, 25, 50, 75, 100: the multilingual set 5 times, once, never
    assert every[scheme] - none[scheme] == 5 * (final[scheme] - none[scheme]) > 0
    # the target set at 5 checkpoints (every 25 steps), at 3 (every 50: 0, 50, 100) or at 2 (every 100)
    fewer = {k: none[scheme] - eval_tokens("none", eval_every=k)[scheme] for k in (50, 100)}
    assert fewer[50] > 0 and 2 * fewer[100] == 3 * fewer[50]


def test_a_declared_dataset_no_job_reads_is_not_planned():
    """The workflow prepares what its jobs read: a dataset only declared (the cut-down rehearsal's
    CLS domains beyond its two MonoX tasks) gets no prepare_data job in the plan either."""
    config = settings.load("config.yaml")
    unused = copy.deepcopy(config["datasets"]["demo-nli"])
    config["datasets"]["spare-nli"] = unused
    prepared = {run_id for family, rule, run_id, _ in sweep.all_jobs(config) if rule == "prepare_data"}
    assert "spare-nli" not in prepared and "demo-nli" in prepared
    paper = settings.load("config/paper.yaml")
    assert {run_id for _, rule, run_id, _ in sweep.all_jobs(paper) if rule == "prepare_data"} == set(paper["datasets"])
