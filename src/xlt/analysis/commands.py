"""`xlt compare`: a family's paired tests and seed spread (xlt.analysis.compare)."""

from __future__ import annotations

from xlt.core.verbs import ANALYSIS, Verb

GROUP = ANALYSIS


def _compare_arguments(p):
    p.add_argument(
        "metrics",
        nargs="+",
        help="the family's evaluation metrics JSON files (each with its <stem>.examples.jsonl.gz beside it)",
    )
    p.add_argument(
        "--family",
        required=True,
        help="the family (picks its baseline: nothing frozen, finetune, untrained, pre-trained)",
    )
    p.add_argument(
        "--training",
        nargs="*",
        default=[],
        help="the runs' training records (train.json), for what each run of a budget row trained: the "
        "sentences it saw, its steps, peak lr and dev checks (for a family with a budget axis)",
    )
    p.add_argument("--table", required=True, help="the family's tidy table (xlt aggregate), for the seed spread")
    p.add_argument("--out-tests", required=True, help="CSV of the paired comparisons (<family>_tests.csv)")
    p.add_argument(
        "--out-seeds", required=True, help="CSV of mean and between-seed std per setting (<family>_seeds.csv)"
    )
    p.add_argument("--resamples", type=int, default=1000, help="bootstrap resamples (config statistics.resamples)")
    p.add_argument("--seed", type=int, default=0, help="bootstrap seed (config statistics.seed)")
    p.add_argument("--confidence", type=float, default=0.95, help="interval level (config statistics.confidence)")
    p.add_argument("--alpha", type=float, default=0.05, help="family-wise error rate for `significant` (Holm)")


VERBS = {
    "compare": Verb(
        "xlt.analysis.compare_runs:main",
        "Paired tests between neighbouring sweep values and against the family's baseline (McNemar or "
        "paired bootstrap, Holm-corrected), and the spread over seeds",
        _compare_arguments,
    )
}
