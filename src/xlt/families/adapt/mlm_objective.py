"""What adapt trains on: sentences masked afresh in every batch, BERT-style (`MlmCollate`), and
the cross-entropy over their masked tokens (`mlm_loss`). The fixed masks of the evaluation sets
are xlt.families.adapt.mlm's; the training loop is xlt.core.training's."""

from __future__ import annotations

from typing import Sequence

import torch
import torch.nn.functional as F

from xlt.core.padding import padded_width
from xlt.families.adapt.masked_head import IGNORE_INDEX, masked_logits
from xlt.families.adapt.mlm import TokenizerInfo, mask_tokens


class MlmCollate:
    """Pads pre-tokenised sentences and masks them BERT-style (15%, 80/10/10).

    Each batch's masks come from a generator seeded by a draw from torch's global generator:
    the training loop seeds that (seed_everything) and a resumed checkpoint restores it, so a
    run's training masks depend only on its seed and are the same after a resume."""

    def __init__(
        self, tokenizer, max_length: int, mlm_probability: float = 0.15, pad_to_multiple_of: int | None = None
    ):
        self.tokenizer = tokenizer
        self.info = TokenizerInfo.from_tokenizer(tokenizer)
        self.max_length = max_length
        self.mlm_probability = mlm_probability
        self.pad_to_multiple_of = pad_to_multiple_of

    def encode(self, texts: Sequence[str]) -> list[tuple[list[int], list[int]]]:
        """(input_ids, special_tokens_mask) per sentence, truncated, unpadded."""
        enc = self.tokenizer(
            list(texts),
            truncation=True,
            max_length=self.max_length,
            padding=False,
            return_special_tokens_mask=True,
            return_attention_mask=False,
            return_token_type_ids=False,
        )
        return list(zip(enc["input_ids"], enc["special_tokens_mask"]))

    def __call__(self, examples: Sequence[tuple[list[int], list[int]]]) -> dict[str, torch.Tensor]:
        pad = self.info.pad_token_id if self.info.pad_token_id is not None else 0
        width = max(len(ids) for ids, _ in examples)
        input_ids = torch.full((len(examples), width), pad, dtype=torch.long)
        special = torch.ones((len(examples), width), dtype=torch.long)  # padding is never masked
        attention = torch.zeros((len(examples), width), dtype=torch.long)
        for row, (ids, specials) in enumerate(examples):
            input_ids[row, : len(ids)] = torch.tensor(ids)
            special[row, : len(ids)] = torch.tensor(specials)
            attention[row, : len(ids)] = 1
        generator = torch.Generator().manual_seed(int(torch.randint(0, 2**62, (1,)).item()))
        masked, labels = mask_tokens(input_ids, special, self.info, generator, self.mlm_probability)
        # padded up to the multiple after masking: the masks drawn do not depend on the device
        extra = padded_width(width, self.pad_to_multiple_of) - width
        return {
            "input_ids": F.pad(masked, (0, extra), value=pad),
            "attention_mask": F.pad(attention, (0, extra), value=0),
            "labels": F.pad(labels, (0, extra), value=IGNORE_INDEX),
        }


def mlm_loss(model, batch: dict[str, torch.Tensor]) -> torch.Tensor:
    """Mean cross-entropy over the batch's masked tokens; 0 (with a graph) when none is masked,
    where the mean that transformers computes would be nan. The vocabulary head runs on the
    masked positions only (`masked_logits`): the same loss and gradients as the full logits."""
    logits, targets = masked_logits(model, batch["input_ids"], batch["attention_mask"], batch["labels"])
    loss_sum = F.cross_entropy(logits.float(), targets, reduction="sum")
    return loss_sum / max(1, targets.numel())
