"""The metrics file every job writes, and the one shape the aggregator reads.

A metrics file is ``{"meta": {...}, "metrics": [record, ...]}``. A record is a flat dict with
``metric`` and ``value`` and any of the dimension keys below (``lang``, ``layer``, ``step`` ...).
``meta["axes"]`` holds the sweep axes of the run (freeze depth, pooling, seed ...); the
aggregator turns them into columns, so nothing is ever parsed out of a file name.

Beside it, ``<stem>.examples.jsonl.gz`` holds the per-example outputs behind the metrics (one
line per evaluated set: its record dimensions, ``kind`` and parallel lists: ``prediction`` and
``gold`` labels, ``predicted`` and ``gold`` scores for STS, ``retrieved`` and ``gold`` indices
and ``correct`` for retrieval, per sentence the summed masked-token ``loss``, the masked
``tokens`` and a hash of its ``masks`` for masked-LM perplexity, with the ``mask_seed``; per
source sentence the ``kept``, ``correct`` and ``gold`` pair counts for mining's test split, and
for its tuning split the ``candidate_scores``, their ``candidate_gold`` flags and ``gold``; per
sentence pair its ``translation_cosine`` and ``random_cosine`` for the alignment cosine gap), so intervals
and paired tests need no model rerun. A set marked ``interval_only`` (a dev split, the
unlabelled pool, pseudo labels, mining, the alignment cosine gap) backs its record's interval but no
paired test.
"""

from __future__ import annotations

import csv
import gzip
import io
import json
import math
import platform
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from xlt.core.errors import XltError
from xlt.core.io import atomic_path, write_json, write_text
from xlt.core.manifest import write_manifest

CURVE_COLUMNS = ("step", "loss", "lr", "dev_score")

# when this `xlt` job started (set by xlt.cli.main): a metrics file's wall_s covers the whole
# job, including model loading and training that happen before the file is created
JOB_STARTED: float | None = None
# the job's parsed command line and its words (set by xlt.cli.main): the run manifest reads the
# model, revision, device, precision, seed and input files from them
JOB_ARGS = None
JOB_ARGV: list[str] | None = None


def job_started() -> float:
    return JOB_STARTED if JOB_STARTED is not None else time.time()


# dataset: tells apart evaluations that share lang/split (STS-b en test vs stsb_multi_mt en test)
DIMENSIONS = (
    "lang",
    "layer",
    "step",
    "direction",
    "similarity",
    "split",
    "model_role",
    "level",
    "dataset",
    "checkpoint",
)


def record(metric: str, value: float, **dims: Any) -> dict:
    unknown = set(dims) - set(DIMENSIONS)
    if unknown:
        raise ValueError(f"unknown metric dimension(s) {sorted(unknown)}; allowed: {DIMENSIONS}")
    value = float(value)
    return {"metric": metric, "value": value, **{k: v for k, v in dims.items() if v is not None}}


@dataclass
class MetricsFile:
    """Collects records and writes them with run metadata (atomically)."""

    family: str
    run_id: str
    axes: dict = field(default_factory=dict)
    meta: dict = field(default_factory=dict)
    records: list = field(default_factory=list)
    examples: list = field(default_factory=list)  # per-example outputs, see examples_path
    started: float = field(default_factory=job_started)
    manifest: bool = True  # write manifest.json beside the metrics file (xlt.core.manifest)
    curve: list = field(default_factory=list)  # a training run's TrainResult.curve

    def add(self, metric: str, value: float, **dims: Any) -> None:
        self.records.append(record(metric, value, **dims))

    def extend(self, records: list[dict]) -> None:
        self.records.extend(records)

    def write(self, path) -> None:
        """The metrics JSON at `path`; with a training `curve`, also `<stem>.curve.csv` beside it
        (step, loss, lr, dev_score: what `xlt plot-curves` draws)."""
        if self.curve:
            write_curve(self.curve, curve_path(path))
        bad = [r for r in self.records if not math.isfinite(r["value"])]
        meta = {
            "family": self.family,
            "run_id": self.run_id,
            "axes": self.axes,
            "wall_s": round(time.time() - self.started, 3),
            "host": platform.node(),
            **self.meta,
        }
        if bad:
            meta["non_finite_metrics"] = len(bad)
        if self.examples:  # first: the metrics file is what marks the job done
            write_examples(examples_path(path), self.examples)
        write_json(path, {"meta": meta, "metrics": self.records})
        if self.manifest:
            write_manifest(path, meta, self.axes, self.started, argv=JOB_ARGV, args=JOB_ARGS)


def curve_path(metrics_path: str | Path) -> Path:
    """Where a training run's curve lies: `<metrics stem>.curve.csv` beside its metrics JSON."""
    return Path(metrics_path).with_suffix(".curve.csv")


def write_curve(curve: list[dict], path: str | Path) -> None:
    """A training curve as CSV (CURVE_COLUMNS; dev_score empty where the step was not evaluated)."""
    text = io.StringIO()
    writer = csv.DictWriter(text, fieldnames=CURVE_COLUMNS, extrasaction="ignore", lineterminator="\n")
    writer.writeheader()
    writer.writerows({k: ("" if row.get(k) is None else row[k]) for k in CURVE_COLUMNS} for row in curve)
    write_text(path, text.getvalue())


EXAMPLE_KINDS = {
    "classification": ("prediction", "gold"),
    "scores": ("predicted", "gold"),
    "retrieval": ("retrieved", "gold", "correct"),
    "perplexity": ("loss", "tokens", "masks"),
    "mining": ("kept", "correct", "gold"),
    "mining_tuning": ("candidate_scores", "candidate_gold", "gold"),
    # per sentence pair: cosine with its translation and with its random partner
    # (xlt.evaluate.cosine_gap); the gap is the mean of their difference
    "cosine_gap": ("translation_cosine", "random_cosine"),
}
# the set gives its record an interval but no paired test compares it (xlt.analysis.compare),
# so adding such a set leaves every test table and its Holm correction as it was
INTERVAL_ONLY = "interval_only"
# keys of an example set that describe how it was drawn, not a record dimension
EXAMPLE_SETTINGS = ("mask_seed", INTERVAL_ONLY, "item_aligned")  # item_aligned: the dataset's declaration
# every per-example list key of any kind: what is not one of these (or kind / metric /
# a setting) is a record dimension
EXAMPLE_LISTS = frozenset(key for keys in EXAMPLE_KINDS.values() for key in keys)


def example_set(kind: str, metric: str, **fields_and_dims: Any) -> dict:
    """One evaluated set's per-example outputs: `kind`'s parallel lists plus record dimensions
    (and EXAMPLE_SETTINGS, e.g. the mask seed of a perplexity set)."""
    if kind not in EXAMPLE_KINDS:
        raise ValueError(f"unknown examples kind {kind!r}; known: {sorted(EXAMPLE_KINDS)}")
    lists = {k: [v.item() if hasattr(v, "item") else v for v in fields_and_dims.pop(k)] for k in EXAMPLE_KINDS[kind]}
    if len({len(v) for v in lists.values()}) != 1:
        raise ValueError(f"{kind} examples need parallel lists; lengths {[len(v) for v in lists.values()]}")
    settings = {k: fields_and_dims.pop(k) for k in EXAMPLE_SETTINGS if k in fields_and_dims}
    dims = record(metric, 0.0, **fields_and_dims)
    del dims["value"]
    return {"kind": kind, **dims, **settings, **lists}


def examples_path(metrics_path) -> str:
    """``x/y.json`` -> ``x/y.examples.jsonl.gz``."""
    text = str(metrics_path)
    return (text[: -len(".json")] if text.endswith(".json") else text) + ".examples.jsonl.gz"


def write_examples(path, sets: list[dict]) -> None:

    with atomic_path(path) as tmp, gzip.open(tmp, "wt", encoding="utf-8") as f:
        for one in sets:
            f.write(json.dumps(one, ensure_ascii=False) + "\n")


def read_examples(path) -> list[dict]:

    with gzip.open(path, "rt", encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def parse_axes(text: str) -> dict:
    """A run's sweep axes given on the command line as a JSON object (what the workflow passes)."""
    try:
        axes = json.loads(text)
    except json.JSONDecodeError as err:
        raise XltError(f"--axes {text!r} is not JSON ({err}); pass an object such as '{{\"margin\": 0.3}}'") from None
    if not isinstance(axes, dict):
        raise XltError(f"--axes {text!r} must be a JSON object mapping axis names to values")
    return axes
