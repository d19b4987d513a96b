"""The dual family's `mse_distill` objective in the plan: its teacher, its runs, their checks.

The teacher is `dual.distill.teacher`: a trained run of the config's sbert family (its model
directory, pooling and layer; the sbert run trained on English NLI, so zero-shot SBERT and SBERT
distilled into the student meet on the same test sets) or a model of `models:`. A distilled run
is model x pooling (distill.poolings, else the family's) x batch size x freeze depth x seed (no
margin or scale); with
`distill.evaluate_teacher` the teacher gets the family's evaluation as one more row (objective
`teacher`), the zero-shot baseline of the paired tests (the plan's REFERENCE_AXIS, xlt.analysis.compare).
With `distill.match_budget` each distilled run has a twin (run id `...-distill-matched-...`) trained
for the additive-margin runs' budget (xlt.families.dual.budget); every run carries its planned
budget, `sentences_seen`.
"""

from __future__ import annotations

from xlt.core import settings
from xlt.core.errors import XltError
from xlt.core.plan import model_input, model_ref
from xlt.families.dual import budget, comparison
from xlt.families.sbert import plan as sbert

DISTILL = "mse_distill"
TEACHER = "teacher"  # the objective value of the teacher's own evaluation row
ADDITIVE = "additive_margin"


def distilling(config: dict, family: str) -> bool:
    """mse_distill is on the objective axis of an enabled family."""
    section = settings.family(config, family)
    return section is not None and DISTILL in section["objectives"]


def _sbert_run(config: dict, run_id: str) -> dict:

    trained = {row["run_id"]: row for row in sbert.runs(config) if row["trained"]}
    if run_id not in trained:
        listed = ", ".join(trained) if trained else "none (sbert is absent or disabled)"
        raise XltError(
            f"dual.distill.teacher.sbert_run: {run_id!r} is not a trained run of the sbert family; "
            f"its trained runs: {listed}"
        )
    return trained[run_id]


def teacher(config: dict, family: str) -> dict:
    """{label, model (the table's model axis), ref (what --teacher gets), inputs, pooling, layer}."""
    spec = config[family]["distill"].get("teacher", {})
    if spec.get("sbert_run"):
        row = _sbert_run(config, spec["sbert_run"])
        model_dir = f"{sbert.RUN.format(run_id=row['run_id'])}/model"
        return {
            "label": row["run_id"],
            "model": row["model"],
            "ref": model_dir,
            "inputs": [model_dir],
            "pooling": row["pooling"],
            "layer": row["layer"],
        }
    name = spec["model"]
    return {
        "label": name,
        "model": name,
        "ref": model_ref(config, name),
        "inputs": model_input(config, name),
        "pooling": spec.get("pooling", "mean"),
        "layer": spec.get("layer", -1),
    }


def check(config: dict, family: str) -> None:
    section = config[family]
    spec = section["distill"].get("teacher")
    if not distilling(config, family):
        return
    if not spec or ("sbert_run" in spec) == ("model" in spec):
        raise XltError(
            f"{family}.objectives has {DISTILL}: name its teacher with exactly one of "
            f"{family}.distill.teacher.sbert_run (a trained sbert run of this config) or "
            f"{family}.distill.teacher.model (a model in models:)"
        )
    if "sbert_run" in spec:
        if {"pooling", "layer"} & set(spec):
            raise XltError(
                f"{family}.distill.teacher: pooling and layer come from the sbert run {spec['sbert_run']!r}; drop them"
            )
        _sbert_run(config, spec["sbert_run"])
    else:
        settings.require(config, "models", spec["model"], f"{family}.distill.teacher.model")


def training(config: dict, family: str) -> dict:
    """The family's training settings with distill.training on top."""
    return {**settings.training(config, family), **config[family]["distill"]["training"]}


def planned_budget(config: dict, family: str, batch_size: int, run_training: dict | None = None) -> int | None:
    """A distilled run's planned sentences_seen (its training: the recipe's, or the matched run's)."""
    spec = config[family]["distill"]
    return budget.sentences_seen(
        config,
        family,
        run_training or training(config, family),
        batch_size,
        spec["examples"],
        spec["max_sentences_per_language"],
    )


def runs(
    config: dict,
    family: str,
    batch_sizes: list[int],
    additive_budgets: list[int | None] = (),
    seeds: list[int] | None = None,
) -> list[dict]:
    """One row per distilled run: model x pooling x batch size x freeze depth x seed (`seeds`, the
    objective comparison's; default the family's), then with distill.match_budget the same runs
    trained for `additive_budgets`' one budget (`max_steps`). A student starts from the pretrained
    model (start axis `pretrained`); its teacher's training reaches it through the teacher's vectors."""
    section = config[family]
    if not distilling(config, family):
        return []
    spec = section["distill"]
    extra = spec["training"]
    sizes = [extra["batch_size"]] if "batch_size" in extra else batch_sizes
    poolings = spec.get("poolings", section["poolings"])
    variants = [("", None)]
    if spec["match_budget"]:
        if ADDITIVE not in section["objectives"]:
            raise XltError(
                f"{family}.distill.match_budget matches the additive-margin runs' budget: add "
                f"additive_margin to {family}.objectives, or drop match_budget"
            )
        variants += [
            (
                "-matched",
                {
                    batch_size: budget.matched_steps(
                        list(additive_budgets), batch_size, spec["examples"], f"{family}.distill.match_budget"
                    )
                    for batch_size in sizes
                },
            )
        ]
    rows = []
    for suffix, steps in variants:
        for model in section["models"]:
            for pooling in poolings:
                for batch_size in sizes:
                    run_training = {**training(config, family), "max_steps": steps[batch_size]} if steps else None
                    for depth in section["freeze_depths"]:
                        for seed in seeds or section["seeds"]:
                            rows.append(
                                {
                                    "run_id": f"{model}-distill{suffix}-{pooling}-bs{batch_size}"
                                    f"-depth{settings.depth_label(depth)}-seed{seed}",
                                    "model": model,
                                    "objective": DISTILL,
                                    "margin": None,
                                    "scale": None,
                                    "pooling": pooling,
                                    "batch_size": batch_size,
                                    "freeze_depth": depth,
                                    "seed": seed,
                                    budget.AXIS: planned_budget(config, family, batch_size, run_training),
                                    "max_steps": steps[batch_size] if steps else None,
                                    comparison.AXIS: comparison.PRETRAINED,
                                }
                            )
    return rows


# the recipe's data settings -> train-dual flags; given only where they differ from the defaults, so a
# config without them plans the command lines it planned before
RECIPE_SETTINGS = {  # config key -> (train-dual's setting, the value at which the plan leaves it out)
    "examples": ("distill_examples", "pairs"),
    "max_sentences_per_language": ("max_sentences_per_language", 0),
    "max_sentence_chars": ("max_sentence_chars", 0),
}


def train_settings(config: dict, family: str) -> tuple[list[tuple], dict]:
    """What a distilled train-dual job adds to the family's settings, and its teacher input."""
    spec, section = teacher(config, family), config[family]["distill"]
    recipe = [(dest, section[key]) for key, (dest, default) in RECIPE_SETTINGS.items() if section[key] != default]
    return (
        [
            ("objective", DISTILL),
            ("teacher", spec["ref"]),
            ("teacher_pooling", spec["pooling"]),
            ("teacher_layer", spec["layer"]),
            *recipe,
        ],
        {"teacher": spec["inputs"]},
    )


def teacher_row(config: dict, family: str) -> dict | None:
    """The teacher's evaluation row (distill.evaluate_teacher), or None."""
    if not distilling(config, family) or not config[family]["distill"]["evaluate_teacher"]:
        return None
    spec = teacher(config, family)
    return {"run_id": f"{TEACHER}-{spec['label']}", **spec}
