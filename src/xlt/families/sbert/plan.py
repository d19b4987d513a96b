"""The sentence-embedding sweep (SBERT-style): model x pooling x layer x freeze depth x seed.

Each trained run trains a siamese encoder on NLI pairs (`train_sbert`, `xlt train-sbert`);
every run, and with `baselines` the untrained model with the same pooling and layer, is
scored on STS and bitext retrieval (`eval_sbert`, the shared `xlt eval-embeddings`), and on
the STS dev set of `sbert.dev` (rows with split dev, for intervals only: no paired test).
Everything a job needs comes from the validated settings here.
"""

from __future__ import annotations

import json

from xlt.core import plan as common
from xlt.core import settings
from xlt.core.errors import XltError
from xlt.core.job_spec import ON, JobSpec
from xlt.core.metrics import curve_path
from xlt.core.plan import Job

FAMILY = "sbert"
PATHS = common.family_paths(FAMILY)
RUN, TABLE, SUMMARY, PLOT, CURVES = PATHS.run, PATHS.table, PATHS.summary, PATHS.plot, PATHS.curves
TRAIN_METRICS = f"{RUN}/train.json"
TRAIN_CURVE = str(curve_path(TRAIN_METRICS))  # written beside the metrics by MetricsFile.write
PLOT_KINDS = ("sbert-retrieval-error", "sbert-sts", "sbert-layers")
LAYERS_PLOT = "sbert-layers"  # drawn only when the sweep pools more than one layer
# eval section key = dataset task = `xlt eval-embeddings` flag that takes its files
EVAL_KINDS = ("sts", "bitext")
DEV_TASKS = ("sts", "nli")  # sts: select by cosine Spearman, nli: by classifier accuracy
# boolean settings -> the `xlt train-sbert` switch they turn on
SWITCHES = ("train_word_embeddings", "use_product")  # config keys, each its train-sbert switch's name
EVAL_AXES = ("trained", "freeze_depth", "seed")

# what the tables that join families read (xlt.core.family_plan.FamilyPlan)
EVALUATIONS = ("eval_sbert",)
LEDGER = {"train_sbert": (("run_id",), f"{RUN}/train.json"), "eval_sbert": (("run_id",), f"{RUN}/eval.json")}
KEEPS_MODEL = ("train_sbert",)
BASELINE = ("trained", False)  # the untrained encoder


def token_forms(rule: str) -> tuple[str, ...]:
    """For the plan (xlt.cost.tokens): a siamese encoder embeds each sentence of a pair on its own."""
    return ("text", "text_pair")


def check(config: dict) -> None:
    family = config[FAMILY]
    for model in family["models"]:
        settings.require(config, "models", model, f"{FAMILY}.models")
        n = settings.model_layers(config, model)
        for layer in family["layers"]:
            if not -(n + 1) <= layer <= n:
                raise XltError(
                    f"layer {layer} in {FAMILY}.layers is out of range for model {model!r} with {n} layers; "
                    f"allowed: 0 (embeddings) .. {n}, or -1 (last) .. -{n + 1}"
                )
        settings.freeze_depths(config, family["depths"], model, f"{FAMILY}.depths")
    train, dev = family["train"], family["dev"]
    settings.require_task(config, train["dataset"], ("nli",), f"{FAMILY}.train.dataset")
    settings.require_split(config, train["dataset"], "train", [train["lang"]], f"{FAMILY}.train")
    settings.require_task(config, dev["dataset"], DEV_TASKS, f"{FAMILY}.dev.dataset")
    settings.require_split(config, dev["dataset"], dev["split"], [dev["lang"]], f"{FAMILY}.dev")
    if not family["eval"]:
        raise XltError(
            f"{FAMILY}.eval: declare at least one of sts or bitext, e.g. sts: {{dataset: NAME, langs: [en]}}"
        )
    for kind, spec in family["eval"].items():
        settings.require_task(config, spec["dataset"], (kind,), f"{FAMILY}.eval.{kind}.dataset")
        settings.require_split(config, spec["dataset"], spec["split"], spec["langs"], f"{FAMILY}.eval.{kind}")


def runs(config: dict) -> list[dict]:
    """One row per evaluation: trained runs (model x pooling x layer x depth x seed) and,
    with `baselines`, the untrained model per (model, pooling, layer)."""
    family = settings.family(config, FAMILY)
    if family is None:
        return []
    rows = []
    for model in family["models"]:
        for pooling in family["poolings"]:
            for layer in family["layers"]:
                stem = f"{model}-{pooling}-L{layer}"
                if family["baselines"]:
                    rows.append(
                        {
                            "run_id": f"{stem}-untrained",
                            "model": model,
                            "pooling": pooling,
                            "layer": layer,
                            "trained": False,
                            "freeze_depth": None,
                            "seed": None,
                        }
                    )
                for depth in family["depths"]:
                    for seed in family["seeds"]:
                        rows.append(
                            {
                                "run_id": f"{stem}-depth{settings.depth_label(depth)}-seed{seed}",
                                "model": model,
                                "pooling": pooling,
                                "layer": layer,
                                "trained": True,
                                "freeze_depth": depth,
                                "seed": seed,
                            }
                        )
    return rows


def dev_sts_file(config: dict) -> str | None:
    """The STS dev set of `sbert.dev` (None for an NLI dev set, or one already among the STS
    evaluation files): every run scores it too, for intervals only (`xlt eval-embeddings
    --dev-sts`), so the STS-b validation numbers seed 000 published have rows to match."""
    family = config[FAMILY]
    dev = family["dev"]
    if config["datasets"][dev["dataset"]]["task"] != "sts":
        return None
    path = common.data_file(dev["dataset"], dev["lang"], dev["split"])
    sts = family["eval"].get("sts")
    scored = sts and [common.data_file(sts["dataset"], lang, sts["split"]) for lang in sts["langs"]]
    return None if scored and path in scored else path


def eval_files(config: dict) -> list[tuple[str, str]]:
    """`--sts FILE ... --bitext FILE ... --match RULE --dev-sts FILE`: every evaluation file,
    STS first, then the configured retrieval rule when there is bitext (the schema fills it:
    index), then the STS dev set (`dev_sts_file`)."""
    evaluation = config[FAMILY]["eval"]
    files = [
        (kind, common.data_file(evaluation[kind]["dataset"], lang, evaluation[kind]["split"]))
        for kind in EVAL_KINDS
        if kind in evaluation
        for lang in evaluation[kind]["langs"]
    ]
    files += [("match", evaluation["bitext"]["match"])] if "bitext" in evaluation else []
    dev = dev_sts_file(config)
    return files + ([("dev_sts", dev)] if dev else [])


def jobs(config: dict) -> dict[str, dict[str, Job]]:
    """rule -> run id -> Job, for `train_sbert` (trained runs) and `eval_sbert` (every run)."""
    rows = runs(config)
    if not rows:
        return {"train_sbert": {}, "eval_sbert": {}}
    family = config[FAMILY]
    train, dev = family["train"], family["dev"]
    dev_task = config["datasets"][dev["dataset"]]["task"]
    training = settings.training(config, FAMILY)
    switches = [(key, ON) for key in SWITCHES if family[key]]
    evaluation = eval_files(config)
    eval_data = [common.data_info(family["eval"][kind]["dataset"]) for kind in EVAL_KINDS if kind in family["eval"]]
    if dev_sts_file(config) and common.data_info(dev["dataset"]) not in eval_data:
        eval_data.append(common.data_info(dev["dataset"]))
    trains, evals = [], []
    for row in rows:
        run_dir = RUN.format(run_id=row["run_id"])
        axes = {k: row[k] for k in ("model", "pooling", "layer", *EVAL_AXES)}
        if row["trained"]:
            trains.append(
                Job(
                    row["run_id"],
                    axes=axes,
                    spec=JobSpec(
                        "train-sbert",
                        [
                            ("model", common.model_ref(config, row["model"])),
                            ("train", common.data_file(train["dataset"], train["lang"], "train")),
                            (f"dev_{dev_task}", common.data_file(dev["dataset"], dev["lang"], dev["split"])),
                            ("pooling", row["pooling"]),
                            ("layer", row["layer"]),
                            ("freeze_depth", row["freeze_depth"]),
                            *common.prompt_settings(config, row["model"]),
                            *switches,
                            ("seed", row["seed"]),
                            *common.config_settings(training),
                            *common.monitor_settings(config),
                            # the config's model name (the tables' `model`), beside the run's own axes
                            ("axes", json.dumps({"model": row["model"]})),
                            ("run_id", row["run_id"]),
                            ("out", run_dir),
                        ],
                    ),
                    inputs={
                        "model": common.model_input(config, row["model"]),
                        "train": common.data_info(train["dataset"]),
                        "dev": common.data_info(dev["dataset"]),
                    },
                )
            )
        model, model_files = (
            (f"{run_dir}/model", f"{run_dir}/model")
            if row["trained"]
            else (common.model_ref(config, row["model"]), common.model_input(config, row["model"]))
        )
        evals.append(
            Job(
                row["run_id"],
                axes=axes,
                inputs={"model": model_files, "data": eval_data},
                spec=JobSpec(
                    "eval-embeddings",
                    [
                        ("model", model),
                        ("pooling", row["pooling"]),
                        ("layer", row["layer"]),
                        *evaluation,
                        *common.prompt_settings(config, row["model"]),
                        ("axes", json.dumps({k: row[k] for k in ("model", *EVAL_AXES)})),
                        ("run_id", row["run_id"]),
                        ("family", FAMILY),
                        ("max_length", settings.eval_max_length(config)),
                        ("out", f"{run_dir}/eval.json"),
                    ],
                ),
            )
        )
    return {"train_sbert": common.by_run_id(trains), "eval_sbert": common.by_run_id(evals)}


def plot_kinds(config: dict) -> list[str]:
    """The figures of this sweep: the layer plot only when more than one layer is pooled."""
    many_layers = len(config[FAMILY]["layers"]) > 1
    return [kind for kind in PLOT_KINDS if kind != LAYERS_PLOT or many_layers]


def targets(config: dict) -> list[str]:
    if not runs(config):
        return []
    return common.standard_targets(PATHS, plot_kinds(config), curve_files(config))


def curve_files(config: dict) -> list[str]:
    """The training curve of every trained run (untrained baselines have none)."""
    return common.run_files(TRAIN_CURVE, jobs(config)["train_sbert"])
