"""The per-layer alignment analysis (seed 001): one `xlt align` job per analysed model.

The models are the declared (pretrained) ones, the dual family's trained encoders and the
freeze_depth family's fine-tuned models at chosen depths (first seed). Each job writes
bitext retrieval accuracy and the cosine gap of translations at every hidden state
(`align_layers`); the runs are collected into one table and compared in one figure, and each
model's cosine gap gets its own figure (`plot_alignment_gap`). Everything a job needs comes from the validated
settings here.
"""

from __future__ import annotations

import json

from xlt.core import plan as common
from xlt.core import settings
from xlt.core.errors import XltError
from xlt.core.job_spec import ON, JobSpec
from xlt.core.plan import Job
from xlt.families.dual import plan as dual_plan
from xlt.families.freeze_depth.plan import runs as freeze_depth_runs

FAMILY = "alignment"
PATHS = common.family_paths(FAMILY)
RUN, LOG, TABLE, SUMMARY, PLOT = PATHS.run, PATHS.log, PATHS.table, PATHS.summary, PATHS.plot
METRICS = f"{RUN}/alignment.json"
LAYERS = f"{RUN}/layers.csv"
RUN_PLOTS = f"{RUN}/plots"
PLOT_KINDS = ("alignment-by-layer",)
# one analysed model's cosine gap by layer, drawn from TABLE (`xlt align-gap-plot`)
GAP_PLOT = f"{PATHS.plots}/cosine-gap/{{run_id}}.png"
CATEGORY = "Cross-lingual alignment by layer"
# a trained model analysed here: the source family's run directory holds it
SOURCE_MODEL = f"{common.RESULTS}/runs/{{source}}/{{source_run}}/model"

# what the tables that join families read (xlt.core.family_plan.FamilyPlan)
READS = ("dual", "freeze_depth")  # it analyses their trained models
EVALUATIONS = ("align_layers",)
LEDGER = {"align_layers": (("run_id",), METRICS)}


def token_forms(rule: str) -> tuple[str, ...]:
    """For the plan (xlt.cost.tokens): each side of a bitext pair is embedded on its own."""
    return ("text", "text_pair")


def check(config: dict) -> None:
    family = config[FAMILY]
    if "max_length" in family:
        raise XltError(
            f"{FAMILY}.max_length: the evaluation length is now shared by every family's evaluations, so a "
            f"model scored by two families gives one number; drop {FAMILY}.max_length and set "
            f"evaluation: {{max_length: {family['max_length']}}}"
        )
    data = family["data"]
    dual_plan.require_bitext(config, data["dataset"], f"{FAMILY}.data.dataset")
    settings.require_split(config, data["dataset"], data["split"], data["langs"], f"{FAMILY}.data")
    for model in family["models"]:
        settings.require(config, "models", model, f"{FAMILY}.models")
    if family["dual_runs"] != "all":
        known = [row["run_id"] for row in dual_plan.runs(config)]
        unknown = [run for run in family["dual_runs"] if run not in known]
        if unknown:
            raise XltError(
                f"{FAMILY}.dual_runs: unknown dual run(s) {unknown}; the dual sweep has "
                f"{', '.join(known) if known else 'no runs (dual is absent or disabled)'}"
            )
    if family["freeze_depths"]:
        swept = sorted({row["freeze_depth"] for row in freeze_depth_runs(config)})
        missing = [d for d in family["freeze_depths"] if d not in swept]
        if missing:
            raise XltError(
                f"{FAMILY}.freeze_depths: depth(s) {missing} are not in the freeze_depth sweep "
                f"({swept if swept else 'freeze_depth is absent or disabled'}); add them to "
                f"freeze_depth.depths or drop them here"
            )
    rows = runs(config)
    if not rows:
        raise XltError(
            f"{FAMILY}: nothing to analyse; list {FAMILY}.models, or enable the dual family or {FAMILY}.freeze_depths"
        )
    for model in sorted({row["model"] for row in rows}):
        n = settings.model_layers(config, model)
        for key in ("layers", "tsne_layers"):
            values = family[key]
            bad = [] if values == "all" else [layer for layer in values if layer > n]
            if bad:
                raise XltError(
                    f"{FAMILY}.{key}: hidden-state index(es) {bad} out of range for model {model!r} "
                    f"with {n} layers; use 0 (embeddings) .. {n}"
                )


def runs(config: dict) -> list[dict]:
    """One row per analysed model: declared (pretrained) models, dual-encoder runs, and the
    freeze_depth family's fine-tuned models at the chosen depths (first seed). `source`
    says which; `source_run` is the training run's id (None for a pretrained model)."""
    family = settings.family(config, FAMILY)
    if family is None:
        return []
    rows = [
        {"run_id": f"pretrained-{model}", "source": "pretrained", "model": model, "source_run": None}
        for model in family["models"]
    ]
    dual = {row["run_id"]: row for row in dual_plan.runs(config)}
    chosen = list(dual) if family["dual_runs"] == "all" else family["dual_runs"]
    rows += [
        {"run_id": f"dual-{run}", "source": "dual", "model": dual[run]["model"], "source_run": run}
        for run in chosen
        if run in dual
    ]
    if family["freeze_depths"]:
        freeze_rows = freeze_depth_runs(config)
        first_seed = {}
        for row in freeze_rows:
            first_seed.setdefault(row["model"], row["seed"])
        rows += [
            {
                "run_id": f"freeze_depth-{row['run_id']}",
                "source": "freeze_depth",
                "model": row["model"],
                "source_run": row["run_id"],
            }
            for row in freeze_rows
            if row["freeze_depth"] in family["freeze_depths"] and row["seed"] == first_seed[row["model"]]
        ]
    return rows


def run_plots(config: dict) -> dict[str, str]:
    """Pictures every align job draws into RUN_PLOTS, output name -> file name ({} when off)."""
    family = settings.family(config, FAMILY)
    if family is None:
        return {}
    plots = {"by_layer": "retrieval_by_layer.png"}
    if family["tsne_layers"]:
        plots["projection"] = f"{family['projection']}_layers.png"
    return plots


def _indices(values) -> str:
    return values if values == "all" else ",".join(map(str, values))


def _model(config: dict, row: dict) -> tuple[str, list[str] | str]:
    """What `xlt align` gets as --model, and the file it depends on."""
    if row["source"] == "pretrained":
        return common.model_ref(config, row["model"]), common.model_input(config, row["model"])
    path = SOURCE_MODEL.format(source=row["source"], source_run=row["source_run"])
    return path, path


def jobs(config: dict) -> dict[str, dict[str, Job]]:
    """rule -> run id -> Job, for `align_layers`."""
    rows = runs(config)
    if not rows:
        return {"align_layers": {}}
    family = config[FAMILY]
    data = family["data"]
    shared = [("bitext", common.data_file(data["dataset"], lang, data["split"])) for lang in data["langs"]]
    shared += [
        ("layers", _indices(family["layers"])),
        ("pooling", family["pooling"]),
        ("max_length", settings.eval_max_length(config)),
        ("english_label", family["english_label"]),
    ]
    shared += [("center", ON)] if family["center"] else []
    if family["tsne_layers"]:
        shared += [
            ("tsne_layers", _indices(family["tsne_layers"])),
            ("tsne_sample", family["tsne_sample"]),
            ("projection", family["projection"]),
        ]
    align = []
    for row in rows:
        model, model_file = _model(config, row)
        axes = {"model": row["model"], "source": row["source"], "source_run": row["source_run"] or ""}
        run_id = row["run_id"]
        align.append(
            Job(
                run_id,
                axes=axes,
                inputs={"model": model_file, "data": common.data_info(data["dataset"])},
                spec=JobSpec(
                    "align",
                    [
                        ("model", model),
                        *shared,
                        *common.prompt_settings(config, row["model"]),
                        ("axes", json.dumps(axes)),
                        ("run_id", run_id),
                        ("out_metrics", METRICS.format(run_id=run_id)),
                        ("out_table", LAYERS.format(run_id=run_id)),
                        ("out_plots", RUN_PLOTS.format(run_id=run_id)),
                    ],
                ),
            )
        )
    return {"align_layers": common.by_run_id(align)}


def targets(config: dict) -> list[str]:
    rows = runs(config)
    if not rows:
        return []
    per_run = [
        f"{RUN_PLOTS.format(run_id=row['run_id'])}/{file}" for row in rows for file in run_plots(config).values()
    ]
    gaps = [GAP_PLOT.format(run_id=row["run_id"]) for row in rows]
    return [TABLE, SUMMARY] + [PLOT.format(kind=kind) for kind in PLOT_KINDS] + per_run + gaps + kept_models(config)


def kept_models(config: dict) -> list[str]:
    """The freeze_depth models analysed here. The finetune rule's model directory is a temp() output
    (config keep_models: false); as workflow targets these stay, so a changed alignment setting
    reruns the analysis, not the fine-tuning (the dual models it reads go once it has run)."""
    return [
        SOURCE_MODEL.format(source=row["source"], source_run=row["source_run"])
        for row in runs(config)
        if row["source"] == "freeze_depth"
    ]
