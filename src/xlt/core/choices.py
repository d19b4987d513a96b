"""The fixed choice lists that command-line flags offer and the modules that act on them check.

The lists shared by several families; a family's own lists live in its folder (its choices.py).
Kept free of heavy imports (no torch): building every verb's parser imports this module, and
`xlt --help` must stay well under a second.
"""

from __future__ import annotations

POOLING_MODES = ("cls", "mean", "max")  # xlt.core.pooling
SYMMETRIC_MODES = ("sum", "mean", "none")  # xlt.losses.additive_margin
HEADS = ("auto", "pooler", "mean")  # xlt.core.heads: the classification head of a fine-tuned encoder
# xlt.frozen_prefix.prefix_store: numpy writes both; bfloat16 has no .npy type
PREFIX_STORE_DTYPES = ("float16", "float32")
MATCH_RULES = ("index", "text")  # xlt.evaluate.retrieval: how a retrieved sentence counts as the right one
DEFAULT_MATCH = "index"  # what the CLI, the schemas and every family use unless told otherwise
MINING_STRATEGIES = ("max", "intersect", "forward", "backward")  # xlt.evaluate.mining
MINING_DEFAULT_K = 4  # xlt.evaluate.mining: neighbours per sentence in the ratio margin
PROJECTION_METHODS = ("tsne", "pca")  # xlt.evaluate.alignment: the 2-D scatter's projection
