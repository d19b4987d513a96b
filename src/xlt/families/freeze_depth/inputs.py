"""What the freeze-depth jobs read and check before they load a model: the fields of classification
records, and a freeze depth within the model's layers."""

from __future__ import annotations

from xlt.core.errors import XltError
from xlt.core.models import config_num_layers

CLASSIFICATION_FIELDS = ("text", "label")
CLASSIFICATION_NEEDS = (
    "this family trains and scores a classifier and needs an nli or sentiment dataset "
    "(records with text, [text_pair,] label, as xlt prepare-data writes them)"
)


def check_freeze_depth(model: str, depth: int) -> None:
    layers = config_num_layers(model)  # config.json only: no weights are loaded for this
    if not -1 <= depth <= layers:
        raise XltError(
            f"--freeze-depth {depth} is out of range for {model} with {layers} layers (its config.json); "
            f"use -1 (nothing frozen), 0 (embeddings) .. {layers}"
        )
