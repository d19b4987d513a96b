"""Sparse prediction (xlt.families.adapt.masked_head): the vocabulary head runs on the masked
positions only, and losses, perplexities and gradients are those of the full logits."""

import logging

import pytest
import torch
from _tiny_mlm import DUTCH, ENGLISH, tiny_bert_mlm, wordpiece_tokenizer

from xlt.families.adapt import masked_head
from xlt.families.adapt.layer_schemes import apply_scheme
from xlt.families.adapt.masked_head import IGNORE_INDEX, masked_logits, split_masked_lm
from xlt.families.adapt.mlm import FixedMasking, perplexity
from xlt.families.adapt.mlm_objective import MlmCollate, mlm_loss
from xlt.families.adapt.schemes import parse_scheme
from xlt.families.adapt.word_nll import word_nll


@pytest.fixture(scope="module")
def tokenizer():
    return wordpiece_tokenizer(DUTCH + ENGLISH, 120)


def _roberta(vocab_size: int):
    import transformers as tf

    torch.manual_seed(0)
    return tf.RobertaForMaskedLM(
        tf.RobertaConfig(
            vocab_size=vocab_size,
            hidden_size=32,
            num_hidden_layers=2,
            num_attention_heads=2,
            intermediate_size=64,
            max_position_embeddings=70,
            pad_token_id=0,
        )
    ).eval()


def _demo_model(tmp_path_factory):
    """The demo's own builder (xlt.data.demo_model), cut small, loaded as the adapt verbs load it."""
    from transformers import AutoTokenizer

    from xlt.data.demo_model import build_demo_model
    from xlt.families.adapt.mlm import load_masked_lm

    out = tmp_path_factory.mktemp("demo-model")
    build_demo_model(out, ["en"], layers=2, hidden_size=32, heads=2, pretrain_steps=2, corpus_size=80, vocab_size=300)
    return load_masked_lm(str(out)).eval(), AutoTokenizer.from_pretrained(out)


def _rehearsal_standin(tmp_path_factory, hub_id: str):
    """A rehearsal stand-in (xlt.rehearse.models), as the cut-down rehearsal's jobs load it."""
    from transformers import AutoModelForMaskedLM, AutoTokenizer

    from xlt.rehearse.models import write_model

    path = write_model(tmp_path_factory.mktemp("hub"), hub_id, None, 2, ["en", "nl"])
    return AutoModelForMaskedLM.from_pretrained(path).eval(), AutoTokenizer.from_pretrained(path)


@pytest.fixture(scope="module", params=["bert", "roberta", "demo", "rehearsal-bert", "rehearsal-roberta"])
def model_and_tokenizer(request, tokenizer, tmp_path_factory):
    if request.param == "bert":
        return tiny_bert_mlm(len(tokenizer), layers=2, seed=4), tokenizer
    if request.param == "roberta":
        return _roberta(len(tokenizer)), tokenizer
    if request.param == "demo":
        return _demo_model(tmp_path_factory)
    hub_id = "bert-base-multilingual-cased" if request.param == "rehearsal-bert" else "FacebookAI/roberta-base"
    return _rehearsal_standin(tmp_path_factory, hub_id)


def _texts(tokenizer):
    # the rehearsal's tokenizers know their own words only; unknown words still make masked tokens
    return ["een", *DUTCH, *ENGLISH]


def _rows_the_head_sees(model):
    """A forward hook on the output projection: the rows each call of it projects."""
    seen = []
    handle = model.get_output_embeddings().register_forward_hook(
        lambda module, args, out: seen.append(args[0].reshape(-1, args[0].shape[-1]).shape[0])
    )
    return seen, handle


def test_the_head_is_found_generically(model_and_tokenizer):
    model, _ = model_and_tokenizer
    base, head = split_masked_lm(model)
    assert base is model.base_model
    assert any(m is model.get_output_embeddings() for m in head.modules())


def test_perplexity_equals_the_full_logits_and_the_head_sees_only_masked_rows(model_and_tokenizer, monkeypatch):
    model, tokenizer = model_and_tokenizer
    fixed = FixedMasking(tokenizer, _texts(tokenizer), seed=3, mlm_probability=0.3)
    seen, handle = _rows_the_head_sees(model)
    try:
        sparse = perplexity(model, fixed.batches(4), "cpu", per_sentence=True)
        assert sum(seen) == fixed.num_masked == sparse.tokens  # no unmasked row reaches the projection
        seen.clear()
        monkeypatch.setattr(masked_head, "split_masked_lm", lambda m: "forced by the test")
        full = perplexity(model, fixed.batches(4), "cpu", per_sentence=True)
    finally:
        handle.remove()
    assert sum(seen) == sum(b["input_ids"].numel() for b in fixed.batches(4) if (b["labels"] != IGNORE_INDEX).any())
    assert sparse.tokens == full.tokens and sparse.sentence_tokens == full.sentence_tokens
    assert sparse.loss == pytest.approx(full.loss, rel=1e-6)
    assert sparse.perplexity == pytest.approx(full.perplexity, rel=1e-6)
    assert list(sparse.sentence_loss) == pytest.approx(list(full.sentence_loss), rel=1e-5, abs=1e-6)


def _train_step_grads(model, batch, scheme):
    model.zero_grad(set_to_none=True)
    apply_scheme(model, scheme, step=0, epoch=0)
    model.train()
    torch.manual_seed(11)  # the same dropout draws on both paths
    loss = mlm_loss(model, batch)
    loss.backward()
    grads = {name: None if p.grad is None else p.grad.clone() for name, p in model.named_parameters()}
    model.zero_grad(set_to_none=True)
    return loss.detach(), grads


@pytest.mark.parametrize("scheme_spec", ["0-2", "1-2"])
def test_a_training_step_has_the_full_logits_loss_and_gradients(model_and_tokenizer, scheme_spec, monkeypatch):
    """The same loss and the same gradients, on the same parameters: frozen layers (the embeddings,
    layer 1 under 1-2) get none on either path."""
    model, tokenizer = model_and_tokenizer
    scheme = parse_scheme(scheme_spec, 2)
    collate = MlmCollate(tokenizer, 32, mlm_probability=0.3)
    torch.manual_seed(2)
    batch = collate(collate.encode(_texts(tokenizer)[:6]))
    seen, handle = _rows_the_head_sees(model)
    try:
        sparse_loss, sparse = _train_step_grads(model, batch, scheme)
        assert seen == [int((batch["labels"] != IGNORE_INDEX).sum())]
        monkeypatch.setattr(masked_head, "split_masked_lm", lambda m: "forced by the test")
        full_loss, full = _train_step_grads(model, batch, scheme)
    finally:
        handle.remove()
        model.eval()
    assert sparse_loss.item() == pytest.approx(full_loss.item(), rel=1e-6)
    assert sparse.keys() == full.keys()
    assert {n for n, g in sparse.items() if g is None} == {n for n, g in full.items() if g is None}
    frozen = [n for n, g in full.items() if g is None]
    assert any("embeddings" in n for n in frozen)
    assert any(".layer.0." in n for n in frozen) == (scheme_spec == "1-2")
    for name, grad in full.items():
        if grad is not None:
            torch.testing.assert_close(sparse[name], grad, rtol=1e-4, atol=1e-7, msg=name)


def test_word_nll_equals_the_full_logits_with_one_row_a_piece(model_and_tokenizer, monkeypatch):
    model, tokenizer = model_and_tokenizer
    texts = _texts(tokenizer)[:6]
    seen, handle = _rows_the_head_sees(model)
    try:
        sparse = word_nll(model, tokenizer, texts, batch_size=8)
        assert sum(seen) == sparse.pieces  # one projected row a forward pass
        monkeypatch.setattr(masked_head, "split_masked_lm", lambda m: "forced by the test")
        full = word_nll(model, tokenizer, texts, batch_size=8)
    finally:
        handle.remove()
    assert (sparse.words, sparse.chars, sparse.pieces) == (full.words, full.chars, full.pieces)
    assert sparse.nll == pytest.approx(full.nll, rel=1e-6)


def test_a_model_without_one_head_gets_the_full_logits_and_says_why(caplog):
    """DistilBERT's head is four modules beside the encoder: full logits, the reason logged."""
    import transformers as tf

    torch.manual_seed(0)
    model = tf.DistilBertForMaskedLM(
        tf.DistilBertConfig(vocab_size=120, dim=32, n_layers=2, n_heads=2, hidden_dim=64, max_position_embeddings=64)
    ).eval()
    reason = split_masked_lm(model)
    assert isinstance(reason, str) and "vocab_projector" in reason
    ids = torch.randint(5, 120, (3, 10), generator=torch.Generator().manual_seed(0))
    labels = torch.full_like(ids, IGNORE_INDEX)
    labels[:, 2] = ids[:, 2]
    masked_head._warned.clear()
    with caplog.at_level(logging.INFO, logger="xlt.families.adapt.masked_head"):
        logits, targets = masked_logits(model, ids, torch.ones_like(ids), labels)
        masked_logits(model, ids, torch.ones_like(ids), labels)
    assert [r.getMessage() for r in caplog.records].count(
        f"full logits at every position (no sparse prediction): {reason}"
    ) == 1  # once, not every batch
    with torch.no_grad():
        expected = model(input_ids=ids, attention_mask=torch.ones_like(ids)).logits[:, 2]
    torch.testing.assert_close(logits.detach(), expected)
    assert torch.equal(targets, ids[:, 2])


def test_a_compiled_model_runs_its_compiled_forward_whole():
    model = tiny_bert_mlm(50, layers=1)
    wrapped = torch.compile(model)  # not run: only its layout is read
    assert "torch.compile" in split_masked_lm(wrapped)
    assert split_masked_lm(model)[0] is model.bert
