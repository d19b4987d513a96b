"""The adapt family's jobs: `xlt sample-texts` (fixed evaluation sentences), `xlt adapt-mlm`
(one adaptation run), `xlt perplexity` (a model on fixed-masked sets) and `xlt adapt-summary`
(the final-perplexity table): their flags, and the module that runs each (sample_texts.py,
adapt_mlm.py, perplexity.py, adapt_summary.py)."""

from __future__ import annotations

from pathlib import Path

from xlt.analysis.defaults import DEFAULT_CONFIDENCE, DEFAULT_RESAMPLES, DEFAULT_SEED
from xlt.core.train_args import add_train_arguments
from xlt.core.verbs import Verb, add_metrics_out_argument, add_run_arguments, family_group
from xlt.data.sample import TEXT_FIELDS
from xlt.families.adapt.choices import ADAPT_SELECT, SIMILARITY_LEVELS

GROUP = family_group("adapt", "adapt a masked LM to a target language, perplexity and summaries")


def _sample_texts_arguments(p):
    p.add_argument("--data", required=True, nargs="+", type=Path, help="normalised JSONL files (e.g. one per language)")
    p.add_argument(
        "--fields",
        nargs="+",
        default=["text"],
        choices=TEXT_FIELDS,
        help="record fields that hold sentences (XNLI: text = premise, text_pair = hypothesis)",
    )
    size = p.add_mutually_exclusive_group(required=True)
    size.add_argument("--max-size", type=int, help="at most this many sentences (all of them when fewer)")
    size.add_argument("--size-of", type=Path, help="exactly as many sentences as this JSONL file has (size matching)")
    p.add_argument("--seed", type=int, default=1, help="seed of the sample")
    p.add_argument("--out", required=True, type=Path, help="JSONL file to write ({'text': ...} per line)")


def _add_word_nll_arguments(p):
    p.add_argument(
        "--pll-sentences",
        type=int,
        default=0,
        help="sentences per set (spread over it) scored for NLL per word and per character, the "
        "tokenizer-independent measure (word-level pseudo-log-likelihood; 0 = none)",
    )
    p.add_argument("--pll-words", type=int, default=40, help="first words of each of those sentences scored")
    p.add_argument(
        "--max-unk-share",
        type=float,
        default=0.01,
        help="a language whose scored pieces are more often the unknown token is flagged (unk_flagged)",
    )


def _add_run_and_metrics_arguments(p):
    """--run-id, --axes and --out of a job that writes one metrics JSON, its run id by default
    the name of that file's directory."""
    add_run_arguments(p, "--run-id", "--axes", run_id_default="--out's directory name")
    add_metrics_out_argument(p, type=Path)


def _adapt_mlm_arguments(p):
    p.add_argument("--model", required=True, help="masked LM to adapt: directory or hub id (e.g. mBERT)")
    p.add_argument("--train", required=True, type=Path, help="normalised JSONL of target-language sentences ('text')")
    p.add_argument(
        "--target",
        required=True,
        type=Path,
        help="held-out target-language JSONL: curves and checkpoint selection (dims from the path: "
        "lang = directory name, split = file stem, as in `xlt perplexity`)",
    )
    p.add_argument(
        "--eval",
        action="append",
        type=Path,
        default=[],
        help="further JSONL evaluated at every checkpoint (e.g. the multilingual set); repeatable",
    )
    p.add_argument(
        "--test",
        action="append",
        type=Path,
        default=[],
        help="JSONL evaluated only once, after training, on the selected model; repeatable",
    )
    p.add_argument(
        "--scheme",
        required=True,
        help="trained layers: 'A-B' (layers A+1..B, embeddings frozen) or JSON, e.g. "
        '\'{"gradual": {"every_epochs": 1, "step": 4, "start": 4}}\'',
    )
    p.add_argument(
        "--select",
        choices=ADAPT_SELECT,
        default="best",
        help="keep the checkpoint with the best target perplexity (the seed's early stopping) or the last",
    )
    p.add_argument("--native", default=None, help="native target-language model to compare layers with (optional)")
    p.add_argument("--compare", type=Path, default=None, help="JSONL of sentences for the layer comparison")
    p.add_argument(
        "--compare-layers",
        type=int,
        nargs="+",
        default=None,
        help="hidden-state indices (0 = embeddings; default: all both models have)",
    )
    p.add_argument(
        "--compare-levels",
        nargs="+",
        choices=SIMILARITY_LEVELS,
        default=list(SIMILARITY_LEVELS),
        help="sentence = mean-pooled sentence vectors, word = each word's first sub-word",
    )
    p.add_argument("--mask-seed", type=int, default=1234, help="seed of the fixed evaluation masks")
    p.add_argument("--mlm-probability", type=float, default=0.15, help="share of tokens masked (80/10/10 rule)")
    p.add_argument("--eval-batch-size", type=int, default=16, help="batch size of the perplexity evaluations")
    # the per-step intervals are computed here, so they need `xlt aggregate`'s bootstrap settings
    p.add_argument(
        "--bootstrap-resamples",
        type=int,
        default=DEFAULT_RESAMPLES,
        help="bootstrap resamples of each checkpoint's perplexity interval (config statistics.resamples)",
    )
    p.add_argument("--bootstrap-seed", type=int, default=DEFAULT_SEED, help="bootstrap seed (config statistics.seed)")
    p.add_argument(
        "--bootstrap-confidence",
        type=float,
        default=DEFAULT_CONFIDENCE,
        help="interval level (config statistics.confidence)",
    )
    _add_word_nll_arguments(p)
    _add_run_and_metrics_arguments(p)
    p.add_argument(
        "--checkpoint-dir",
        type=Path,
        default=None,
        help="resumable training state (default: <--out's directory>/checkpoint, not an output); "
        "removed once the metrics are written",
    )
    add_train_arguments(p)


def _perplexity_arguments(p):
    p.add_argument("--model", required=True, help="masked-LM directory or hub id")
    p.add_argument(
        "--data",
        required=True,
        action="append",
        type=Path,
        help="JSONL file with a 'text' key per record; repeat for several files",
    )
    p.add_argument(
        "--langs",
        nargs="+",
        default=None,
        help="language of each --data file, in order (default: each file's parent directory name)",
    )
    p.add_argument("--mask-seed", type=int, default=1234, help="seed of the fixed evaluation masks")
    p.add_argument("--mlm-probability", type=float, default=0.15, help="share of tokens masked (80/10/10 rule)")
    p.add_argument("--max-sentences", type=int, default=None, help="use the first N non-empty sentences per file")
    p.add_argument("--max-length", type=int, default=128, help="tokens per sentence (longer ones are cut)")
    p.add_argument("--batch-size", type=int, default=16, help="sentences per forward pass")
    add_run_arguments(p, "--device")
    _add_word_nll_arguments(p)
    p.add_argument("--family", default="mlm", help="family name in the metrics file (e.g. adapt)")
    _add_run_and_metrics_arguments(p)


def _adapt_summary_arguments(p):
    p.add_argument("--table", required=True, help="tidy CSV from `xlt aggregate` (adapt runs + references)")
    p.add_argument("--out", required=True, help="CSV path")
    p.add_argument(
        "--word-nll-out",
        default=None,
        help="CSV path of the NLL per word / character table (header only where no run scored them)",
    )


VERBS = {
    "sample-texts": Verb(
        "xlt.families.adapt.sample_texts:main",
        "Draw a fixed evaluation sentence set (seeded, balanced across files) into one JSONL file",
        _sample_texts_arguments,
    ),
    "adapt-mlm": Verb(
        "xlt.families.adapt.adapt_mlm:main",
        "MLM-train a masked LM on a target-language corpus under a layer scheme; perplexity and distance "
        "to a native model at step 0 and every --eval-every steps (fixed masks), final perplexities",
        _adapt_mlm_arguments,
    ),
    "perplexity": Verb(
        "xlt.families.adapt.perplexity:main",
        "masked-LM perplexity per data file, with masks fixed by --mask-seed (comparable across runs)",
        _perplexity_arguments,
    ),
    "adapt-summary": Verb(
        "xlt.families.adapt.adapt_summary:main",
        "Final perplexity (and NLL per word / character) per layer scheme and reference model "
        "(mean/sd over seeds) from the adapt tidy table",
        _adapt_summary_arguments,
    ),
}
