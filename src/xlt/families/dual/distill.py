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

Two ways to make examples (`--distill-examples`): `pairs` (an example is a translation pair, a
batch of B pairs is 2B sentences, both sides' MSE summed) or `sentences`, as the authors' script
(sentence-transformers' ParallelSentencesDataset, used by examples/training/multilingual/
make_multilingual.py): per language, every distinct sentence of a group that shares an English
sentence (the English one and each translation) is one example labelled with the teacher's vector
of that English sentence, so a batch of B is B sentences and an epoch is every language's sentences.
`select_pairs` applies the script's per-language filters (characters, sentences per language).

Dev selection is the family's: retrieval accuracy on the dev bitext (dual_encoder.make_evaluate).
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Callable, Sequence

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from xlt.core.checkpoint import identity_key, model_inputs, run_identity, with_settings
from xlt.core.errors import XltError
from xlt.core.models import load_tokenizer
from xlt.core.padding import pad_multiple
from xlt.core.sentence_encoder import SentenceEncoder, tokenize
from xlt.core.train_args import TrainArgs
from xlt.core.train_inputs import DevSelection, Objective, Resumable
from xlt.core.training import TrainResult, train
from xlt.data.bitext_files import Bitext
from xlt.families.dual.dual_encoder import make_evaluate, pairs_from_bitexts, sentence_vectors
from xlt.losses.mse_distillation import MSEDistillationLoss

log = logging.getLogger(__name__)

TEACHER_FILE = "teacher_vectors.npz"
LOSS_NAME = "mse_distillation"
EXAMPLE_KINDS = ("pairs", "sentences")  # --distill-examples


def sentences_per_example(kind: str) -> int:
    """Sentences the student embeds for one example: a pair's two, or one."""
    return 2 if kind == "pairs" else 1


def select_pairs(bitexts: Sequence[Bitext], max_per_language: int = 0, max_chars: int = 0) -> list[Bitext]:
    """Each language's pairs as make_multilingual.py loads them (ParallelSentencesDataset.load_data):
    a pair with a side longer than `max_chars` characters is skipped, and the first
    `max_per_language` pairs kept are used (0: no limit)."""
    selected = []
    for bitext in bitexts:
        kept = [
            (text, english)
            for text, english in zip(bitext.texts, bitext.english)
            if not max_chars or max(len(text), len(english)) <= max_chars
        ]
        kept = kept[:max_per_language] if max_per_language else kept
        if len(kept) < 2:
            raise XltError(
                f"bitext {bitext.lang}: {len(kept)} pair(s) left of {len(bitext.texts)} after the "
                f"distillation's filters (max_sentence_chars {max_chars}, max_sentences_per_language "
                f"{max_per_language}); raise or drop them (0: no limit) in dual.distill"
            )
        selected.append(Bitext(bitext.lang, [t for t, _ in kept], [e for _, e in kept]))
    return selected


def teacher_sentences(pairs: Sequence[tuple[str, str]]) -> list[str]:
    """The distinct English sentences of (text, english) pairs, in first-seen order."""
    return list(dict.fromkeys(english for _, english in pairs))


def teacher_key(teacher: str, pooling: str, layer: int, max_length: int, sentences: Sequence[str]) -> str:
    """What the stored vectors depend on: the teacher's files (a retrained teacher under the same
    path is another teacher), its pooling and layer, the max length and the sentences."""
    identity = run_identity(
        {
            "teacher": teacher,
            "pooling": pooling,
            "layer": layer,
            "max_length": max_length,
            "sentences": list(sentences),
        },
        model_inputs(teacher),
    )
    return identity_key(identity)


def teacher_vectors(
    teacher: str,
    pooling: str,
    layer: int,
    sentences: Sequence[str],
    max_length: int,
    batch_size: int,
    device,
    cache: Path,
) -> tuple[np.ndarray, dict]:
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
    encoder.encoder.to(device)  # the transformer only: sentence_vectors encodes there and projects on the CPU
    tokenizer = load_tokenizer(teacher)
    vectors = sentence_vectors(encoder, tokenizer, sentences, max_length, batch_size).astype(np.float16)
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


def make_collate(tokenizer, max_length: int, vectors: np.ndarray, pad_to_multiple_of: int | None = None):
    """(text, english, teacher row) examples -> rows [0, B) English, [B, 2B) the translations, and
    the teacher's stored vectors of the English side."""

    def collate(chunk: list[tuple[str, str, int]]) -> dict:
        texts = [english for _, english, _ in chunk] + [text for text, _, _ in chunk]
        rows = [row for _, _, row in chunk]
        return {
            **tokenize(tokenizer, texts, max_length, pad_to_multiple_of),
            "pairs": len(chunk),
            "teacher": torch.from_numpy(vectors[rows]),
        }

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


def token_counter(tokenizer, max_length: int, chunk: int = 10_000) -> Callable[[Sequence[str]], list[int]]:
    """Texts -> each one's tokens as the collate cuts it (special tokens included, at most `max_length`):
    the length length_bucketing sorts by. Whitespace words would not do: a Chinese or Japanese
    sentence is about one "word", so its batches would gather the CJK sentences, and pad them."""

    def count(texts: Sequence[str]) -> list[int]:
        counts = []
        for start in range(0, len(texts), chunk):
            encoded = tokenizer(list(texts[start : start + chunk]), truncation=True, max_length=max_length)
            counts += [len(ids) for ids in encoded["input_ids"]]
        return counts

    return count


class DistillExamples(list):
    """(text, english, teacher row) examples. Their `lengths()` (the longer side's tokens, `count`:
    token_counter; a batch pads both sides to its longest sentence) let length_bucketing sort them
    (xlt.core.bucketing): each example's loss is its own (MSE onto its teacher vector, no in-batch
    negatives), so batches of similar length change which pairs share a step and the padding, not
    what any pair contributes."""

    def __init__(self, examples, count: Callable[[Sequence[str]], list[int]]):
        super().__init__(examples)
        self.count = count

    def lengths(self) -> list[int]:
        texts, english = self.count([t for t, _, _ in self]), self.count([e for _, e, _ in self])
        return [max(a, b) for a, b in zip(texts, english)]


def distill_examples(
    pairs: Sequence[tuple[str, str]], sentences: Sequence[str], count: Callable[[Sequence[str]], list[int]]
) -> DistillExamples:
    """Each (text, english) pair with the row of its English sentence's teacher vector."""
    row = {sentence: i for i, sentence in enumerate(sentences)}
    return DistillExamples(((text, english, row[english]) for text, english in pairs), count)


class DistillSentences(list):
    """(sentence, teacher row) examples; `lengths()` in tokens (`count`: token_counter) for length_bucketing."""

    def __init__(self, examples=(), count: Callable[[Sequence[str]], list[int]] | None = None):
        super().__init__(examples)
        self.count = count

    def lengths(self) -> list[int]:
        return self.count([text for text, _ in self])


def sentence_examples(
    bitexts: Sequence[Bitext], sentences: Sequence[str], count: Callable[[Sequence[str]], list[int]]
) -> DistillSentences:
    """The examples of ParallelSentencesDataset.add_dataset: per language, each English sentence
    with the set of itself and its translations; every sentence of the set is one example labelled
    with the English sentence's teacher row (a translation equal to its English sentence counts once)."""
    row = {sentence: i for i, sentence in enumerate(sentences)}
    examples = DistillSentences(count=count)
    for bitext in bitexts:
        groups: dict[str, dict[str, None]] = {}
        for text, english in zip(bitext.texts, bitext.english):
            groups.setdefault(english, {english: None})[text] = None
        examples.extend((sentence, row[english]) for english, group in groups.items() for sentence in group)
    return examples


def make_sentence_collate(tokenizer, max_length: int, vectors: np.ndarray, pad_to_multiple_of: int | None = None):
    """(sentence, teacher row) examples -> the sentences' tokens and their teacher vectors."""

    def collate(chunk: list[tuple[str, int]]) -> dict:
        return {
            **tokenize(tokenizer, [text for text, _ in chunk], max_length, pad_to_multiple_of),
            "teacher": torch.from_numpy(vectors[[row for _, row in chunk]]),
        }

    return collate


def make_sentence_loss(losses: list[float] | None = None):
    """MSE of each sentence's student vector onto its teacher vector (the student's own projection,
    when the widths differ, is part of its forward)."""

    def loss_fn(model: DistillStudent, batch: dict) -> torch.Tensor:
        embeddings = model(**{k: v for k, v in batch.items() if k != "teacher"}).float()
        loss = F.mse_loss(embeddings, batch["teacher"].to(embeddings.device).float())
        if losses is not None:
            losses.append(loss.item())
        return loss

    return loss_fn


def train_distill(
    student: SentenceEncoder,
    tokenizer,
    train_bitexts: Sequence[Bitext],
    dev_bitexts: Sequence[Bitext],
    vectors: np.ndarray,
    sentences: Sequence[str],
    args: TrainArgs,
    match: str,
    losses: list[float] | None = None,
    checkpoint_dir: str | Path | None = None,
    identity: dict | None = None,
    examples: str = "pairs",
) -> tuple[DistillStudent, TrainResult]:
    """Train `student` in place on the stored teacher vectors; the best dev checkpoint is restored.
    `examples`: pairs or sentences (EXAMPLE_KINDS)."""
    if examples not in EXAMPLE_KINDS:
        raise XltError(f"distillation examples {examples!r}: choose one of {', '.join(EXAMPLE_KINDS)}")
    model = DistillStudent(student, vectors.shape[1])
    evaluate = make_evaluate(tokenizer, dev_bitexts, args.max_length, match)
    identity = with_settings(
        identity,
        dual_loss={
            "name": LOSS_NAME,
            "teacher_dim": int(vectors.shape[1]),
            **({"examples": examples} if examples != "pairs" else {}),
        },
    )
    if examples == "sentences":
        data, collate = (
            sentence_examples(train_bitexts, sentences, token_counter(tokenizer, args.max_length)),
            make_sentence_collate(tokenizer, args.max_length, vectors, pad_multiple(args.device)),
        )
        loss_fn = make_sentence_loss(losses)
    else:
        data, collate = (
            distill_examples(pairs_from_bitexts(train_bitexts), sentences, token_counter(tokenizer, args.max_length)),
            make_collate(tokenizer, args.max_length, vectors, pad_multiple(args.device)),
        )
        loss_fn = make_loss(losses)
    result = train(
        model,
        Objective(data, collate, loss_fn),
        args,
        dev=DevSelection(lambda m: evaluate(m.student)),
        checkpoint=Resumable(checkpoint_dir, identity),
    )
    return model, result
