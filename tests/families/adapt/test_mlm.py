import math

import pytest
import torch
from _tiny_mlm import DUTCH, ENGLISH, tiny_bert_mlm, wordpiece_tokenizer

from xlt.core.errors import XltError
from xlt.families.adapt.mlm import IGNORE_INDEX, FixedMasking, TokenizerInfo, mask_tokens, perplexity

INFO = TokenizerInfo(mask_token_id=4, pad_token_id=0, vocab_size=1000, special_ids=(0, 1, 2, 3, 4))


def _batch(rows=200, cols=100, seed=0):
    g = torch.Generator().manual_seed(seed)
    ids = torch.randint(5, 1000, (rows, cols), generator=g)
    special = torch.zeros_like(ids)
    ids[:, 0], special[:, 0] = 2, 1  # [CLS]
    ids[:, -1], special[:, -1] = 3, 1  # [SEP]
    ids[::2, -20:-1] = 0  # padding in every other row, deliberately NOT flagged in special_tokens_mask
    return ids, special


def test_masking_proportions_follow_80_10_10():
    ids, special = _batch()
    masked, labels = mask_tokens(ids, special, INFO, torch.Generator().manual_seed(1))
    maskable = (special == 0) & (ids != 0)
    picked = labels != IGNORE_INDEX
    assert abs(picked.sum().item() / maskable.sum().item() - 0.15) < 0.01
    n = picked.sum().item()
    as_mask = (masked == 4) & picked
    unchanged = (masked == ids) & picked
    replaced = picked & ~as_mask & ~unchanged
    assert abs(as_mask.sum().item() / n - 0.8) < 0.03
    assert abs(replaced.sum().item() / n - 0.1) < 0.02
    assert abs(unchanged.sum().item() / n - 0.1) < 0.02
    assert torch.equal(labels[picked], ids[picked])
    assert torch.equal(masked[~picked], ids[~picked])


def test_special_tokens_and_padding_never_masked_nor_planted():
    ids, special = _batch()
    for seed in range(5):
        masked, labels = mask_tokens(ids, special, INFO, torch.Generator().manual_seed(seed), mlm_probability=0.5)
        protected = (special == 1) | (ids == 0)
        assert (labels[protected] == IGNORE_INDEX).all()
        assert torch.equal(masked[protected], ids[protected])
        replaced = (labels != IGNORE_INDEX) & (masked != 4) & (masked != ids)
        assert replaced.any()
        assert not torch.isin(masked[replaced], torch.tensor(INFO.special_ids)).any()


def test_mask_tokens_is_deterministic_given_the_generator():
    ids, special = _batch(20, 30)
    a = mask_tokens(ids, special, INFO, torch.Generator().manual_seed(7))
    b = mask_tokens(ids, special, INFO, torch.Generator().manual_seed(7))
    c = mask_tokens(ids, special, INFO, torch.Generator().manual_seed(8))
    assert torch.equal(a[0], b[0]) and torch.equal(a[1], b[1])
    assert not torch.equal(a[1], c[1])


@pytest.fixture(scope="module")
def tokenizer():
    return wordpiece_tokenizer(DUTCH + ENGLISH, vocab_size=150)


def test_fixed_masking_is_identical_across_instances_calls_and_batch_sizes(tokenizer):
    texts = (DUTCH + ENGLISH) * 3
    first = FixedMasking(tokenizer, texts, seed=1234)
    second = FixedMasking(tokenizer, texts, seed=1234)
    assert first.fingerprint == second.fingerprint
    for x, y in zip(first.input_ids + first.labels, second.input_ids + second.labels):
        assert torch.equal(x, y)
    b1, b2 = first.batches(4), first.batches(4)
    for x, y in zip(b1, b2):
        assert all(torch.equal(x[k], y[k]) for k in x)
    # the masks belong to the sentences, not to the batching
    wide = first.batches(100)[0]
    row = 0
    for batch in b1:
        for r in range(batch["input_ids"].shape[0]):
            n = int(batch["attention_mask"][r].sum())
            assert torch.equal(batch["labels"][r, :n], wide["labels"][row, :n])
            assert (wide["labels"][row, n:] == IGNORE_INDEX).all()
            row += 1
    other = FixedMasking(tokenizer, texts, seed=4321)
    assert other.fingerprint != first.fingerprint
    assert first.num_masked == sum(int((b["labels"] != IGNORE_INDEX).sum()) for b in b1)


def test_fixed_masking_rejects_empty_input(tokenizer):
    with pytest.raises(XltError):
        FixedMasking(tokenizer, [], seed=1)


def _hand_loss_sum(model, batch):
    """Logits through encoder + head by hand, cross-entropy as logsumexp - logit[label]."""
    hidden = model.bert(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"]).last_hidden_state
    logits = model.cls(hidden).double()
    sel = batch["labels"] != IGNORE_INDEX
    rows, labels = logits[sel], batch["labels"][sel]
    losses = torch.logsumexp(rows, dim=-1) - rows.gather(1, labels[:, None]).squeeze(1)
    return losses.sum().item(), int(sel.sum())


def test_perplexity_is_exp_of_token_weighted_cross_entropy(tokenizer):
    model = tiny_bert_mlm(len(tokenizer), layers=2)
    model.train()  # perplexity must switch dropout off and restore the mode
    texts = (DUTCH + ENGLISH) * 2
    batches = FixedMasking(tokenizer, texts, seed=5, mlm_probability=0.3).batches(3)
    result = perplexity(model, batches, "cpu")
    assert model.training
    model.eval()
    with torch.no_grad():
        sums, counts = zip(*[_hand_loss_sum(model, b) for b in batches])
    token_mean = sum(sums) / sum(counts)
    batch_mean = sum(s / c for s, c in zip(sums, counts)) / len(sums)
    assert result.tokens == sum(counts)
    assert result.loss == pytest.approx(token_mean, rel=1e-5)
    assert result.perplexity == pytest.approx(math.exp(token_mean), rel=1e-5)
    assert abs(batch_mean - token_mean) > 1e-4  # the set really distinguishes the two averages


@pytest.mark.parametrize("family", ["roberta", "distilbert"])
def test_perplexity_works_for_other_masked_lm_families(family):
    import transformers as tf

    torch.manual_seed(0)
    if family == "roberta":
        model = tf.RobertaForMaskedLM(
            tf.RobertaConfig(
                vocab_size=120,
                hidden_size=32,
                num_hidden_layers=2,
                num_attention_heads=2,
                intermediate_size=64,
                max_position_embeddings=70,
                pad_token_id=1,
            )
        )
        info = TokenizerInfo(mask_token_id=4, pad_token_id=1, vocab_size=120, special_ids=(0, 1, 2, 3, 4))
    else:
        model = tf.DistilBertForMaskedLM(
            tf.DistilBertConfig(
                vocab_size=120, dim=32, n_layers=2, n_heads=2, hidden_dim=64, max_position_embeddings=64, pad_token_id=0
            )
        )
        info = TokenizerInfo(mask_token_id=4, pad_token_id=0, vocab_size=120, special_ids=(0, 1, 2, 3, 4))
    model.eval()
    ids = torch.randint(5, 120, (6, 20), generator=torch.Generator().manual_seed(0))
    special = torch.zeros_like(ids)
    masked, labels = mask_tokens(ids, special, info, torch.Generator().manual_seed(0), mlm_probability=0.3)
    batch = {"input_ids": masked, "attention_mask": torch.ones_like(ids), "labels": labels}
    result = perplexity(model, [batch], "cpu")
    with torch.no_grad():
        logits = model(input_ids=masked, attention_mask=torch.ones_like(ids)).logits.double()
    sel = labels != IGNORE_INDEX
    expected = torch.nn.functional.cross_entropy(logits[sel], labels[sel]).item()
    assert result.loss == pytest.approx(expected, rel=1e-5)
    assert result.perplexity == pytest.approx(math.exp(expected), rel=1e-5)


def test_per_sentence_losses_are_each_sentences_masked_tokens_and_leave_the_set_value_alone(tokenizer):
    """Per sentence: the summed cross-entropy of its own masked tokens (by hand, one sentence at
    a time), in input order whatever the batch size; a sentence with no masked token has 0 and 0;
    the set's perplexity is bit for bit what it is without per-sentence outputs."""
    from xlt.families.adapt.mlm import perplexity_examples

    model = tiny_bert_mlm(len(tokenizer), layers=2)
    model.eval()
    texts = ["een", *DUTCH, *ENGLISH]  # a one-word sentence: at 15 % it is likely masked nowhere
    fixed = FixedMasking(tokenizer, texts, seed=3, mlm_probability=0.15)
    plain = perplexity(model, fixed.batches(4), "cpu")
    result = perplexity(model, fixed.batches(4), "cpu", per_sentence=True)
    assert (result.perplexity, result.loss, result.tokens) == (plain.perplexity, plain.loss, plain.tokens)
    assert plain.sentence_loss == () and len(result.sentence_loss) == len(texts)
    one_by_one = FixedMasking(tokenizer, texts, seed=3, mlm_probability=0.15).batches(1)
    with torch.no_grad():
        by_hand = [_hand_loss_sum(model, b) if (b["labels"] != IGNORE_INDEX).any() else (0.0, 0) for b in one_by_one]
    assert list(result.sentence_tokens) == [n for _, n in by_hand]
    assert list(result.sentence_loss) == pytest.approx([s for s, _ in by_hand], rel=1e-5, abs=1e-6)
    assert 0 in result.sentence_tokens  # the set really has a sentence without masks
    assert sum(result.sentence_loss) / sum(result.sentence_tokens) == pytest.approx(result.loss, rel=1e-6)
    wide = perplexity(model, fixed.batches(len(texts)), "cpu", per_sentence=True)
    assert list(wide.sentence_loss) == pytest.approx(list(result.sentence_loss), rel=1e-5)

    examples = perplexity_examples(result, fixed, lang="nld", split="dev")
    assert examples["kind"] == "perplexity" and examples["mask_seed"] == 3 and examples["lang"] == "nld"
    assert examples["tokens"] == list(result.sentence_tokens) and len(examples["masks"]) == len(texts)
    other = FixedMasking(tokenizer, texts, seed=4, mlm_probability=0.15).sentence_fingerprints()
    assert other != examples["masks"] and examples["masks"] == fixed.sentence_fingerprints()
    with pytest.raises(ValueError, match="per_sentence=True"):
        perplexity_examples(plain, fixed, lang="nld", split="dev")


def test_padding_to_a_multiple_keeps_masks_and_perplexity(tokenizer):
    """CUDA runs pad to a multiple of 8 (xlt.core.padding): the same masks, labels and perplexity."""
    from xlt.families.adapt.mlm_objective import MlmCollate

    model = tiny_bert_mlm(len(tokenizer), layers=2)
    fixed = FixedMasking(tokenizer, DUTCH + ENGLISH, seed=5, mlm_probability=0.3)
    plain, padded = fixed.batches(3), fixed.batches(3, pad_to_multiple_of=8)
    assert any(b["input_ids"].shape[1] % 8 for b in plain)
    for a, b in zip(plain, padded):
        width = a["input_ids"].shape[1]
        assert b["input_ids"].shape[1] == -(-width // 8) * 8
        assert all(torch.equal(a[k], b[k][:, :width]) for k in a)
        assert not b["attention_mask"][:, width:].any() and (b["labels"][:, width:] == IGNORE_INDEX).all()
    assert perplexity(model, padded, "cpu").loss == pytest.approx(perplexity(model, plain, "cpu").loss, rel=1e-5)

    examples = MlmCollate(tokenizer, 64).encode(DUTCH[:3])
    batches = []
    for multiple in (None, 8):
        torch.manual_seed(0)  # the collate draws each batch's mask seed from torch's generator
        batches.append(MlmCollate(tokenizer, 64, 0.3, multiple)(examples))
    a, b = batches
    width = a["input_ids"].shape[1]
    assert b["input_ids"].shape[1] == -(-width // 8) * 8 > width
    assert all(torch.equal(a[k], b[k][:, :width]) for k in a)
    assert (b["labels"][:, width:] == IGNORE_INDEX).all() and (a["labels"] != IGNORE_INDEX).any()
