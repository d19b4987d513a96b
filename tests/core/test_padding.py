"""Padding to a multiple (xlt.core.padding): widths, and the masked pad tokens changing no result."""

import numpy as np
import pytest
import torch
from helpers.numerics import forward_bound, head_gain

from xlt.core.classification import make_collate, predict_logits
from xlt.core.models import load_classifier, load_tokenizer
from xlt.core.padding import CUDA_MULTIPLE, pad_multiple
from xlt.core.sentence_encoder import tokenize

TEXTS = ["a short one", "a somewhat longer sentence with more words in it than the first", "three words here"]


def test_cuda_pads_to_the_multiple_and_cpu_to_the_longest():
    assert pad_multiple("cpu") is None
    assert pad_multiple(torch.device("cpu")) is None
    assert pad_multiple("cuda") == pad_multiple("cuda:0") == CUDA_MULTIPLE == 8
    assert pad_multiple("auto") == (8 if torch.cuda.is_available() else None)


def test_collate_rounds_the_width_up_and_keeps_every_token(demo_model_dir):
    tokenizer = load_tokenizer(str(demo_model_dir))
    examples = [{"text": t, "text_pair": "yes", "label": i % 3} for i, t in enumerate(TEXTS)]
    plain = make_collate(tokenizer, 64)(examples)
    padded = make_collate(tokenizer, 64, pad_to_multiple_of=8)(examples)
    width = plain["input_ids"].shape[1]
    assert width % 8 != 0, "pick texts whose longest pair is not already a multiple of 8"
    assert padded["input_ids"].shape[1] == -(-width // 8) * 8
    for key in ("input_ids", "attention_mask"):
        assert torch.equal(padded[key][:, :width], plain[key])
    assert not padded["attention_mask"][:, width:].any()
    assert torch.equal(padded["labels"], plain["labels"])
    side = tokenize(tokenizer, TEXTS, 64, pad_to_multiple_of=8)
    assert side["input_ids"].shape[1] % 8 == 0


@pytest.mark.numerics
def test_masked_pad_tokens_change_no_logit_or_vector(demo_model_dir):
    """What a CUDA run computes padded to 8 equals padding to the longest, up to float rounding."""
    tokenizer = load_tokenizer(str(demo_model_dir))
    torch.manual_seed(0)
    model = load_classifier(str(demo_model_dir), 3).eval()
    examples = [{"text": t, "text_pair": t.upper()} for t in TEXTS]
    collates = [make_collate(tokenizer, 64, with_labels=False, pad_to_multiple_of=m) for m in (None, 8)]
    with torch.no_grad():
        plain, padded = (model(**collate(examples)).logits for collate in collates)
        states = model.base_model(**collates[0](examples), output_hidden_states=True).hidden_states
    # the padded batch's sums run in another order in every stage, relative to the activations' scale, through
    # the head's gain; measured bitwise (AVX2 and default)
    bound = forward_bound(model.config, tokens=64) * max(h.abs().max().item() for h in states) * head_gain(model)
    torch.testing.assert_close(padded, plain, atol=bound, rtol=0)
    assert plain.abs().max() > 0
    # evaluation pads by the model's device: on the CPU exactly what it did before
    assert np.array_equal(predict_logits(model, tokenizer, examples, 64), plain.numpy())
