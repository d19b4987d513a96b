"""The dual-encoder sweep (seed 004): model x objective x margin x scale x pooling x batch size x freeze depth x seed.

Each run trains a LaBSE-style dual encoder (`train_dual`), then scores Tatoeba-style
retrieval (`tatoeba_dual`, `xlt eval-embeddings`) and, with `dual.mining`, BUCC-style
mining per language pair (`mine`) on files `make_bucc` writes once per pair. With
`dual.baselines` the untrained encoder, one per (model, pooling), gets the same Tatoeba
evaluation (`tatoeba_dual` again; its rows say trained false). The objective axis adds runs
distilled from a fixed teacher (`mse_distill`, xlt.families.dual.distill_plan: no margin or scale)
and the teacher's own evaluation row. With `dual.sts` every evaluation also scores STS. Everything
a job needs comes from the validated settings here.
"""

from __future__ import annotations

import json

from xlt.core import plan as common
from xlt.core import settings
from xlt.core.errors import XltError
from xlt.core.job_spec import ON, JobSpec
from xlt.core.plan import Job
from xlt.families.dual import budget, comparison, costing, distill_plan, mining_plan
from xlt.families.dual.bitext import bitext_files, require_bitext
from xlt.families.dual.bitext import bitext_spec as bitext_spec
from xlt.families.dual.choices import DUAL_OBJECTIVES
from xlt.families.dual.mining_plan import bucc_dir as bucc_dir
from xlt.families.dual.mining_plan import mining_pairs as mining_pairs
from xlt.families.dual.paths import BUCC as BUCC
from xlt.families.dual.paths import FAMILY as FAMILY
from xlt.families.dual.paths import MINED as MINED
from xlt.families.dual.paths import MODEL as MODEL
from xlt.families.dual.paths import PREFIX_STATES as PREFIX_STATES
from xlt.families.dual.paths import RUN as RUN
from xlt.families.dual.paths import TATOEBA as TATOEBA
from xlt.families.dual.paths import TRAIN_CURVE as TRAIN_CURVE
from xlt.families.dual.paths import TRAIN_METRICS as TRAIN_METRICS
from xlt.families.dual.tatoeba_plan import sts_sets as sts_sets
from xlt.families.dual.tatoeba_plan import tatoeba_job
from xlt.frozen_prefix.store_plan import check_prefix_states, shared_prefix, store_settings, stored_depths

PATHS = common.family_paths(FAMILY)
TABLE, SUMMARY, PLOT, CURVES = PATHS.table, PATHS.summary, PATHS.plot, PATHS.curves
PLOT_KINDS = ("dual-error-vs-margin", "dual-error-vs-scale", "dual-tatoeba-heatmap", "dual-mining", "dual-objectives")
# the sweep axes of a run, in the order the metrics files store them (then `trained`)
AXES = ("objective", "margin", "scale", "pooling", "batch_size", "freeze_depth", "seed", budget.AXIS, comparison.AXIS)
UNTRAINED = "untrained"  # run id suffix of a baseline, as in the sbert family
SWEPT = ("objectives", "margins", "scales", "poolings", "batch_sizes", "freeze_depths", "seeds")
ADDITIVE = "additive_margin"

# what the tables that join families read (xlt.core.family_plan.FamilyPlan)
READS = ("sbert",)  # the distilled students' teacher can be an sbert run (distill_plan)
EVALUATIONS = ("tatoeba_dual",)
LEDGER = {
    "prefix_states_dual": (("model",), None),
    "train_dual": (("run_id",), TRAIN_METRICS),
    "tatoeba_dual": (("run_id",), TATOEBA),
    "mine": (("run_id", "pair"), MINED),
}
KEEPS_MODEL = ("train_dual",)
BASELINE = ("trained", False)  # the untrained encoder
# the zero-shot teacher, then the additive-margin runs, then the distilled students: each against
# every earlier objective on the same items (xlt.analysis.compare)
OBJECTIVE_ORDER = (distill_plan.TEACHER, *DUAL_OBJECTIVES)
REFERENCE_AXIS = ("objective", OBJECTIVE_ORDER)
# whether a run's frozen prefix was cached follows from its freeze depth (-1 has none)
DERIVED_AXES = frozenset({"cache_frozen_prefix"})
# the training budget: runs of different budgets are still paired, and each row says both (xlt.analysis.compare)
BUDGET_AXIS = budget.AXIS
# each objective's own batch (256 pairs of the margin, 64 sentences of the authors' distillation) and
# start (a student starts from the model, taught by the teacher; a margin run from either): objectives
# are paired across them, at the budgets and starts their rows state
RECIPE_AXES = frozenset({"batch_size", comparison.AXIS})
NAMED_AXES = (comparison.AXIS,)  # every paired row states both runs' start (start_a, start_b)
TRAINING_RECORD = "train_dual"  # its train.json: what each run trained, for the comparison's budget columns
ORDERS = {
    "objective": lambda value: (
        OBJECTIVE_ORDER.index(value) if value in OBJECTIVE_ORDER else len(OBJECTIVE_ORDER),
        value,
    )
}
# the family's cost hooks (xlt.core.family_plan), which `xlt plan` prices its jobs with
example_shape = costing.example_shape
output_bytes = costing.output_bytes
prefix_store = costing.prefix_store
token_forms = costing.token_forms


def check_grad_accum(grad_accum: int, where: str) -> None:
    """The additive-margin dual encoder trains without gradient accumulation: its loss scores each
    pair against the other pairs of its batch (in-batch negatives), so micro-batches would give every
    pair fewer negatives, another loss, not the same batch in less memory (no cached-negatives scheme
    here). mse_distill accumulates: its MSE is a mean over examples, which xlt.core.training's
    example-share weighting of micro-batches sums to exactly."""
    if grad_accum > 1:
        raise XltError(
            f"{where} {grad_accum}: the dual encoder's loss uses in-batch negatives, so splitting a batch "
            "into micro-batches changes the loss (fewer negatives per pair), not only the memory; set it "
            "to 1 and pick a batch size that fits memory (dual.batch_sizes / --batch-size), or freeze "
            "a prefix (dual.freeze_depths) to save memory"
        )


def batch_sizes(config: dict) -> list[int]:
    """`dual.batch_sizes`; without it the one batch size of the family's training settings
    (a default that follows another setting, so the schema cannot hold it)."""
    family = config[FAMILY]
    return family["batch_sizes"] if "batch_sizes" in family else [settings.training(config, FAMILY)["batch_size"]]


def check(config: dict) -> None:

    family = config[FAMILY]
    for model in family["models"]:
        settings.require(config, "models", model, f"{FAMILY}.models")
        settings.freeze_depths(config, family["freeze_depths"], model, f"{FAMILY}.freeze_depths", head=False)
    for role in ("train", "dev", "tatoeba"):
        spec = bitext_spec(config, role)
        require_bitext(config, spec["dataset"], f"{FAMILY}.{role}.dataset")
        settings.require_split(config, spec["dataset"], spec["split"], spec["langs"], f"{FAMILY}.{role}")
    datasets = [sts["dataset"] for sts in sts_sets(config)]
    if len(set(datasets)) < len(datasets):
        raise XltError(f"{FAMILY}.sts lists a dataset more than once ({datasets}); its rows would be one set's")
    for sts in sts_sets(config):
        settings.require_task(config, sts["dataset"], ("sts",), f"{FAMILY}.sts.dataset")
        settings.require_split(config, sts["dataset"], sts["split"], sts["langs"], f"{FAMILY}.sts")
    distill_plan.check(config, FAMILY)
    comparison.check(config, FAMILY, distill_plan.distilling(config, FAMILY))
    if distill_plan.distilling(config, FAMILY) and family["distill"]["match_budget"]:
        comparison.check_lengths(
            FAMILY,
            settings.training(config, FAMILY)["max_length"],
            distill_plan.training(config, FAMILY)["max_length"],
            settings.eval_max_length(config),
        )
    check_prefix_states(config, FAMILY, family["freeze_depths"], f"{FAMILY}.freeze_depths")
    if ADDITIVE in family["objectives"]:  # distillation's loss is a mean over examples: it accumulates exactly
        check_grad_accum(
            settings.training(config, FAMILY).get("grad_accum", 1), "training.grad_accum (dual's training)"
        )
    for axis in SWEPT:
        values = batch_sizes(config) if axis == "batch_sizes" else family[axis]
        if len(set(values)) != len(values):
            raise XltError(f"{FAMILY}.{axis} lists a value more than once ({values}); each value is one sweep point")
    mining_plan.check(config, require_bitext)


def runs(config: dict) -> list[dict]:
    """One row per dual-encoder training run: additive-margin runs (model x margin x scale x pooling
    x batch size x freeze depth x seed, from the pretrained model), the objective comparison's margin
    runs not among them (its starts and seeds, xlt.families.dual.comparison), then distilled runs
    (xlt.families.dual.distill_plan.runs, at the comparison's seeds)."""
    family = settings.family(config, FAMILY)
    if family is None:
        return []
    points = [
        (margin, scale, comparison.PRETRAINED, seed)
        for margin in family["margins"]
        for scale in family["scales"]
        for seed in family["seeds"]
    ]
    points += [point for point in comparison.margin_points(config, FAMILY) if point not in points]
    additive = [
        comparison.margin_row(config, FAMILY, model, margin, scale, pooling, batch_size, depth, seed, start)
        for model in family["models"]
        if ADDITIVE in family["objectives"]
        for start in dict.fromkeys(point[2] for point in points)
        for margin in dict.fromkeys(point[0] for point in points)
        for scale in dict.fromkeys(point[1] for point in points)
        for pooling in family["poolings"]
        for batch_size in batch_sizes(config)
        for depth in family["freeze_depths"]
        for seed in dict.fromkeys(point[3] for point in points)
        if (margin, scale, start, seed) in points
    ]
    seeds = comparison.spec(config, FAMILY)["seeds"]
    budgets = [row[budget.AXIS] for row in additive]
    return additive + distill_plan.runs(config, FAMILY, batch_sizes(config), budgets, seeds)


def baselines(config: dict) -> list[dict]:
    """With `dual.baselines`, one untrained encoder per (model, pooling) of the sweep: the
    pretrained model scored by the same Tatoeba evaluation as the trained runs."""
    family = settings.family(config, FAMILY)
    if family is None or not family["baselines"]:
        return []
    return [
        {"run_id": f"{model}-{pooling}-{UNTRAINED}", "model": model, "pooling": pooling}
        for model in family["models"]
        for pooling in family["poolings"]
    ]


def _start(config: dict, row: dict) -> tuple[str, object]:
    """(--model, its inputs) of a training run: the pretrained model, or the distillation teacher's
    checkpoint for a comparison run started there (xlt.families.dual.comparison)."""
    if row[comparison.AXIS] == comparison.TEACHER:
        teacher = distill_plan.teacher(config, FAMILY)
        return teacher["ref"], teacher["inputs"]
    return common.model_ref(config, row["model"]), common.model_input(config, row["model"])


def _train_axes(row: dict) -> dict:
    """What train-dual's --axes adds to its own: the model, the planned budget and the start."""
    return {"model": row["model"], budget.AXIS: row[budget.AXIS], comparison.AXIS: row[comparison.AXIS]}


def _prefix_settings(config: dict, row: dict) -> tuple[list, dict]:
    """A run's frozen-prefix settings and inputs: the sweep's store, a per-job cache or none (depth -1
    freezes nothing, so it trains uncached). The store holds the pretrained model's states: a run
    started from the teacher's checkpoint caches its own."""
    family = config[FAMILY]
    if row["freeze_depth"] < 0 or not family["cache_frozen_prefix"]:
        return [], {}
    if shared_prefix(config, FAMILY) and row[comparison.AXIS] == comparison.PRETRAINED:
        store = PREFIX_STATES.format(model=row["model"])
        return [("prefix_states", store)], {"prefix_states": store}
    return [("cache_frozen_prefix", ON)], {}


def _prefix_states_jobs(config: dict, rows: list[dict]) -> list[Job]:
    """One `xlt dual-prefix-states` job per model whose sweep has a depth >= 0, storing all of them."""
    family, training = config[FAMILY], settings.training(config, FAMILY)
    store, train = family["prefix_states"], bitext_spec(config, "train")
    return [
        Job(
            model,
            JobSpec(
                "dual-prefix-states",
                [
                    ("model", common.model_ref(config, model)),
                    *[("train", f) for f in bitext_files(config, "train")],
                    *common.prompt_settings(config, model),
                    *store_settings(depths, training, batch_sizes(config)[0], store, PREFIX_STATES.format(model=model)),
                ],
            ),
            axes={"model": model},
            inputs={"model": common.model_input(config, model), "train": common.data_info(train["dataset"])},
        )
        for model, depths in stored_depths(rows, family["models"])
    ]


def jobs(config: dict) -> dict[str, dict[str, Job]]:
    """rule -> key -> Job: `train_dual` and `tatoeba_dual` by run id (trained runs, then the
    baselines), `make_bucc` by language pair, `mine` by "run id/pair" (the rule's wildcards in
    output order) and, with prefix_states.shared, `prefix_states_dual` by model name."""
    rows = runs(config)
    out = {"train_dual": {}, "tatoeba_dual": {}, "make_bucc": {}, "mine": {}}
    if not rows:
        return out
    family = config[FAMILY]
    training = settings.training(config, FAMILY)
    train, tatoeba = [], []
    for row in rows:
        run_id, run_dir = row["run_id"], RUN.format(run_id=row["run_id"])
        axes = {"model": row["model"]} | {axis: row[axis] for axis in AXES} | {"trained": True}
        start_ref, start_inputs = _start(config, row)
        spec = [("model", start_ref)]
        spec += [("train", f) for f in bitext_files(config, "train")]
        spec += [("dev", f) for f in bitext_files(config, "dev")]
        prefix, prefix_inputs = _prefix_settings(config, row)
        # dev selection scores retrieval by the Tatoeba test's rule (one rule for both)
        spec.append(("match", family["tatoeba"]["match"]))
        if row["objective"] == ADDITIVE:  # the command line as before the objective axis
            objective, run_training = (
                [
                    ("margin", row["margin"]),
                    ("scale", row["scale"]),
                    ("pooling", row["pooling"]),
                    ("symmetric", family["symmetric"]),
                ],
                training,
            )
        else:  # distilled: trains on raw text (no frozen-prefix store), the teacher is an input
            (objective, teacher_inputs), run_training = (
                distill_plan.train_settings(config, FAMILY),
                distill_plan.training(config, FAMILY),
            )
            if row["max_steps"] is not None:  # the budget-matched twin (distill.match_budget)
                run_training = {**run_training, "max_steps": row["max_steps"]}
            objective.append(("pooling", row["pooling"]))
            prefix, prefix_inputs = [], teacher_inputs
        spec += [
            *objective,
            *common.prompt_settings(config, row["model"]),
            ("freeze_depth", row["freeze_depth"]),
            *prefix,
            ("seed", row["seed"]),
            # the batch size is a sweep axis: it replaces training.batch_size
            *common.config_settings({**run_training, "batch_size": row["batch_size"]}),
            *common.monitor_settings(config),
            ("axes", json.dumps(_train_axes(row))),
            ("run_id", run_id),
            ("out", run_dir),
        ]
        train.append(
            Job(
                run_id,
                JobSpec("train-dual", spec),
                axes=axes,
                inputs={
                    "model": start_inputs,
                    "train": common.data_info(bitext_spec(config, "train")["dataset"]),
                    "dev": common.data_info(bitext_spec(config, "dev")["dataset"]),
                    **prefix_inputs,
                },
            )
        )
        model = MODEL.format(run_id=run_id)
        tatoeba.append(tatoeba_job(config, run_id, model, model, axes))
        out["mine"].update(mining_plan.mine_jobs(config, run_id, model, row, axes))
    for row in baselines(config):  # the pretrained encoder, no training axes
        axes = {"model": row["model"]} | {axis: None for axis in AXES} | {"pooling": row["pooling"], "trained": False}
        tatoeba.append(
            tatoeba_job(
                config,
                row["run_id"],
                common.model_ref(config, row["model"]),
                common.model_input(config, row["model"]),
                axes,
            )
        )
    teacher = distill_plan.teacher_row(config, FAMILY)
    if teacher:  # the fixed teacher, scored zero-shot by the same evaluation (objective "teacher")
        axes = (
            {"model": teacher["model"]}
            | {axis: None for axis in AXES}
            | {"objective": distill_plan.TEACHER, "pooling": teacher["pooling"], "trained": True}
        )
        tatoeba.append(
            tatoeba_job(config, teacher["run_id"], teacher["ref"], teacher["inputs"], axes, layer=teacher["layer"])
        )
    out["train_dual"], out["tatoeba_dual"] = common.by_run_id(train), common.by_run_id(tatoeba)
    out["make_bucc"] = mining_plan.make_bucc_jobs(config)
    if shared_prefix(config, FAMILY):
        out["prefix_states_dual"] = common.by_run_id(_prefix_states_jobs(config, rows))
    return out


def metrics_files(config: dict) -> list[str]:
    """What `aggregate_dual` collects: per run its train.json, tatoeba.json and one file per
    mined pair, then each baseline's tatoeba.json."""
    files = []
    for row in runs(config):
        run_id = row["run_id"]
        files += [TRAIN_METRICS.format(run_id=run_id), TATOEBA.format(run_id=run_id)]
        files += [MINED.format(run_id=run_id, pair=pair) for pair in mining_pairs(config)]
    teacher = distill_plan.teacher_row(config, FAMILY)
    return (
        files
        + [TATOEBA.format(run_id=row["run_id"]) for row in baselines(config)]
        + ([TATOEBA.format(run_id=teacher["run_id"])] if teacher else [])
    )


def curve_files(config: dict) -> list[str]:
    """The training curve of every trained run (untrained baselines have none)."""
    return common.run_files(TRAIN_CURVE, jobs(config)["train_dual"])


def plot_kinds(config: dict) -> list[str]:
    """The figures a sweep can draw: a line against an axis needs two values of it; mining needs mining."""
    family = config[FAMILY]
    skipped = {
        "dual-error-vs-margin": len(family["margins"]) < 2,
        "dual-error-vs-scale": len(family["scales"]) < 2,
        "dual-mining": not mining_pairs(config),
        "dual-objectives": not distill_plan.distilling(config, FAMILY),
    }
    return [kind for kind in PLOT_KINDS if not skipped.get(kind)]


def targets(config: dict) -> list[str]:
    if not runs(config):
        return []
    return common.standard_targets(PATHS, plot_kinds(config), curve_files(config))
