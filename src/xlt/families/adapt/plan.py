"""The adapt sweep (seed 003): target-language MLM adaptation, model x layer scheme x seed.

Four kinds of jobs, all read from the validated settings:
- `adapt_eval_set`: the fixed evaluation sentence files (xlt.families.adapt.eval_sets);
- `adapt_mlm`: one adaptation run (`xlt adapt-mlm`), which evaluates itself every K steps
  (with the bootstrap intervals of config `statistics:`): a curve run (`curve.schemes`, trained
  with `curve.training` over the family's training) the target and multilingual sets every
  eval_every steps, another run as `scheme_eval` says;
- `adapt_reference_perplexity`: the untouched native and transfer models on the same
  fixed-masked sets (`xlt perplexity`);
- then the tidy table, the final-perplexity summary and the figures.
Nothing here imports torch: `xlt config check` runs `check` in well under a second.
"""

from __future__ import annotations

import json

from xlt.core import plan as common
from xlt.core import settings
from xlt.core.errors import XltError
from xlt.core.job_spec import JobSpec
from xlt.core.metrics import curve_path
from xlt.core.plan import Job
from xlt.data.sentences import text_unit
from xlt.families.adapt import costing
from xlt.families.adapt.eval_sets import COMPARE, MULTILINGUAL, eval_file, eval_set_jobs, eval_set_keys
from xlt.families.adapt.eval_sets import EVAL_SET as EVAL_SET
from xlt.families.adapt.eval_sets import EVAL_SET_ID as EVAL_SET_ID
from xlt.families.adapt.eval_sets import FAMILY as FAMILY
from xlt.families.adapt.eval_sets import eval_sets as eval_sets
from xlt.families.adapt.scheme_names import REFERENCE_SCHEME, scheme_order
from xlt.families.adapt.schemes import parse_scheme, run_label, scheme_arg

PATHS = common.family_paths(FAMILY)
DIR, TABLE, SUMMARY, PLOT, CURVES = PATHS.runs, PATHS.table, PATHS.summary, PATHS.plot, PATHS.curves
RUN = f"{DIR}/{{run_id}}/metrics.json"
CURVE = str(curve_path(RUN))  # the MLM run's training curve, written beside its metrics
REFERENCE = f"{DIR}/{{run_id}}/perplexity.json"  # run id reference-<model>
FINAL_TABLE = f"{PATHS.tables}_final.csv"
# NLL per word / character: the final numbers that compare across tokenizers (word_nll)
WORD_NLL_TABLE = f"{PATHS.tables}_word_nll.csv"
# word-nll: the tokenizer-independent counterpart of final-perplexity (NLL per word / character)
PLOT_KINDS = ("perplexity-vs-step", "final-perplexity", "word-nll", "distance-vs-step", "cka-vs-step")
REFERENCE_PREFIX = "reference-"
# wildcard constraints of the rules whose run ids are not plain run names
REFERENCE_ID = f"{REFERENCE_PREFIX}[^/]+"

# what the tables that join families read (xlt.core.family_plan.FamilyPlan)
# the adapted runs' final perplexities and the untouched models'
EVALUATIONS = ("adapt_mlm", "adapt_reference_perplexity")
LEDGER = {"adapt_mlm": (("run_id",), RUN), "adapt_reference_perplexity": (("run_id",), REFERENCE)}
BASELINE = ("scheme", REFERENCE_SCHEME)  # the untouched pre-trained model
# role: "adapted" for every scheme but the pre-trained reference's; text_unit: the one corpus of every run
DERIVED_AXES = frozenset({"role", "text_unit"})
# the schemes as the report lists them: 0-12, 6-12, 9-12, 11-12, then gradual
ORDERS = {"scheme": scheme_order}
PAPER_ONE_BASED = frozenset({"step"})  # seed 003 numbers its steps from 1 (xlt.report.paper_match)
# the family's cost hooks (xlt.core.family_plan), which `xlt plan` prices its jobs with
extra_evaluations = costing.extra_evaluations
frozen_layers = costing.frozen_layers
token_forms = costing.token_forms
vocabulary_head = costing.vocabulary_head


def schemes(config: dict, model: str) -> list:
    """The family's layer schemes parsed for `model`; an error names the offending key."""
    n = settings.model_layers(config, model)
    parsed = []
    for i, scheme in enumerate(config[FAMILY]["schemes"]):
        try:
            parsed.append(parse_scheme(scheme, n))
        except XltError as err:
            raise XltError(f"{FAMILY}.schemes[{i}] (model {model!r}, {n} layers): {err}") from None
    names = [s.name for s in parsed]
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:
        raise XltError(f"{FAMILY}.schemes lists {repeated} more than once; each scheme is one sweep value")
    return parsed


def check_grad_accum(grad_accum: int, where: str) -> None:
    """adapt trains without gradient accumulation: its MLM loss is a mean over a batch's masked
    tokens, and micro-batches hold different numbers of them (masks are drawn per micro-batch), so
    the example-share weighting of xlt.core.training would not give the batch's token mean."""
    if grad_accum > 1:
        raise XltError(
            f"{where} {grad_accum}: adapt's MLM loss is a mean over masked tokens, which micro-batches "
            "split unevenly, so accumulating them is not the batch's loss; set it to 1 and pick a "
            "batch size that fits memory"
        )


def check(config: dict) -> None:
    family = config[FAMILY]
    for where, training in (
        ("training.grad_accum (adapt's training)", settings.training(config, FAMILY)),
        (f"{FAMILY}.curve.training.grad_accum", family["curve"]["training"]),
    ):
        check_grad_accum(training.get("grad_accum", 1), where)
    for model in family["models"]:
        settings.require(config, "models", model, f"{FAMILY}.models")
        schemes(config, model)
    settings.require(config, "models", family["native"], f"{FAMILY}.native")
    target, multi = family["target"], family["multilingual"]
    settings.require(config, "datasets", target["dataset"], f"{FAMILY}.target.dataset")
    settings.require(config, "datasets", multi["dataset"], f"{FAMILY}.multilingual.dataset")
    for key in ("train_split", "eval_split", "test_split"):
        settings.require_split(config, target["dataset"], target[key], [target["lang"]], f"{FAMILY}.target.{key}")
    if target["eval_split"] == target["test_split"]:
        raise XltError(
            f"{FAMILY}.target: eval_split and test_split are both {target['eval_split']!r}; the test "
            "perplexity must come from sentences that never chose a checkpoint"
        )
    if COMPARE in (target["eval_split"], target["test_split"]):
        raise XltError(f"{FAMILY}.target: split name {COMPARE!r} is reserved for the comparison sentences")
    if target["lang"] == MULTILINGUAL:
        raise XltError(
            f"{FAMILY}.target.lang: {MULTILINGUAL!r} names the pooled multilingual set; use the target language's code"
        )
    settings.require_split(config, multi["dataset"], multi["split"], multi["langs"], f"{FAMILY}.multilingual")
    k = settings.training(config, FAMILY)["eval_every"]
    if k < 1:
        raise XltError(
            f"{FAMILY}.training.eval_every (K, steps between perplexity/distance checkpoints) must be "
            f"at least 1, got {k}"
        )
    if family["curve"]["training"].get("eval_every", 1) < 1:
        raise XltError(
            f"{FAMILY}.curve.training.eval_every (steps between the curve runs' checkpoints) must be "
            f"at least 1, got {family['curve']['training']['eval_every']}"
        )
    curve = family["curve"]["schemes"]
    if curve != "all":
        for model in family["models"]:
            names = [s.name for s in schemes(config, model)]
            unknown = [name for name in curve if name not in names]
            if unknown:
                raise XltError(
                    f"{FAMILY}.curve.schemes names {unknown}, not schemes of model {model!r}; "
                    f"use the runs' scheme names {names} or 'all'"
                )
    layers = family["compare"]["layers"]
    if layers != "all":
        top = min(settings.model_layers(config, m) for m in [*family["models"], family["native"]])
        bad = [layer for layer in layers if not 0 <= layer <= top]
        if bad:
            raise XltError(
                f"{FAMILY}.compare.layers {bad} are outside 0..{top} (hidden-state indices; "
                f"0 = embeddings, {top} = the last layer both compared models have)"
            )


def runs(config: dict) -> list[dict]:
    """One row per adaptation job: model x layer scheme x seed."""
    family = settings.family(config, FAMILY)
    if family is None:
        return []
    return [
        {
            "run_id": f"{model}-{run_label(scheme)}-seed{seed}",
            "model": model,
            "scheme": scheme.name,
            "seed": seed,
            "scheme_spec": spec,
        }
        for model in family["models"]
        for spec, scheme in zip(family["schemes"], schemes(config, model))
        for seed in family["seeds"]
    ]


def references(config: dict) -> list[dict]:
    """The untouched models whose perplexities are the reference lines: the native model and
    every model that is adapted (its step-0 state)."""
    family = settings.family(config, FAMILY)
    if family is None:
        return []
    rows = [{"model": family["native"], "role": "native"}]
    rows += [{"model": m, "role": "transfer"} for m in family["models"] if m != family["native"]]
    return [{"run_id": f"{REFERENCE_PREFIX}{row['model']}", **row} for row in rows]


def _masking(family: dict) -> list[tuple]:
    return [("mask_seed", family["mask_seed"]), ("mlm_probability", family["mlm_probability"])]


def _word_nll(family: dict) -> list[tuple]:
    """The word-level NLL subset (final evaluations and the untouched models): the same for all."""
    return [
        ("pll_sentences", family["word_nll"]["sentences"]),
        ("pll_words", family["word_nll"]["words"]),
        ("max_unk_share", family["word_nll"]["max_unk_share"]),
    ]


def _bootstrap(config: dict) -> list[tuple]:
    """`xlt aggregate`'s bootstrap settings (config statistics:), for the intervals adapt-mlm
    computes at every checkpoint: the same draws as aggregate's for the final records."""
    statistics = config["statistics"]
    return [
        ("bootstrap_resamples", statistics["resamples"]),
        ("bootstrap_seed", statistics["seed"]),
        ("bootstrap_confidence", statistics["confidence"]),
    ]


def is_curve_run(config: dict, scheme: str) -> bool:
    """Whether the runs of `scheme` (its name) record the perplexity curves (adapt.curve)."""
    curve = config[FAMILY]["curve"]["schemes"]
    return curve == "all" or scheme in curve


def run_training(config: dict, scheme: str) -> dict:
    """The training settings of a run of `scheme` (its name): the shared and the family's, with
    curve.training on top for a curve run and scheme_eval.eval_every (when set) for another."""
    family = config[FAMILY]
    training = settings.training(config, FAMILY)
    if is_curve_run(config, scheme):
        return {**training, **family["curve"]["training"]}
    if family["scheme_eval"]["eval_every"] is not None:
        return {**training, "eval_every": family["scheme_eval"]["eval_every"]}
    return training


def _evaluations(config: dict, scheme: str) -> tuple[dict, list, list[str]]:
    """(training settings, evaluation settings, evaluation files) of a run of `scheme`: a curve run
    scores the target and multilingual sets every eval_every steps of its training (run_training);
    another run the target set every scheme_eval.eval_every steps and the multilingual set as
    scheme_eval.multilingual says."""
    keys = eval_set_keys(config)
    training = run_training(config, scheme)
    target, multi, test = (eval_file(keys[role]) for role in ("target", "multilingual", "test"))
    when = "checkpoints"
    if not is_curve_run(config, scheme):
        when = config[FAMILY]["scheme_eval"]["multilingual"]
    evaluations = [
        ("target", target),
        *([("eval", multi)] if when == "checkpoints" else []),
        ("test", test),
        *([("test", multi)] if when == "final" else []),
    ]
    files = [eval_file(k) for role, k in keys.items() if role != "multilingual" or when != "none"]
    return training, evaluations, files


def _text_unit(config: dict) -> str:
    """What a text of the target corpus is (sentence or document): an axis of every run, so the
    published numbers, measured on sentences, match only runs on sentences (xlt.report.paper)."""
    return text_unit(config["datasets"][config[FAMILY]["target"]["dataset"]])


def _adapt_jobs(config: dict) -> list[Job]:
    family = config[FAMILY]
    target = family["target"]
    keys = eval_set_keys(config)
    compare = family["compare"]
    layers = [] if compare["layers"] == "all" else [("compare_layers", list(compare["layers"]))]
    out = []
    for row in runs(config):
        axes = {k: row[k] for k in ("model", "scheme", "seed")} | {"role": "adapted", "text_unit": _text_unit(config)}
        training, evaluations, files = _evaluations(config, row["scheme"])
        inputs = {
            "model": common.model_input(config, row["model"]),
            "native": common.model_input(config, family["native"]),
            "data": common.data_info(target["dataset"]),
            "sets": files,
        }
        spec = JobSpec(
            "adapt-mlm",
            [
                ("model", common.model_ref(config, row["model"])),
                ("train", common.data_file(target["dataset"], target["lang"], target["train_split"])),
                *evaluations,
                ("native", common.model_ref(config, family["native"])),
                ("compare", eval_file(keys["compare"])),
                *layers,
                ("compare_levels", list(compare["levels"])),
                ("scheme", scheme_arg(row["scheme_spec"])),
                ("select", family["select"]),
                *_masking(family),
                *_word_nll(family),
                ("eval_batch_size", family["eval_batch_size"]),
                *_bootstrap(config),
                ("seed", row["seed"]),
                *common.config_settings(training),
                *common.monitor_settings(config),
                ("run_id", row["run_id"]),
                ("axes", json.dumps(axes)),
                ("out", RUN.format(run_id=row["run_id"])),
            ],
        )
        out.append(Job(row["run_id"], spec, inputs=inputs, axes=axes))
    return out


def _reference_jobs(config: dict) -> list[Job]:
    family = config[FAMILY]
    keys = eval_set_keys(config)
    files = [eval_file(keys[role]) for role in ("target", "multilingual", "test")]
    out = []
    for row in references(config):
        axes = {"model": row["model"], "scheme": REFERENCE_SCHEME, "role": row["role"], "text_unit": _text_unit(config)}
        out.append(
            Job(
                row["run_id"],
                axes=axes,
                inputs={"model": common.model_input(config, row["model"]), "sets": files},
                spec=JobSpec(
                    "perplexity",
                    [
                        ("model", common.model_ref(config, row["model"])),
                        *[("data", f) for f in files],
                        *_masking(family),
                        *_word_nll(family),
                        ("batch_size", family["eval_batch_size"]),
                        ("max_length", settings.training(config, FAMILY)["max_length"]),
                        ("family", FAMILY),
                        ("run_id", row["run_id"]),
                        ("axes", json.dumps(axes)),
                        ("out", REFERENCE.format(run_id=row["run_id"])),
                    ],
                ),
            )
        )
    return out


def jobs(config: dict) -> dict[str, dict[str, Job]]:
    """rule -> run id -> Job, for `adapt_eval_set`, `adapt_mlm` and `adapt_reference_perplexity`."""
    if settings.family(config, FAMILY) is None:
        return {"adapt_eval_set": {}, "adapt_mlm": {}, "adapt_reference_perplexity": {}}
    return {
        "adapt_eval_set": common.by_run_id(eval_set_jobs(config)),
        "adapt_mlm": common.by_run_id(_adapt_jobs(config)),
        "adapt_reference_perplexity": common.by_run_id(_reference_jobs(config)),
    }


def targets(config: dict) -> list[str]:
    if not runs(config):
        return []
    kinds = [k for k in PLOT_KINDS if k != "word-nll" or config[FAMILY]["word_nll"]["sentences"] > 0]
    return common.standard_targets(PATHS, kinds, curve_files(config), extra=[FINAL_TABLE, WORD_NLL_TABLE])


def curve_files(config: dict) -> list[str]:
    """The training curve of every MLM adaptation run."""
    return common.run_files(CURVE, jobs(config)["adapt_mlm"])
