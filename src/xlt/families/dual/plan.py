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
from pathlib import Path

from xlt.core import settings
from xlt.core.errors import XltError
from xlt.core.metrics import curve_path
from xlt.core.plan import (
    RESULTS,
    Job,
    by_run_id,
    check_prefix_states,
    data_file,
    data_info,
    flag_args,
    model_input,
    model_ref,
    monitor_args,
    prompt_args,
    shared_prefix,
    store_args,
    stored_depths,
)
from xlt.families.dual import budget, distill_plan
from xlt.families.dual.choices import DUAL_OBJECTIVES

FAMILY = "dual"
RUN = f"{RESULTS}/runs/{FAMILY}/{{run_id}}"
MODEL = f"{RUN}/model"
TRAIN_METRICS = f"{RUN}/train.json"
TRAIN_CURVE = str(curve_path(TRAIN_METRICS))  # written beside the metrics by MetricsFile.write
TATOEBA = f"{RUN}/tatoeba.json"
MINED = f"{RUN}/mine/{{pair}}.json"
BUCC = f"{RESULTS}/bucc/{{pair}}"
TABLE = f"{RESULTS}/tables/{FAMILY}.csv"
SUMMARY = f"{RESULTS}/tables/{FAMILY}_summary.csv"  # rows over several languages (lang avg, ...)
PLOT = f"{RESULTS}/plots/{FAMILY}/{{kind}}.png"
# every training run's loss, learning rate and dev score against the step (xlt plot-curves)
CURVES = f"{RESULTS}/plots/{FAMILY}/training-curves.png"
PLOT_KINDS = ("dual-error-vs-margin", "dual-error-vs-scale", "dual-tatoeba-heatmap", "dual-mining", "dual-objectives")
# the sweep axes of a run, in the order the metrics files store them (then `trained`)
AXES = ("objective", "margin", "scale", "pooling", "batch_size", "freeze_depth", "seed", budget.AXIS)
UNTRAINED = "untrained"  # run id suffix of a baseline, as in the sbert family
SWEPT = ("objectives", "margins", "scales", "poolings", "batch_sizes", "freeze_depths", "seeds")
ADDITIVE = "additive_margin"
# one store of frozen-prefix states per model (the family's training bitext and max_length are the
# sweep's): every train_dual job of a depth >= 0 reads its boundary from it (prefix_states.shared)
PREFIX_STATES = f"{RESULTS}/prefix_states/{FAMILY}/{{model}}"

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
# each objective's own batch (256 pairs of the margin, 64 sentences of the authors' distillation):
# objectives are paired across batch sizes, at the budgets their rows state
RECIPE_AXES = frozenset({"batch_size"})
ORDERS = {
    "objective": lambda value: (
        OBJECTIVE_ORDER.index(value) if value in OBJECTIVE_ORDER else len(OBJECTIVE_ORDER),
        value,
    )
}


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


def example_shape(rule: str, args: list[str]) -> tuple[int, float]:
    """For xlt.cost.estimate: a distillation on single sentences (--distill-examples sentences) has
    two examples a data row, each half its tokens; any other job one a row."""
    flag = "--distill-examples"
    if rule == "train_dual" and flag in args and args[args.index(flag) + 1] == "sentences":
        return 2, 0.5
    return 1, 1.0


def batch_sizes(config: dict) -> list[int]:
    """`dual.batch_sizes`; without it the one batch size of the family's training settings
    (a default that follows another setting, so the schema cannot hold it)."""
    family = config[FAMILY]
    return family["batch_sizes"] if "batch_sizes" in family else [settings.training(config, FAMILY)["batch_size"]]


def bitext_spec(config: dict, role: str) -> dict:
    """`train`, `dev` or `tatoeba` as {dataset, langs, split}. `dev` takes the train dataset
    and languages unless it names its own (the schema fills only its split)."""
    family = config[FAMILY]
    if role == "dev":
        train = family["train"]
        return {"dataset": train["dataset"], "langs": train["langs"], **family["dev"]}
    return family[role]


def bitext_files(config: dict, role: str) -> list[str]:
    spec = bitext_spec(config, role)
    return [data_file(spec["dataset"], lang, spec["split"]) for lang in spec["langs"]]


def mining_pairs(config: dict) -> list[str]:
    """Language pairs mined, as in the BUCC file names (bitext source: LANG-english)."""
    family = settings.family(config, FAMILY)
    if family is None or "mining" not in family:
        return []
    mining = family["mining"]
    if mining["source"] == "bitext":
        return [f"{lang}-{mining['english']}" for lang in mining["langs"]]
    return list(mining["pairs"])


def bucc_dir(config: dict, pair: str) -> str:
    """Local BUCC files are read where they are; the other sources' files are written by make_bucc."""
    mining = config[FAMILY]["mining"]
    return mining["dir"] if mining["source"] == "local" else BUCC.format(pair=pair)


def require_bitext(config: dict, dataset: str, where: str) -> None:
    settings.require_task(config, dataset, ("bitext",), where)


def check(config: dict) -> None:
    from xlt.data.bucc_files import parse_pair

    family = config[FAMILY]
    for model in family["models"]:
        settings.require(config, "models", model, f"{FAMILY}.models")
        n = settings.model_layers(config, model)
        for d in family["freeze_depths"]:
            if not -1 <= d < n:
                raise XltError(
                    f"freeze depth {d} in {FAMILY}.freeze_depths leaves nothing to train in model {model!r} "
                    f"with {n} layers; allowed: -1 (nothing frozen), 0 (embeddings) .. {n - 1}"
                )
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
    check_prefix_states(config, FAMILY, family["freeze_depths"], f"{FAMILY}.freeze_depths")
    if ADDITIVE in family["objectives"]:  # distillation's loss is a mean over examples: it accumulates exactly
        check_grad_accum(
            settings.training(config, FAMILY).get("grad_accum", 1), "training.grad_accum (dual's training)"
        )
    for axis in SWEPT:
        values = batch_sizes(config) if axis == "batch_sizes" else family[axis]
        if len(set(values)) != len(values):
            raise XltError(f"{FAMILY}.{axis} lists a value more than once ({values}); each value is one sweep point")
    if "mining" not in family:
        return
    mining = family["mining"]
    if mining["tune_split"] == mining["test_split"]:
        raise XltError(
            f"{FAMILY}.mining: tune_split and test_split are both {mining['tune_split']!r}; "
            "the threshold must be tuned on another split than the one it is scored on"
        )
    if mining["source"] == "bitext":
        require_bitext(config, mining["dataset"], f"{FAMILY}.mining.dataset")
        for split in (mining["tune_split"], mining["test_split"]):
            settings.require_split(config, mining["dataset"], split, mining["langs"], f"{FAMILY}.mining")
    if mining["source"] == "local" and not Path(mining["dir"]).is_dir():
        raise XltError(
            f"{FAMILY}.mining.dir: {mining['dir']} is not a directory; point it at BUCC-layout files "
            "({src}-{tgt}.{split}.{src|tgt|gold})"
        )
    pairs = mining_pairs(config)
    for pair in pairs:
        try:
            parse_pair(pair)
        except XltError as err:
            raise XltError(f"{FAMILY}.mining: {err}") from None
    if len(set(pairs)) != len(pairs):
        raise XltError(f"{FAMILY}.mining lists a language pair more than once: {pairs}")


def runs(config: dict) -> list[dict]:
    """One row per dual-encoder training run: additive-margin runs (model x margin x scale x pooling
    x batch size x freeze depth x seed), then distilled runs (xlt.families.dual.distill_plan.runs)."""
    family = settings.family(config, FAMILY)
    if family is None:
        return []
    number = settings.number_label
    additive = [
        {
            "run_id": f"{model}-margin{number(margin)}-scale{number(scale)}-{pooling}"
            f"-bs{batch_size}-depth{settings.depth_label(depth)}-seed{seed}",
            "model": model,
            "objective": ADDITIVE,
            "margin": margin,
            "scale": scale,
            "pooling": pooling,
            "batch_size": batch_size,
            "freeze_depth": depth,
            "seed": seed,
            budget.AXIS: budget.sentences_seen(config, FAMILY, settings.training(config, FAMILY), batch_size),
        }
        for model in family["models"]
        if ADDITIVE in family["objectives"]
        for margin in family["margins"]
        for scale in family["scales"]
        for pooling in family["poolings"]
        for batch_size in batch_sizes(config)
        for depth in family["freeze_depths"]
        for seed in family["seeds"]
    ]
    return additive + distill_plan.runs(config, FAMILY, batch_sizes(config), [row[budget.AXIS] for row in additive])


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


def sts_sets(config: dict) -> list[dict]:
    """`dual.sts` as a list of STS sets (one mapping or a list of them in the config; none without it)."""
    sts = config[FAMILY].get("sts")
    return [] if not sts else [sts] if isinstance(sts, dict) else list(sts)


def _sts_files(config: dict) -> tuple[list, list]:
    """`--sts FILE ...` of every `dual.sts` set and their datasets' data inputs (none without it)."""
    sets = sts_sets(config)
    return (
        [
            arg
            for sts in sets
            for lang in sts["langs"]
            for arg in ("--sts", data_file(sts["dataset"], lang, sts["split"]))
        ],
        [data_info(sts["dataset"]) for sts in sets],
    )


def _tatoeba_job(config: dict, run_id: str, model: str, model_files, axes: dict, layer: int | None = None) -> Job:
    """`xlt eval-embeddings` on the Tatoeba (and `dual.sts`) sets: the same command for a trained
    run, a baseline and the distillation teacher (with its own pooled layer)."""
    spec = config[FAMILY]["tatoeba"]
    sts_args, sts_data = _sts_files(config)
    data = [data_info(spec["dataset"]), *[d for d in sts_data if d != data_info(spec["dataset"])]]
    return Job(
        run_id,
        axes=axes,
        inputs={"model": model_files, "data": data[0] if len(data) == 1 else data},
        args=[
            "--model",
            model,
            "--pooling",
            axes["pooling"],
            *(["--layer", layer] if layer is not None else []),
            *prompt_args(config, axes["model"]),
            *[arg for f in bitext_files(config, "tatoeba") for arg in ("--bitext", f)],
            *sts_args,
            "--match",
            spec["match"],
            "--axes",
            json.dumps(axes),
            "--run-id",
            run_id,
            "--family",
            FAMILY,
            "--max-length",
            settings.eval_max_length(config),
            "--out",
            TATOEBA.format(run_id=run_id),
        ],
    )


def _prefix_args(config: dict, row: dict) -> tuple[list, dict]:
    """A run's frozen-prefix flags and inputs: the sweep's store, a per-job cache or none (depth -1
    freezes nothing, so it trains uncached)."""
    family = config[FAMILY]
    if row["freeze_depth"] < 0 or not family["cache_frozen_prefix"]:
        return [], {}
    if shared_prefix(config, FAMILY):
        store = PREFIX_STATES.format(model=row["model"])
        return ["--prefix-states", store], {"prefix_states": store}
    return ["--cache-frozen-prefix"], {}


def _prefix_states_jobs(config: dict, rows: list[dict]) -> list[Job]:
    """One `xlt dual-prefix-states` job per model whose sweep has a depth >= 0, storing all of them."""
    family, training = config[FAMILY], settings.training(config, FAMILY)
    store, train = family["prefix_states"], bitext_spec(config, "train")
    return [
        Job(
            model,
            [
                "--model",
                model_ref(config, model),
                *[arg for f in bitext_files(config, "train") for arg in ("--train", f)],
                *prompt_args(config, model),
                *store_args(depths, training, batch_sizes(config)[0], store, PREFIX_STATES.format(model=model)),
            ],
            axes={"model": model},
            inputs={"model": model_input(config, model), "train": data_info(train["dataset"])},
        )
        for model, depths in stored_depths(rows, family["models"])
    ]


def _make_bucc_args(mining: dict, pair: str) -> list:
    if mining["source"] == "bitext":
        lang = pair.split("-")[0]
        args = [
            arg
            for split in (mining["tune_split"], mining["test_split"])
            for arg in ("--bitext", f"{split}={data_file(mining['dataset'], lang, split)}")
        ]
        return args + ["--gold-fraction", mining["gold_fraction"]]
    args = [
        "--hub-dataset",
        mining["path"],
        "--hub-split",
        mining["hub_split"],
        "--tune-fraction",
        mining["tune_fraction"],
        "--split-names",
        f"{mining['tune_split']},{mining['test_split']}",
    ]
    return args + (["--revision", mining["revision"]] if "revision" in mining else [])


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
    pairs = mining_pairs(config)
    mining = family["mining"] if pairs else None
    train, tatoeba = [], []
    for row in rows:
        run_id, run_dir = row["run_id"], RUN.format(run_id=row["run_id"])
        axes = {"model": row["model"]} | {axis: row[axis] for axis in AXES} | {"trained": True}
        args = ["--model", model_ref(config, row["model"])]
        args += [arg for f in bitext_files(config, "train") for arg in ("--train", f)]
        args += [arg for f in bitext_files(config, "dev") for arg in ("--dev", f)]
        prefix_args, prefix_inputs = _prefix_args(config, row)
        # dev selection scores retrieval by the Tatoeba test's rule (one rule for both)
        args += ["--match", family["tatoeba"]["match"]]
        if row["objective"] == ADDITIVE:  # the command line as before the objective axis
            objective_args, run_training = (
                [
                    "--margin",
                    row["margin"],
                    "--scale",
                    row["scale"],
                    "--pooling",
                    row["pooling"],
                    "--symmetric",
                    family["symmetric"],
                ],
                training,
            )
        else:  # distilled: trains on raw text (no frozen-prefix store), the teacher is an input
            (objective_args, teacher_inputs), run_training = (
                distill_plan.train_args(config, FAMILY),
                distill_plan.training(config, FAMILY),
            )
            if row["max_steps"] is not None:  # the budget-matched twin (distill.match_budget)
                run_training = {**run_training, "max_steps": row["max_steps"]}
            objective_args += ["--pooling", row["pooling"]]
            prefix_args, prefix_inputs = [], teacher_inputs
        args += [
            *objective_args,
            *prompt_args(config, row["model"]),
            "--freeze-depth",
            row["freeze_depth"],
            *prefix_args,
            "--seed",
            row["seed"],
            # the batch size is a sweep axis: it replaces training.batch_size
            *flag_args({**run_training, "batch_size": row["batch_size"]}),
            *monitor_args(config),
            "--axes",
            json.dumps({"model": row["model"], budget.AXIS: row[budget.AXIS]}),
            "--run-id",
            run_id,
            "--out",
            run_dir,
        ]
        train.append(
            Job(
                run_id,
                args,
                axes=axes,
                inputs={
                    "model": model_input(config, row["model"]),
                    "train": data_info(bitext_spec(config, "train")["dataset"]),
                    "dev": data_info(bitext_spec(config, "dev")["dataset"]),
                    **prefix_inputs,
                },
            )
        )
        model, axes_json = MODEL.format(run_id=run_id), json.dumps(axes)
        tatoeba.append(_tatoeba_job(config, run_id, model, model, axes))
        for pair in pairs:
            out["mine"][f"{run_id}/{pair}"] = Job(
                run_id,
                axes={**axes, "pair": pair},
                inputs={"bucc": bucc_dir(config, pair)},
                args=[
                    "--model",
                    model,
                    "--bucc-dir",
                    bucc_dir(config, pair),
                    "--pair",
                    pair,
                    "--tune-split",
                    mining["tune_split"],
                    "--test-split",
                    mining["test_split"],
                    "--pooling",
                    row["pooling"],
                    *prompt_args(config, row["model"]),
                    "--k",
                    mining["k"],
                    "--strategy",
                    mining["strategy"],
                    "--max-length",
                    settings.eval_max_length(config),
                    "--axes",
                    axes_json,
                    "--run-id",
                    run_id,
                    "--out-metrics",
                    MINED.format(run_id=run_id, pair=pair),
                ],
            )
    for row in baselines(config):  # the pretrained encoder, no training axes
        axes = {"model": row["model"]} | {axis: None for axis in AXES} | {"pooling": row["pooling"], "trained": False}
        tatoeba.append(
            _tatoeba_job(
                config, row["run_id"], model_ref(config, row["model"]), model_input(config, row["model"]), axes
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
            _tatoeba_job(config, teacher["run_id"], teacher["ref"], teacher["inputs"], axes, layer=teacher["layer"])
        )
    out["train_dual"], out["tatoeba_dual"] = by_run_id(train), by_run_id(tatoeba)
    if mining and mining["source"] != "local":  # local BUCC files are read where they are
        inputs = {"data": data_info(mining["dataset"])} if mining["source"] == "bitext" else {}
        out["make_bucc"] = {
            pair: Job(
                pair,
                inputs=inputs,
                axes={"pair": pair},
                args=[
                    "--pair",
                    pair,
                    "--out",
                    BUCC.format(pair=pair),
                    *_make_bucc_args(mining, pair),
                    "--seed",
                    mining["seed"],
                ],
            )
            for pair in pairs
        }
    if shared_prefix(config, FAMILY):
        out["prefix_states_dual"] = by_run_id(_prefix_states_jobs(config, rows))
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
    return (
        [TABLE, SUMMARY]
        + [PLOT.format(kind=kind) for kind in plot_kinds(config)]
        + ([CURVES] if curve_files(config) else [])
    )


def curve_files(config: dict) -> list[str]:
    """The training curve of every trained run (untrained baselines have none)."""
    return [TRAIN_CURVE.format(run_id=run_id) for run_id in jobs(config)["train_dual"]]
