"""Stand-in models for the rehearsal: tiny random-init models of the real model's architecture
class and layer count, saved in the Hugging Face hub cache layout under the real hub id (and
revision), so `from_pretrained(hub_id)` finds them with HF_HUB_OFFLINE=1."""

from __future__ import annotations

import hashlib
import re
import tempfile
from pathlib import Path

from xlt.core.errors import XltError
from xlt.rehearse.text import vocabulary

HIDDEN = 32
HEADS = 2
MAX_POSITIONS = 520  # room for the longest max_length a family uses (256) plus RoBERTa's offset
SPECIAL = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
ROBERTA_SPECIAL = ["<s>", "<pad>", "</s>", "<unk>", "<mask>"]


def architecture(hub_id: str) -> str:
    """The model_type a hub id names, among those the seed studies use (BERT and RoBERTa)."""
    name = hub_id.lower()
    if "roberta" in name and "xlm" not in name:
        return "roberta"
    if "bert" in name and not any(other in name for other in ("roberta", "distilbert", "albert")):
        return "bert"
    raise XltError(
        f"rehearsal: no stand-in for {hub_id!r}: the rehearsal builds BERT and RoBERTa models "
        f"(the seed studies' architectures), named by their hub id"
    )


def snapshot_dir(hub_cache: Path, hub_id: str, revision: str | None) -> Path:
    """Where huggingface_hub looks for `hub_id` at `revision`; refs/<revision> names the snapshot."""
    repo = hub_cache / ("models--" + hub_id.replace("/", "--"))
    revision = revision or "main"
    commit = (
        revision
        if re.fullmatch(r"[0-9a-f]{40}", revision)
        else hashlib.sha1(f"rehearsal:{hub_id}:{revision}".encode()).hexdigest()
    )
    (repo / "refs").mkdir(parents=True, exist_ok=True)
    if commit != revision:
        (repo / "refs" / revision).write_text(commit)
    return repo / "snapshots" / commit


def _tokenizer(kind: str, languages: list[str]):
    """A tokenizer over every stand-in language's words with the real family's special tokens and
    class: BERT's word-level (one token a word), RoBERTa's a byte-level BPE trained on the words."""
    words = sorted({word for lang in languages for word in vocabulary(lang)})
    if kind == "roberta":
        # RoBERTa's tokenizer class rebuilds a byte-level BPE from vocab and merges, so one is trained
        from tokenizers import ByteLevelBPETokenizer
        from transformers import RobertaTokenizerFast  # deferred: imports torch

        bpe = ByteLevelBPETokenizer()
        bpe.train_from_iterator(
            [" " + word for word in words],
            vocab_size=len(ROBERTA_SPECIAL) + 256 + 2 * len(words),
            special_tokens=ROBERTA_SPECIAL,
            show_progress=False,
        )
        with tempfile.TemporaryDirectory() as tmp:
            vocab_file, merges_file = bpe.save_model(tmp)
            return RobertaTokenizerFast(vocab_file, merges_file, model_max_length=512)
    from tokenizers import Tokenizer, models, pre_tokenizers, processors  # deferred: with transformers
    from transformers import BertTokenizerFast  # deferred: imports torch

    vocab = {token: i for i, token in enumerate(SPECIAL + words)}
    backend = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    backend.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    backend.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]",
        pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", vocab["[CLS]"]), ("[SEP]", vocab["[SEP]"])],
    )
    return BertTokenizerFast(
        tokenizer_object=backend,
        unk_token="[UNK]",
        sep_token="[SEP]",
        pad_token="[PAD]",
        cls_token="[CLS]",
        mask_token="[MASK]",
        do_lower_case=False,
        model_max_length=512,
    )


def _config(kind: str, layers: int, vocab_size: int):
    from transformers import BertConfig, RobertaConfig  # deferred: imports torch

    shape = dict(
        vocab_size=vocab_size,
        hidden_size=HIDDEN,
        num_hidden_layers=layers,
        num_attention_heads=HEADS,
        intermediate_size=2 * HIDDEN,
        max_position_embeddings=MAX_POSITIONS,
    )
    if kind == "bert":
        return BertConfig(**shape)
    return RobertaConfig(pad_token_id=1, bos_token_id=0, eos_token_id=2, **shape)


def write_model(
    hub_cache: Path, hub_id: str, revision: str | None, layers: int, languages: list[str], seed: int = 0
) -> Path:
    """A random-init masked-LM stand-in for `hub_id` (its architecture, `layers` layers) in the hub cache."""
    import torch  # deferred: imports torch
    from transformers import AutoModelForMaskedLM  # deferred: imports torch

    kind = architecture(hub_id)
    tokenizer = _tokenizer(kind, languages)
    torch.manual_seed(seed)
    model = AutoModelForMaskedLM.from_config(_config(kind, layers, len(tokenizer)))
    out = snapshot_dir(hub_cache, hub_id, revision)
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    return out
