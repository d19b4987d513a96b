"""Multilingual knowledge distillation into the dual family's encoder (objective `mse_distill`).

Reimers & Gurevych (2020): a fixed teacher (an English sentence encoder, e.g. the sbert family's
NLI-trained model) embeds the English side of every translation pair; the student (the dual
family's encoder) is trained with xlt.losses.mse_distillation so that its vectors of both the
English sentence and its translation land on the teacher's vector of the English sentence.

The teacher runs once per distinct English sentence (multi-way bitext repeats an English
sentence in every language), before training; its vectors are stored in float16 in the run
directory (`TEACHER_FILE`, keyed by the teacher's files, pooling, layer, max length and the
sentences) and read back, never recomputed per epoch or on a resumed run. A student of another
width than the teacher's trains a linear projection with it: the projection is part of the
student (`SentenceEncoder.projection`, saved in its model directory), so dev selection and every
evaluation score the projected vectors the loss trained, as sentence-transformers' Dense module.

Dev selection is the family's: retrieval accuracy on the dev bitext (dual_encoder.make_evaluate).
"""
from __future__ import annotations

import logging
from pathlib import Path
from typing import Sequence

import numpy as np
import torch
from torch import nn

from xlt.core.checkpoint import identity_key, model_inputs, run_identity, with_settings
from xlt.core.embeddings import encode
from xlt.core.sentence_encoder import SentenceEncoder, project, tokenize
from xlt.core.training import TrainArgs, TrainResult, train
from xlt.data.bitext_files import Bitext
from xlt.families.dual.dual_encoder import make_evaluate, pairs_from_bitexts
from xlt.losses.mse_distillation import MSEDistillationLoss

log = logging.getLogger(__name__)

TEACHER_FILE = "teacher_vectors.npz"
LOSS_NAME = "mse_distillation"


def teacher_sentences(pairs: Sequence[tuple[str, str]]) -> list[str]:
    """The distinct English sentences of (text, english) pairs, in first-seen order."""
    return list(dict.fromkeys(english for _, english in pairs))


def teacher_key(teacher: str, pooling: str, layer: int, max_length: int, sentences: Sequence[str]) -> str:
    """What the stored vectors depend on: the teacher's files (a retrained teacher under the same
    path is another teacher), its pooling and layer, the max length and the sentences."""
    identity = run_identity({"teacher": teacher, "pooling": pooling, "layer": layer, "max_length": max_length,
                             "sentences": list(sentences)}, model_inputs(teacher))
    return identity_key(identity)


def teacher_vectors(teacher: str, pooling: str, layer: int, sentences: Sequence[str], max_length: int,
                    batch_size: int, device, cache: Path) -> tuple[np.ndarray, dict]:
    """(n, dim) float16 teacher vectors of `sentences`: read from `cache` when it holds these
    (same key), else computed once (eval mode, no gradients) and written there. Returns the
    vectors and what the run's metadata records about them."""
    key = teacher_key(teacher, pooling, layer, max_length, sentences)
    if cache.is_file():
        stored = np.load(cache, allow_pickle=False)
        if str(stored["key"]) == key:
            log.info("teacher vectors of %d sentences read from %s", len(sentences), cache)
            return stored["vectors"], {"computed": False, "sentences": len(sentences), "file": cache.name}
        log.info("%s holds another teacher's or other sentences' vectors: recomputing", cache)
    encoder = SentenceEncoder.from_pretrained(teacher, pooling=pooling, layer=layer)
    from xlt.core.models import load_tokenizer

    tokenizer = load_tokenizer(teacher)
    with torch.no_grad():
        vectors = project(encode(encoder.encoder.to(device), tokenizer, list(sentences), pooling=pooling, layer=layer,
                                 batch_size=batch_size, max_length=max_length, device=device),
                          encoder.projection).astype(np.float16)
    cache.parent.mkdir(parents=True, exist_ok=True)
    partial = cache.with_name(cache.name + ".partial.npz")
    np.savez(partial, vectors=vectors, key=np.array(key))
    partial.replace(cache)
    log.info("teacher vectors of %d distinct sentences computed once and stored in %s", len(sentences), cache)
    return vectors, {"computed": True, "sentences": len(sentences), "file": cache.name}


class DistillStudent(nn.Module):
    """The student encoder; for a teacher of another width its sentence vectors go through a linear
    projection trained with it, which the student keeps (and saves) as its own."""

    def __init__(self, student: SentenceEncoder, teacher_dim: int):
        super().__init__()
        if student.dim != teacher_dim:
            student.projection = nn.Linear(student.hidden_size, teacher_dim)
        self.student = student
        self.loss = MSEDistillationLoss()  # the student's vectors are already the teacher's width

    @property
    def projection(self) -> nn.Module | None:
        return self.student.projection

    def forward(self, input_ids, attention_mask, token_type_ids=None) -> torch.Tensor:
        """The student's sentence vectors: the loss calls the module itself, so that with
        `compile` (xlt.core.training.compiled_loss) the compiled module runs the encoder."""
        return self.student(input_ids, attention_mask, token_type_ids)


def make_collate(tokenizer, max_length: int, vectors: np.ndarray):
    """(text, english, teacher row) examples -> rows [0, B) English, [B, 2B) the translations, and
    the teacher's stored vectors of the English side."""

    def collate(chunk: list[tuple[str, str, int]]) -> dict:
        texts = [english for _, english, _ in chunk] + [text for text, _, _ in chunk]
        rows = [row for _, _, row in chunk]
        return {**tokenize(tokenizer, texts, max_length), "pairs": len(chunk),
                "teacher": torch.from_numpy(vectors[rows])}

    return collate


def make_loss(losses: list[float] | None = None):
    def loss_fn(model: DistillStudent, batch: dict) -> torch.Tensor:
        n = batch["pairs"]
        embeddings = model(**{k: v for k, v in batch.items() if k not in ("pairs", "teacher")}).float()
        loss = model.loss(embeddings[:n], embeddings[n:], batch["teacher"].to(embeddings.device).float())
        if losses is not None:
            losses.append(loss.item())
        return loss

    return loss_fn


class DistillExamples(list):
    """(text, english, teacher row) examples. Their `lengths()` (whitespace words of both sides)
    let length_bucketing sort them (xlt.core.bucketing): each example's loss is its own (MSE onto
    its teacher vector, no in-batch negatives), so batches of similar length change the order of
    the pairs and the padding, not what any pair contributes."""

    def lengths(self) -> list[int]:
        return [len(text.split()) + len(english.split()) for text, english, _ in self]


def distill_examples(pairs: Sequence[tuple[str, str]], sentences: Sequence[str]) -> DistillExamples:
    """Each (text, english) pair with the row of its English sentence's teacher vector."""
    row = {sentence: i for i, sentence in enumerate(sentences)}
    return DistillExamples((text, english, row[english]) for text, english in pairs)


def train_distill(student: SentenceEncoder, tokenizer, train_bitexts: Sequence[Bitext],
                  dev_bitexts: Sequence[Bitext], vectors: np.ndarray, sentences: Sequence[str], args: TrainArgs,
                  match: str, losses: list[float] | None = None, checkpoint_dir: str | Path | None = None,
                  identity: dict | None = None) -> tuple[DistillStudent, TrainResult]:
    """Train `student` in place on the stored teacher vectors; the best dev checkpoint is restored."""
    model = DistillStudent(student, vectors.shape[1])
    evaluate = make_evaluate(tokenizer, dev_bitexts, args.max_length, match)
    identity = with_settings(identity, dual_loss={"name": LOSS_NAME, "teacher_dim": int(vectors.shape[1])})
    result = train(model, distill_examples(pairs_from_bitexts(train_bitexts), sentences),
                   make_collate(tokenizer, args.max_length, vectors), make_loss(losses), args,
                   evaluate=lambda m: evaluate(m.student), checkpoint_dir=checkpoint_dir, identity=identity)
    return model, result
