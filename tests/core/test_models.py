"""xlt.core.models: what loading a checkpoint adds of its own."""

from __future__ import annotations

import torch
from safetensors import safe_open

from xlt.core.models import load_encoder


def test_weights_a_checkpoint_lacks_are_the_same_every_load_and_leave_the_callers_stream(demo_model_dir):
    """The demo model is a masked LM: its base model's pooler is not in the file. Loaded under two
    different random states it gets the same pooler (a trained sbert or dual encoder saves the same
    files every run), and the caller's stream after the load is what it was before it."""
    with safe_open(str(demo_model_dir / "model.safetensors"), "pt") as f:
        assert not any("pooler" in key for key in f.keys())
    torch.manual_seed(1)
    expected = torch.rand(4)
    torch.manual_seed(1)
    first = load_encoder(str(demo_model_dir))
    assert torch.equal(torch.rand(4), expected)
    torch.manual_seed(2)
    second = load_encoder(str(demo_model_dir))
    assert torch.equal(first.pooler.dense.weight, second.pooler.dense.weight)
    assert torch.equal(first.embeddings.word_embeddings.weight, second.embeddings.word_embeddings.weight)
