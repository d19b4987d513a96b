"""Verbs of the shared evaluators.

`xlt eval-embeddings`: Tatoeba bitext retrieval error and STS correlations of a sentence encoder.

Any encoder in plain transformers layout (local directory or hub id) is pooled into sentence
vectors (`--pooling`, `--layer`; a saved sentence encoder's trained projection applied, as
sentence-transformers' Dense module), optionally scaled to unit length (`--normalize`, what a
sentence-transformers pipeline ending in a Normalize module does), then scored:

- Tatoeba (LASER layout, `--tatoeba-dir`, `--langs`; or normalised bitext JSONL, `--bitext`):
  cosine nearest-neighbour retrieval over each language's whole test set, error in both
  directions (``xx->en``, ``en->xx``), their mean and accuracy@1; see `xlt.evaluate.retrieval`
  for the definitions and the duplicates rule.
- STS (`--sts FILE`, repeatable): Pearson and Spearman of cosine, -euclidean, -manhattan and
  dot similarity against the gold scores; see `xlt.evaluate.sts`.

All input files are read and checked before the model is loaded. Metrics are written as one
MetricsFile (of the family --family names): values are fractions; the printed table shows them x100.
"""

from __future__ import annotations

from xlt.core.choices import DEFAULT_MATCH, MATCH_RULES, POOLING_MODES
from xlt.core.verbs import EVALUATION, Verb, add_metrics_out_argument, add_run_arguments
from xlt.data.sts_files import STS_FORMATS


def add_prompt_argument(parser) -> None:
    """--prompt of a verb that encodes sentences with a model (its config's models.<name>.prompt)."""
    parser.add_argument(
        "--prompt",
        default="",
        help="text put before every sentence before encoding, e.g. "
        "'query: ' for E5 (the config's models.<name>.prompt; default none)",
    )


GROUP = EVALUATION


def _eval_embeddings_arguments(parser) -> None:
    parser.add_argument("--model", required=True, help="local model directory (transformers layout) or hub id")
    parser.add_argument(
        "--pooling", choices=POOLING_MODES, default="mean", help="how token vectors become one sentence vector"
    )
    parser.add_argument(
        "--layer",
        type=int,
        default=-1,
        help="hidden-state index to pool: 0 = embeddings, -1 = last layer (default), -2 = second-to-last",
    )
    parser.add_argument(
        "--normalize",
        action="store_true",
        help="scale sentence vectors to unit length before scoring (as a sentence-transformers Normalize "
        "module does); leaves cosine unchanged, changes dot/euclidean/manhattan",
    )
    parser.add_argument(
        "--tatoeba-dir", help="folder with LASER-layout tatoeba.xxx-eng.xxx / tatoeba.xxx-eng.eng files"
    )
    parser.add_argument("--langs", help="comma-separated Tatoeba codes, e.g. deu,fra (default: every code found)")
    parser.add_argument(
        "--bitext",
        action="append",
        default=[],
        metavar="FILE",
        help="bitext JSONL (text = non-English, text_pair = English), repeatable, e.g. "
        "results/data/{dataset}/{lang}/{split}.jsonl; dataset, lang and split come from that path",
    )
    parser.add_argument(
        "--match",
        choices=MATCH_RULES,
        default=DEFAULT_MATCH,
        help="bitext retrieval correctness: index = the retrieved sentence is the gold one, by position "
        "(LASER's Tatoeba rule; default, the dev selection of a trained encoder uses it too); text = the retrieved "
        "string equals the gold string, so an identical duplicate at another index counts as correct "
        "(sentence-transformers' TranslationEvaluator). Recorded as the axis `match`",
    )
    parser.add_argument(
        "--sts",
        action="append",
        default=[],
        metavar="FILE",
        help="STS file (repeatable): original STS-b sts-*.csv, stsb_multi_mt stsb-xx-*.csv, or JSONL "
        "with text/text_pair/score; dataset, lang and split are taken from the file name",
    )
    parser.add_argument(
        "--dev-sts",
        action="append",
        default=[],
        metavar="FILE",
        help="STS dev file (repeatable), scored as --sts is (its rows carry the dev split of its path) but kept "
        "for intervals only: no paired test compares it (the dev set selected the checkpoint); a family "
        "scores its dev STS set so, e.g. the STS-b validation numbers seed 000 published",
    )
    add_prompt_argument(parser)
    parser.add_argument("--sts-format", choices=STS_FORMATS, help="force the STS format (default: detect per file)")
    add_metrics_out_argument(parser)
    add_run_arguments(parser, "--axes", "--run-id", run_id_default="from the model, pooling, layer and normalisation")
    parser.add_argument("--family", required=True, help="experiment family the rows belong to (its plan passes it)")
    parser.add_argument("--batch-size", type=int, default=64, help="sentences per forward pass")
    parser.add_argument("--max-length", type=int, default=128, help="tokens per sentence after truncation")
    add_run_arguments(parser, "--device")


VERBS = {
    "eval-embeddings": Verb(
        "xlt.evaluate.eval_embeddings:main",
        "Evaluate sentence embeddings: Tatoeba retrieval error (both directions) and STS correlations.",
        _eval_embeddings_arguments,
    )
}
