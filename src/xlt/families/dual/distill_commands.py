"""The `mse_distill` objective of `xlt train-dual`: teacher vectors once, then the distillation
(xlt.families.dual.distill), and what the run's metadata records about both."""

from __future__ import annotations

from pathlib import Path

from xlt.core.models import pick_device
from xlt.core.sentence_encoder import PROJECTION_FILE, read_pooling
from xlt.families.dual.distill import (
    LOSS_NAME,
    TEACHER_FILE,
    select_pairs,
    teacher_sentences,
    teacher_vectors,
    train_distill,
)
from xlt.families.dual.dual_encoder import pairs_from_bitexts


def teacher_settings(args) -> tuple[str, int]:
    """The teacher's pooling and layer: the flags, else what its directory recorded, else mean / last."""
    saved = read_pooling(args.teacher)
    pooling = args.teacher_pooling or saved.get("pooling", "mean")
    layer = args.teacher_layer if args.teacher_layer is not None else saved.get("layer", -1)
    return pooling, layer


def train_distilled(
    args, student, tokenizer, train_bitexts, dev_bitexts, targs, losses, checkpoint_dir, identity: dict, out: Path
):
    """Train `student` in place by distillation; returns the training result and the loss's metadata
    (teacher, its vectors' file, the projection when the widths differ)."""

    pooling, layer = teacher_settings(args)
    train_bitexts = select_pairs(train_bitexts, args.max_sentences_per_language, args.max_sentence_chars)
    sentences = teacher_sentences(pairs_from_bitexts(train_bitexts))
    vectors, stored = teacher_vectors(
        args.teacher,
        pooling,
        layer,
        sentences,
        targs.max_length,
        targs.batch_size,
        pick_device(targs.device),
        out / TEACHER_FILE,
    )
    model, result = train_distill(
        student,
        tokenizer,
        train_bitexts,
        dev_bitexts,
        vectors,
        sentences,
        targs,
        args.match,
        losses,
        checkpoint_dir,
        identity,
        examples=args.distill_examples,
    )
    projection = None
    if model.projection is not None:  # saved with the student (model/), which every evaluation loads
        projection = {
            "from": student.hidden_size,
            "to": int(vectors.shape[1]),
            "file": f"model/{PROJECTION_FILE}",
            "trained": True,
        }
    return result, {
        "name": LOSS_NAME,
        "teacher": args.teacher,
        "teacher_pooling": pooling,
        "teacher_layer": layer,
        "teacher_dim": int(vectors.shape[1]),
        "student_dim": student.hidden_size,
        "teacher_vectors": {**stored, "dtype": str(vectors.dtype)},
        "projection": projection,
        "normalize": False,
        "examples": args.distill_examples,
        "train_pairs_used": {b.lang: len(b.texts) for b in train_bitexts},
        "max_sentences_per_language": args.max_sentences_per_language,
        "max_sentence_chars": args.max_sentence_chars,
    }
