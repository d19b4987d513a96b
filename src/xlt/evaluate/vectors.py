"""The one L2 normaliser every evaluator shares.

Rows are scaled to unit length with a 1e-12 floor on the norm, which is what
`torch.nn.functional.normalize` and `sentence_transformers.util.cos_sim` do (a zero row
stays zero instead of becoming NaN). `dtype` fixes the precision the caller computes in:
float32 for the Tatoeba / mining evaluations (as sentence-transformers and LASER), float64
for the per-layer alignment analysis; None keeps the input's type.
"""

from __future__ import annotations

import numpy as np

# torch.nn.functional.normalize's default eps: norms below it are clamped, not divided by
NORM_FLOOR = 1e-12


def l2_normalise(vectors, dtype=None) -> np.ndarray:
    """Rows of `vectors` (cast to `dtype` first unless None) scaled to unit L2 length."""
    vectors = np.asarray(vectors, dtype=dtype)
    return vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), NORM_FLOOR)
