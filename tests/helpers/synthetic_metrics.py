"""Metrics files as every family's evaluation jobs write them, with made-up values and no model:
for each job the plan gives a config, the records (metric names and dimensions) its verb writes
and, for the sets the paired tests compare, the per-example outputs beside them
(xlt.core.metrics). tests/report/test_any_config.py runs the table-side rules on them."""

from __future__ import annotations

import json
import zlib
from pathlib import Path

import numpy as np
from scipy.stats import pearsonr, spearmanr

from xlt.core import registry, settings
from xlt.core.metrics import MetricsFile, example_set
from xlt.evaluate.alignment import RETRIEVAL_METRIC
from xlt.evaluate.cosine_gap import GAP_METRIC
from xlt.evaluate.retrieval import EN_TO_XX, XX_TO_EN

SIMILARITIES = ("cosine", "euclidean", "manhattan", "dot")
CENTERED = "_centered"
EXAMPLES = 24  # items of every evaluated set: enough for a bootstrap, seconds for the tests


def flag_values(args: list, flag: str) -> list[str]:
    """Every value a job's arguments give `flag` (a flag repeated, or followed by several values)."""
    values, taking = [], False
    for word in map(str, args):
        if word.startswith("--"):
            taking = word == flag
        elif taking:
            values.append(word)
    return values


def job_axes(job) -> dict:
    """meta.axes as the job gets them: its --axes, else the plan's axes."""
    given = flag_values(job.args, "--axes")
    return json.loads(given[0]) if given else dict(job.axes)


def data_dims(path: str) -> dict:
    """results/data/<dataset>/<lang>/<split>.jsonl -> the record dimensions eval-embeddings gives it."""
    parts = Path(path).parts
    return {"dataset": parts[-3], "lang": parts[-2], "split": Path(path).stem}


class Values:
    """Made-up values that differ by run and set, from one seeded generator per metrics file."""

    def __init__(self, key: str):
        self.rng = np.random.default_rng(zlib.crc32(key.encode()))

    def share(self) -> float:
        return float(self.rng.uniform(0.2, 0.9))

    def labels(self, classes: int = 3, gold=None) -> tuple[list[int], list[int]]:
        gold = self.rng.integers(0, classes, EXAMPLES) if gold is None else np.asarray(gold)
        right = self.rng.random(EXAMPLES) < self.share()
        prediction = np.where(right, gold, (gold + 1) % classes)
        return prediction.tolist(), gold.tolist()


def items(**dims) -> np.random.Generator:
    """The generator of an evaluated set's gold side: every run scored on it gets the same, so
    the paired tests pair them (xlt.analysis.compare needs the same gold)."""
    return np.random.default_rng(zlib.crc32(json.dumps(dims, sort_keys=True).encode()))


def classification(metrics: MetricsFile, values: Values, lang: str, split: str | None = None, classes: int = 3):
    dims = {"lang": lang} | ({"split": split} if split else {})
    prediction, gold = values.labels(classes, gold=items(**dims).integers(0, classes, EXAMPLES))
    metrics.add("accuracy", float(np.mean(np.equal(prediction, gold))), **dims)
    metrics.examples.append(example_set("classification", "accuracy", prediction=prediction, gold=gold, **dims))


def retrieval(metrics: MetricsFile, values: Values, **dims):
    """eval-embeddings' six retrieval records (xlt.evaluate.retrieval.retrieval_records) and its sets."""
    gold = list(range(EXAMPLES))
    accuracies = {}
    for direction in (XX_TO_EN, EN_TO_XX):
        retrieved, _ = values.labels(EXAMPLES)
        correct = [r == g for r, g in zip(retrieved, gold)]
        accuracies[direction] = float(np.mean(correct))
        metrics.add("error", 1 - accuracies[direction], direction=direction, **dims)
        metrics.add("accuracy@1", accuracies[direction], direction=direction, **dims)
        for metric in ("error", "accuracy@1"):
            metrics.examples.append(
                example_set(
                    "retrieval", metric, retrieved=retrieved, gold=gold, correct=correct, direction=direction, **dims
                )
            )
    mean = float(np.mean(list(accuracies.values())))
    metrics.add("mean_error", 1 - mean, **dims)
    metrics.add("mean_accuracy@1", mean, **dims)


def sts(metrics: MetricsFile, values: Values, dev: bool = False, **dims):
    """eval-embeddings' STS records: Pearson and Spearman per similarity, and their scored pairs."""
    gold = items(**dims).uniform(0, 5, EXAMPLES)
    for similarity in SIMILARITIES:
        predicted = gold + values.rng.normal(0, 2, EXAMPLES)
        metrics.add("pearson", float(pearsonr(gold, predicted)[0]), similarity=similarity, **dims)
        metrics.add("spearman", float(spearmanr(gold, predicted)[0]), similarity=similarity, **dims)
        extra = {"interval_only": True} if dev else {}
        metrics.examples.append(
            example_set("scores", "spearman", predicted=predicted, gold=gold, similarity=similarity, **dims, **extra)
        )


def eval_embeddings(metrics: MetricsFile, values: Values, job):
    for path in flag_values(job.args, "--bitext"):
        retrieval(metrics, values, **data_dims(path))
    for path in flag_values(job.args, "--sts"):
        sts(metrics, values, **data_dims(path))
    for path in flag_values(job.args, "--dev-sts"):
        sts(metrics, values, dev=True, **data_dims(path))


def eval_embedding_axes(job) -> dict:
    """What eval-embeddings adds to its --axes (xlt.evaluate.eval_embeddings)."""
    pooling = (flag_values(job.args, "--pooling") or ["mean"])[0]
    layer = int((flag_values(job.args, "--layer") or ["-1"])[0])
    match = {"match": flag_values(job.args, "--match")[0]} if flag_values(job.args, "--bitext") else {}
    return {"pooling": pooling, "layer": layer, "normalize": False} | match


def steps(job) -> list[int]:
    """0, eval_every, ... max_steps: where a training job evaluated."""
    every = int(float(flag_values(job.args, "--eval-every")[0]))
    last = int(float(flag_values(job.args, "--max-steps")[0]))
    return sorted({0, *range(every, last + 1, every), last})


def perplexity_sets(paths: list[str]) -> list[dict]:
    """results/runs/adapt/eval/<lang>/<split>.jsonl -> {lang, split} of each fixed-masked set."""
    return [{"lang": Path(p).parent.name, "split": Path(p).stem} for p in paths]


def perplexity(metrics: MetricsFile, values: Values, step=None, word_nll: bool = False, **dims):
    losses = values.rng.uniform(1, 4, EXAMPLES)
    tokens = items(**dims).integers(1, 9, EXAMPLES)  # the same sentences and masks in every run
    at = {} if step is None else {"step": step}
    loss = float(np.sum(losses * tokens) / np.sum(tokens))
    metrics.add("perplexity", float(np.exp(loss)), **dims, **at)
    metrics.add("mlm_loss", loss, **dims, **at)
    if step is None:
        metrics.add("masked_tokens", float(np.sum(tokens)), **dims)
        masks = [f"m{i}" for i in range(EXAMPLES)]
        metrics.examples.append(
            example_set("perplexity", "perplexity", loss=losses, tokens=tokens, masks=masks, mask_seed=1234, **dims)
        )
    if word_nll and step is None:
        for metric in ("nll_per_word", "nll_per_char", "pll_words"):
            metrics.add(metric, values.share() * 5, **dims)


# ---- per family: (rule, job, config) -> records and examples into `metrics`


def freeze_depth_records(metrics, values, rule, job, config):
    for lang in flag_values(job.args, "--langs")[0].split(","):
        classification(metrics, values, lang)
    metrics.add("accuracy", float(np.mean([r["value"] for r in metrics.records])), lang="avg")


def sbert_records(metrics, values, rule, job, config):
    metrics.axes |= eval_embedding_axes(job)
    eval_embeddings(metrics, values, job)


def dual_records(metrics, values, rule, job, config):
    if rule == "train_dual":
        metrics.axes |= {"trained": True, "match": flag_values(job.args, "--match")[0]}
        metrics.axes |= {"cache_frozen_prefix": False, "prefix_precision": "fp32"}
        metrics.add("dev_retrieval_acc_mean", values.share(), split="dev")
    elif rule == "mine":
        lang = metrics.axes.pop("pair", job.axes["pair"]).split("-")[0]
        metrics.add("threshold", values.share(), lang=lang, split="tune")
        for split in ("tune", "test"):
            for name in ("precision", "recall", "f1"):
                metrics.add(name, values.share(), lang=lang, split=split)
    else:
        metrics.axes |= eval_embedding_axes(job)
        eval_embeddings(metrics, values, job)


def alignment_records(metrics, values, rule, job, config):
    metrics.axes |= {"match": "index"}
    model = job.axes["model"]
    layers = settings.model_layers(config, model) if model in config["models"] else 12
    centered = [""] + ([CENTERED] if "--center" in map(str, job.args) else [])
    for path in flag_values(job.args, "--bitext"):
        lang = Path(path).parent.name
        for layer in range(layers + 1):
            for suffix in centered:
                gold = list(range(EXAMPLES))
                for direction in (XX_TO_EN, EN_TO_XX):
                    retrieved, _ = values.labels(EXAMPLES)
                    correct = [r == g for r, g in zip(retrieved, gold)]
                    dims = {"lang": lang, "layer": layer, "direction": direction}
                    metrics.add(RETRIEVAL_METRIC + suffix, float(np.mean(correct)), **dims)
                    metrics.examples.append(
                        example_set(
                            "retrieval",
                            RETRIEVAL_METRIC + suffix,
                            retrieved=retrieved,
                            gold=gold,
                            correct=correct,
                            **dims,
                        )
                    )
                translation, random = values.rng.uniform(0.3, 0.9, EXAMPLES), values.rng.uniform(0, 0.6, EXAMPLES)
                metrics.add(GAP_METRIC + suffix, float(np.mean(translation - random)), lang=lang, layer=layer)
                metrics.examples.append(
                    example_set(
                        "cosine_gap",
                        GAP_METRIC + suffix,
                        translation_cosine=translation,
                        random_cosine=random,
                        interval_only=True,
                        lang=lang,
                        layer=layer,
                    )
                )


def adapt_records(metrics, values, rule, job, config):
    word_nll = int((flag_values(job.args, "--pll-sentences") or ["0"])[0]) > 0
    if rule == "adapt_reference_perplexity":
        for dims in perplexity_sets(flag_values(job.args, "--data")):
            perplexity(metrics, values, word_nll=word_nll, **dims)
        return
    target = perplexity_sets(flag_values(job.args, "--target"))
    others = perplexity_sets(flag_values(job.args, "--eval"))
    levels = flag_values(job.args, "--compare-levels") or ["sentence"]
    for step in steps(job):
        for dims in target + others:
            perplexity(metrics, values, step=step, **dims)
        for layer in range(13):
            for level in levels:
                metrics.add("euclidean", values.share() * step, layer=layer, level=level, step=step)
                metrics.add("cka", 1 - values.share() * step / 100, layer=layer, level=level, step=step)
        metrics.add("trainable_layers", 12, step=step)
        if step:
            metrics.add("train_loss", values.share() * 3, step=step)
    metrics.add("selected_step", steps(job)[-1])
    for dims in target + others + perplexity_sets(flag_values(job.args, "--test")):
        perplexity(metrics, values, word_nll=word_nll, **dims)


def monox_records(metrics, values, rule, job, config):
    langs = flag_values(job.args, "--eval-langs")[0].split(",")
    source = flag_values(job.args, "--source-lang")[0]
    for lang in langs:
        classification(metrics, values, lang, split="test", classes=2)
        metrics.add("majority_share", 0.5 + values.share() / 2, lang=lang, split="test")
    tests = [r["value"] for r in metrics.records if r["metric"] == "accuracy"]
    metrics.add("accuracy", float(np.mean(tests)), lang="avg", split="test")
    metrics.add("accuracy", values.share(), lang=source, split="dev")
    metrics.add("train_examples", 20.0 if job.axes["size"] != "all" else 400.0)
    if job.axes["mode"] in ("kd", "pl"):
        metrics.add("distill_examples", 320.0)


RECORDS = {
    "freeze_depth": freeze_depth_records,
    "sbert": sbert_records,
    "dual": dual_records,
    "alignment": alignment_records,
    "adapt": adapt_records,
    "monox": monox_records,
}


def metrics_jobs(config: dict, family: str) -> dict[str, tuple[str, object]]:
    """metrics file -> (rule, job), for every job of the family's plan that writes one (LEDGER)."""
    plan = registry.plan(family)
    planned = plan.jobs(config)
    out = {}
    for rule, (wildcards, template) in plan.LEDGER.items():
        if template is None:
            continue
        for key, job in planned.get(rule, {}).items():
            out[template.format(**dict(zip(wildcards, key.split("/"))))] = (rule, job)
    return out


def write_metrics(config: dict, family: str, paths: list[str], emptied: tuple[str, ...] = ()) -> None:
    """A metrics file at every one of `paths` (relative to the working directory), as the family's
    job of it writes; the axes in `emptied` are null in every run (a sweep that does not plan them)."""
    jobs = metrics_jobs(config, family)
    for path in paths:
        rule, job = jobs[path]
        metrics = MetricsFile(family, job.run_id, axes=job_axes(job), meta={"model": "made-up"}, manifest=False)
        RECORDS[family](metrics, Values(path), rule, job, config)
        metrics.axes |= {axis: None for axis in emptied if axis in metrics.axes}
        metrics.write(path)
