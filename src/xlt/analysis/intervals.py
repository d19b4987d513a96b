"""Bootstrap intervals for the records of one metrics file, from its examples file.

A record is matched to the per-example sets with the same dimensions: an accuracy to its
language's predictions, a retrieval error or accuracy@1 to its direction's retrieved indices
(mean_* to both directions), a correlation to its similarity's score pairs, a masked-LM
perplexity or loss to its set's per-sentence losses and masked tokens (resampling sentences),
a mining precision, recall or F1 to its split's per-source pair counts (the tuning split's:
to its per-source candidates, re-tuning the threshold per resample), an alignment cosine gap
to its layer's per-pair translation and random-partner cosines (resampling pairs), and an average over
languages (lang "avg") to every language's set. Several sets are resampled independently
(each within itself) and their resampled metrics averaged: a stratified bootstrap. Translated
test sets (XNLI, stsb_multi_mt, the demo's) are the same items in every language, and a model's
errors on an item are correlated across its translations; resampling each language on its own
would drop that correlation and make the average's interval too narrow. So the sets of an
average that are item-aligned (`item_aligned`: labelled or scored sets of equal size with the
same gold label or score at every position) are resampled with ONE shared draw of item indices.
Alignment is declared per dataset (`datasets.<name>.item_aligned`, xlt.data.item_alignment) and
reaches the sets as their `item_aligned` setting: declared sets that disagree (one language an
item short, another gold at a position) are refused, as `xlt prepare-data` refuses their data;
sets declared unaligned draw independently. Sets that declare nothing (a verb that does not
pass the declaration, files from before it) are detected from their gold, and an average whose
sets are labelled or scored but not detected as one item list logs a warning naming them
and their sizes, instead of drawing them independently in silence. The two
directions of one language's retrieval are the same sentence pairs, so a ``mean_*`` record
resamples them with the same draws (a paired bootstrap); the dual encoder's
``dev_retrieval_acc_mean`` averages every dev language and direction the same way. Records
named after their own sets (``bitext_retrieval_acc*``, ``dev_retrieval_acc*``,
``pseudo_label_accuracy``, ``cosine_gap*``) only match sets of that name.

adapt's per-step records keep no per-sentence outputs (that would be sentences x checkpoints):
the job computes their bounds where it has the losses, with `RepeatedSetIntervals` (the same
draws as here), and `xlt aggregate` keeps the bounds a record brings.
"""

from __future__ import annotations

import logging
from collections.abc import Hashable

import numpy as np

from xlt.analysis.bootstrap import (
    MINING_METRICS,
    percentiles,
    resample_counts,
    resampled_metric,
    resampled_mining,
    resampled_tuned_mining,
)
from xlt.analysis.defaults import DEFAULT_CONFIDENCE, DEFAULT_RESAMPLES, DEFAULT_SEED
from xlt.core.errors import XltError
from xlt.core.metrics import EXAMPLE_LISTS, EXAMPLE_SETTINGS

log = logging.getLogger(__name__)

# record metric -> (statistic on the examples, example-set metric it reads or None for any)
_RETRIEVAL = {
    "error": "error_rate",
    "mean_error": "error_rate",
    "accuracy@1": "accuracy",
    "mean_accuracy@1": "accuracy",
    "bitext_retrieval_acc": "accuracy",
    "bitext_retrieval_acc_centered": "accuracy",
    "dev_retrieval_acc": "accuracy",
    "dev_retrieval_acc_mean": "accuracy",
}
# record metric -> the metric its example sets are stored under, where only those may back it
_OWN_SETS = {
    "bitext_retrieval_acc": "bitext_retrieval_acc",
    "bitext_retrieval_acc_centered": "bitext_retrieval_acc_centered",
    "cosine_gap": "cosine_gap",
    "cosine_gap_centered": "cosine_gap_centered",
    "dev_retrieval_acc": "dev_retrieval_acc",
    "dev_retrieval_acc_mean": "dev_retrieval_acc",
    "pseudo_label_accuracy": "pseudo_label_accuracy",
}
# record metric -> the dimensions it averages over (besides lang "avg" and mean_*'s direction)
_POOLED = {"dev_retrieval_acc_mean": {"lang", "direction"}}
# record kind -> the example-set kinds that may back it: a mining score is backed by its split's
# counts at the fixed tuned threshold (test) or by the candidates to tune it again on (tune)
_BACKING_KINDS = {"mining": ("mining", "mining_tuning")}
_SET_KEYS = {"kind", "metric", *EXAMPLE_SETTINGS, *EXAMPLE_LISTS}


def _statistic(record: dict) -> tuple[str, str] | None:
    """(kind of example set, bootstrap metric) a record is computed from, or None."""
    metric = record["metric"]
    if metric in ("accuracy", "pseudo_label_accuracy"):
        return "classification", "accuracy"
    if metric in ("pearson", "spearman"):
        return "scores", metric
    if metric in _RETRIEVAL:
        return "retrieval", _RETRIEVAL[metric]
    if metric in ("perplexity", "mlm_loss"):
        return "perplexity", metric
    if metric in MINING_METRICS:
        return "mining", metric
    if metric in ("cosine_gap", "cosine_gap_centered"):  # xlt.evaluate.cosine_gap's names
        return "cosine_gap", "mean_difference"
    return None


def _free(record: dict) -> set[str]:
    """The dimensions a record averages over: its sets may take any value there."""
    free = set(_POOLED.get(record["metric"], ()))
    if record.get("lang") == "avg":
        free.add("lang")
    if record["metric"].startswith("mean_"):
        free.add("direction")
    return free


def _matches(record: dict, one: dict, kind: str) -> bool:
    if one["kind"] not in _BACKING_KINDS.get(kind, (kind,)):
        return False
    if record["metric"] in _OWN_SETS and one["metric"] != _OWN_SETS[record["metric"]]:
        return False
    free = _free(record)
    dims = {k: v for k, v in one.items() if k not in _SET_KEYS}
    wanted = {k: v for k, v in record.items() if k not in ("metric", "value") and k not in free}
    return all(record.get(k) == v for k, v in dims.items() if k not in free) and all(
        dims.get(k) == v for k, v in wanted.items()
    )


def _size(one: dict) -> int:
    """How many examples (sentences, for perplexity; sentence pairs, for the cosine gap) the set holds."""
    if one["kind"] == "cosine_gap":
        return len(one["translation_cosine"])
    return len(one["loss"] if one["kind"] == "perplexity" else one["gold"])


def _resampled(one: dict, metric: str, counts: np.ndarray) -> np.ndarray:
    if one["kind"] == "perplexity":
        return resampled_metric(metric, np.asarray(one["loss"], float), np.asarray(one["tokens"], float), counts)
    if one["kind"] == "classification":
        return resampled_metric(metric, np.asarray(one["prediction"]), np.asarray(one["gold"]), counts)
    if one["kind"] == "scores":
        return resampled_metric(metric, np.asarray(one["predicted"]), np.asarray(one["gold"]), counts)
    if one["kind"] == "mining":
        return resampled_mining(metric, one["kept"], one["correct"], one["gold"], counts)
    if one["kind"] == "cosine_gap":
        return resampled_metric(
            metric, np.asarray(one["translation_cosine"], float), np.asarray(one["random_cosine"], float), counts
        )
    if one["kind"] == "mining_tuning":
        return resampled_tuned_mining(metric, one["candidate_scores"], one["candidate_gold"], one["gold"], counts)
    correct = np.asarray(one["correct"], dtype=np.int64)
    return resampled_metric(metric, correct, np.ones_like(correct), counts)


# kinds whose gold is a property of the item (a label, a score): equal gold lists mean the same
# items (retrieval's gold is a partner index, the same 0..n-1 in unrelated languages)
_ALIGNABLE_KINDS = ("classification", "scores")


def item_aligned(sets: list[dict]) -> bool:
    """Whether the sets are one item list in several languages: labelled or scored sets of equal
    size whose gold agrees at every position (what translated test sets such as XNLI give)."""
    if len(sets) < 2 or any(one["kind"] not in _ALIGNABLE_KINDS for one in sets):
        return False
    gold = [np.asarray(one["gold"]) for one in sets]
    return all(g.shape == gold[0].shape and np.array_equal(g, gold[0]) for g in gold[1:])


def _shared_draws(record: dict, sets: list[dict]) -> bool:
    """Whether the sets of `record` take one shared draw: as their dataset declares (refused when
    the data disagree), else as `item_aligned` detects, with a warning where it nearly is."""
    declared = {one.get("item_aligned") for one in sets}
    if len(sets) < 2 or declared == {False}:
        return False
    detected = item_aligned(sets)
    setting = ", ".join(f"{k} {v}" for k, v in record.items() if k not in ("metric", "value"))
    where = f"the interval of {record['metric']} ({setting})"
    sizes = ", ".join(f"{one.get('lang')}: {_size(one)}" for one in sets)
    if True in declared and not detected:
        raise XltError(
            f"{where}: its example sets are declared item-aligned (datasets.<name>.item_aligned) but "
            f"their items disagree ({sizes} items; or another gold at a position); evaluate every "
            f"language on the whole prepared set, or set item_aligned: false for that dataset"
        )
    if not detected and None in declared and {one["kind"] for one in sets} <= set(_ALIGNABLE_KINDS):
        log.warning(
            "%s: its sets (%s items) do not declare item alignment and their gold does not line up, so "
            "every language draws on its own; if they are translations of one set, an item is missing "
            "or out of order: declare datasets.<name>.item_aligned (true: prepare-data names the "
            "disagreement; false: silences this)",
            where,
            sizes,
        )
    return detected


def _stratum_counts(size: int, stratum: int, resamples: int, seed: int) -> np.ndarray:
    """Resample counts of the `stratum`-th language set of a record: each language draws with its
    own seed (independent samples); a record over one set draws with `seed` itself."""
    return resample_counts(size, resamples, seed + stratum)


def record_interval(
    record: dict,
    sets: list[dict],
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    confidence: float = DEFAULT_CONFIDENCE,
) -> tuple[float, float] | None:
    """(ci_low, ci_high) of one record, or None when no example set backs it."""
    statistic = _statistic(record)
    if statistic is None:
        return None
    kind, metric = statistic
    matched = [one for one in sets if _matches(record, one, kind)]
    if not matched or (not _free(record) and len(matched) > 1):
        return None  # ambiguous: better no interval than the wrong one
    # one resample matrix per language: the two directions of a mean_* record are the same
    # sentence pairs, resampled together (paired); different languages are independent samples,
    # unless they are translations of the same items: then every language takes the same draws
    langs = list(dict.fromkeys(one.get("lang") for one in matched))
    shared = _shared_draws(record, matched)
    draws = np.mean(
        [
            _resampled(
                one, metric, _stratum_counts(_size(one), 0 if shared else langs.index(one.get("lang")), resamples, seed)
            )
            for one in matched
        ],
        axis=0,
    )
    low, high = percentiles(draws, confidence)
    return float(low), float(high)


class RepeatedSetIntervals:
    """Bounds of metrics on sets that are scored again and again (adapt's checkpoints), computed
    where the per-example outputs are, so none of them has to be kept.

    Each set's resample counts are drawn once, the draws `record_interval` gives a record over
    that set alone: every evaluation of a set resamples the same examples (a paired view over
    the steps), and an evaluation whose outputs were kept gets the interval `xlt aggregate` gives it.
    """

    def __init__(
        self, resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED, confidence: float = DEFAULT_CONFIDENCE
    ):
        self.resamples, self.seed, self.confidence = resamples, seed, confidence
        self._counts: dict[Hashable, np.ndarray] = {}

    def interval(self, key: Hashable, metric: str, a, b) -> tuple[float, float]:
        """(ci_low, ci_high) of `metric` on set `key`'s per-example outputs `a`, `b` (as for
        `resampled_metric`; perplexity: each sentence's summed loss and masked tokens)."""
        a = np.asarray(a)
        if key not in self._counts:
            self._counts[key] = _stratum_counts(a.shape[-1], 0, self.resamples, self.seed)
        low, high = percentiles(resampled_metric(metric, a, b, self._counts[key]), self.confidence)
        return float(low), float(high)
