"""`xlt align`: per-layer cross-lingual alignment of an encoder on parallel sentences.

Each --bitext is a normalised JSONL file (text = non-English side, text_pair = English).
Its language comes from --langs (same order as the files) or else from the file's parent
directory name (results/data/tatoeba/deu/test.jsonl -> deu). Besides retrieval accuracy every
layer gets the cosine gap of translations (xlt.evaluate.cosine_gap); `xlt align-gap-plot` draws
it per analysed model from the aggregated table. A saved encoder with a trained projection (a
distilled student narrower or wider than its teacher) gets one more index, its last layer + 1:
its pooled layer through the projection, the sentence vector it emits to every other evaluator.
"""

from __future__ import annotations

from xlt.core.choices import POOLING_MODES, PROJECTION_METHODS
from xlt.core.verbs import Verb, add_model_argument, add_run_arguments, family_group
from xlt.report.commands import add_figure_arguments

GROUP = family_group("alignment", "per-layer cross-lingual alignment of an encoder: retrieval, cosine gap")


def _align_arguments(p):
    add_model_argument(p)
    p.add_argument(
        "--bitext",
        action="append",
        required=True,
        metavar="FILE.jsonl",
        help="normalised bitext records (text = non-English, text_pair = English); repeat for more languages",
    )
    p.add_argument(
        "--langs", help="comma-separated language codes, one per --bitext (default: each file's parent directory name)"
    )
    p.add_argument(
        "--layers", default="all", help="'all' or comma-separated hidden-state indices, 0 = embeddings (default all)"
    )
    p.add_argument(
        "--pooling",
        default="mean",
        choices=POOLING_MODES,
        help="how token vectors become one sentence vector (default mean)",
    )
    p.add_argument(
        "--prompt",
        default="",
        help="text put before every sentence before encoding, e.g. "
        "'query: ' for E5 (the config's models.<name>.prompt; default none)",
    )
    p.add_argument(
        "--center",
        action="store_true",
        help="also report accuracy and cosine gap after subtracting each language's mean vector "
        "(metrics bitext_retrieval_acc_centered, cosine_gap_centered)",
    )
    p.add_argument(
        "--tsne-layers", default="", help="comma-separated hidden-state indices to project in 2-D (needs --out-plots)"
    )
    p.add_argument(
        "--tsne-sample", type=int, default=200, help="parallel pairs per language in the 2-D pictures (default 200)"
    )
    p.add_argument(
        "--projection", default="tsne", choices=PROJECTION_METHODS, help="2-D projection method (default tsne)"
    )
    p.add_argument(
        "--english-label",
        default="en",
        help="language label of the English side in the pictures (default en; eng for Tatoeba codes)",
    )
    p.add_argument("--tsne-threads", type=int, default=1, help="OpenMP threads for t-SNE (default 1)")
    p.add_argument(
        "--seed",
        type=int,
        default=0,
        help="seed of the pair sample, the projection and the cosine gap's random pairs (default 0)",
    )
    p.add_argument("--batch-size", type=int, default=64, help="sentences encoded at once (default 64)")
    p.add_argument(
        "--max-length", type=int, default=128, help="tokens per sentence; longer ones are truncated (default 128)"
    )
    add_run_arguments(
        p, "--device", "--run-id", "--axes", "--out-metrics", run_id_default="the --model directory's name"
    )
    p.add_argument("--out-table", help="CSV: one row per layer, one column per language/direction")
    p.add_argument("--out-plots", help="directory for retrieval_by_layer.png and the projection grid")


def _gap_plot_arguments(p):
    p.add_argument("--table", required=True, help="the alignment family's tidy CSV from `xlt aggregate`")
    add_run_arguments(p, "--run-id")  # required: the analysed run's rows, e.g. pretrained-mbert
    add_figure_arguments(p, "'<run id>: cosine gap of translations by layer'")


VERBS = {
    "align": Verb(
        "xlt.families.alignment.align:main",
        "Per-layer bitext retrieval accuracy (both directions) and cosine gap of translations of an "
        "encoder, with optional centring and t-SNE pictures",
        _align_arguments,
    ),
    "align-gap-plot": Verb(
        "xlt.families.alignment.gap_plot:main",
        "One analysed model's cosine gap of translations by layer (a line per language, raw and "
        "centred panels, bootstrap bands) from the alignment table",
        _gap_plot_arguments,
    ),
}
