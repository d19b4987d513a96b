"""Target-language MLM adaptation (seed 003): train a multilingual masked LM on a target-language
corpus with a layer scheme, and look at it every K steps without saving a checkpoint.

At step 0 and every K optimiser steps (the training loop's `evaluate` hook) a run records

- masked-LM perplexity on fixed-masked evaluation sets (the held-out target-language set and
  the size-matched multilingual set): the masks are drawn once (`FixedMasking`, one mask seed),
  so values compare across steps, schemes, seeds and the reference models;
- per-layer mean Euclidean distance and linear CKA between the model and a native
  target-language model on a fixed set of sentences, at sentence level (mean-pooled) and word
  level (first sub-word). The native model never changes, so its vectors are computed once.

After training (with the checkpoint of the best target perplexity restored, the seed's early
stopping, or the last one) the selected model is evaluated once more on every set, the test
set included: those records carry no `step`, and their per-sentence losses and masked-token
counts are kept (the examples file beside the metrics), so they get bootstrap intervals. With
`word_level` settings the final evaluation also scores NLL per word and per character on a subset
(xlt.families.adapt.word_nll): perplexity per piece does not compare across tokenizers, these do.
The per-step curves keep no per-sentence outputs (sentences x checkpoints would be large):
each checkpoint's bounds are computed from them on the spot (`RepeatedSetIntervals`, the
draws `xlt aggregate` uses for the set) and written on its perplexity and mlm_loss records.
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

import numpy as np
import torch

from xlt.analysis.intervals import RepeatedSetIntervals
from xlt.core.embeddings import encode_layers
from xlt.core.errors import XltError
from xlt.core.metrics import record
from xlt.core.models import encoder_parts, pick_device
from xlt.core.monitor import PROBES
from xlt.core.padding import pad_multiple
from xlt.core.train_args import TrainArgs
from xlt.core.train_inputs import DevSelection, LayerSchedule, Objective, Resumable
from xlt.core.training import TrainResult, train
from xlt.families.adapt.choices import ADAPT_SELECT
from xlt.families.adapt.layer_schemes import apply_scheme, schedulable_parameters
from xlt.families.adapt.mlm import FixedMasking, perplexity, perplexity_examples, read_text_langs, read_texts
from xlt.families.adapt.mlm_objective import MlmCollate, mlm_loss
from xlt.families.adapt.schemes import Scheme
from xlt.families.adapt.similarity import (
    LEVELS,
    MEASURES,
    check_comparison,
    encode_words,
    hidden_size,
    linear_cka,
    mean_euclidean_distance,
    paired_word_vectors,
)
from xlt.families.adapt.word_nll import spread_subset, word_nll, word_nll_records

log = logging.getLogger("xlt.families.adapt.adaptation")

SELECT = ADAPT_SELECT


def file_dims(path: str | Path) -> dict[str, str]:
    """Record dimensions of an evaluation file, as `xlt perplexity` names them:
    lang = its directory's name, split = its stem (eval/nl/dev.jsonl -> nl, dev)."""
    path = Path(path)
    return {"lang": path.resolve().parent.name, "split": path.stem}


@dataclass
class EvalSet:
    """A fixed-masked evaluation set and the dimensions its records carry."""

    lang: str
    split: str
    masked: FixedMasking
    # the word-level NLL needs the sentences and the tokenizer, not the masks (word_nll)
    texts: list[str] = field(default_factory=list)
    tokenizer: object = None
    max_length: int = 128
    langs: list[str] | None = None  # each text's language (a pooled set's differ): the [UNK] share per language

    @classmethod
    def from_file(cls, path, tokenizer, mask_seed: int, mlm_probability: float, max_length: int) -> "EvalSet":
        dims = file_dims(path)
        texts = read_texts(path)
        masked = FixedMasking(tokenizer, texts, seed=mask_seed, mlm_probability=mlm_probability, max_length=max_length)
        return cls(
            dims["lang"], dims["split"], masked, texts, tokenizer, max_length, read_text_langs(path, dims["lang"])
        )

    @property
    def dims(self) -> dict[str, str]:
        return {"lang": self.lang, "split": self.split}

    def describe(self) -> dict:
        return {
            "sentences": len(self.masked),
            "masked_tokens": self.masked.num_masked,
            "mask_fingerprint": self.masked.fingerprint,
        }


@dataclass(frozen=True)
class WordNllSettings:
    """How many sentences per set (spread over it) and words per sentence the word-level NLL scores."""

    sentences: int
    max_words: int = 40
    max_unk_share: float = 0.01  # the schema's default of adapt.word_nll.max_unk_share


def evaluate_sets(
    model,
    sets: Sequence[EvalSet],
    batch_size: int,
    device,
    step: int | None = None,
    examples_out: list | None = None,
    intervals: RepeatedSetIntervals | None = None,
    word_level: WordNllSettings | None = None,
) -> list[dict]:
    """perplexity and mlm_loss records of every set (with `step` when given). With
    `examples_out` (a MetricsFile's `examples`), each set's per-sentence losses, masked tokens
    and mask hashes go there too (`perplexity_examples`); with `intervals`, the records carry
    ci_low / ci_high from them instead, and the per-sentence outputs are not kept. With
    `word_level`, nll_per_word / nll_per_char / pll_words records follow (word_nll)."""
    records = []
    for eval_set in sets:
        result = perplexity(
            model,
            eval_set.masked.batches(batch_size, pad_multiple(device)),
            device,
            per_sentence=examples_out is not None or intervals is not None,
        )
        dims = {**eval_set.dims, "step": step}
        for metric, value in (("perplexity", result.perplexity), ("mlm_loss", result.loss)):
            records.append(record(metric, value, **dims))
            if intervals is not None:
                low, high = intervals.interval(
                    (eval_set.lang, eval_set.split), metric, result.sentence_loss, result.sentence_tokens
                )
                records[-1].update(ci_low=low, ci_high=high)
        if examples_out is not None:
            examples_out.append(perplexity_examples(result, eval_set.masked, **dims))
        if word_level is not None and word_level.sentences > 0:
            langs = spread_subset(eval_set.langs, word_level.sentences) if eval_set.langs else None
            scored = word_nll(
                model,
                eval_set.tokenizer,
                spread_subset(eval_set.texts, word_level.sentences),
                word_level.max_words,
                eval_set.max_length,
                batch_size,
                device,
                langs,
            )
            records += word_nll_records(scored, word_level.max_unk_share, **dims)
    return records


class NativeComparison:
    """Per-layer distance between a changing model and a fixed reference (native) model.

    The reference's sentence vectors (mean-pooled per hidden state) and first-sub-word vectors
    are computed once at construction; `records(step)` encodes only the current model. Layers
    are hidden-state indices (0 = embeddings). Euclidean distance needs equal hidden sizes and
    is skipped otherwise (CKA only), as in `compare_models`.
    """

    def __init__(
        self,
        model,
        tokenizer,
        reference,
        reference_tokenizer,
        sentences: Sequence[str],
        layers: Sequence[int] | None = None,
        levels: Sequence[str] = LEVELS,
        batch_size: int = 32,
        max_length: int = 128,
        device=None,
    ):

        self.model, self.tokenizer = model, tokenizer
        max_layer = min(encoder_parts(model).num_layers, encoder_parts(reference).num_layers)
        self.layers = list(layers) if layers is not None else list(range(max_layer + 1))
        self.levels = list(levels)
        equal = hidden_size(model) == hidden_size(reference)
        self.measures = list(MEASURES) if equal else ["cka"]
        if not equal:
            log.warning(
                "hidden sizes differ (%d vs %d): Euclidean distance skipped, CKA only",
                hidden_size(model),
                hidden_size(reference),
            )
        check_comparison(model, reference, self.layers, self.levels, self.measures)
        self.sentences = list(sentences)
        if len(self.sentences) < 2:
            raise XltError(f"layer comparison needs at least 2 sentences, got {len(self.sentences)}")
        self.kwargs = dict(batch_size=batch_size, max_length=max_length, device=device)
        self.reference_sentence = (
            encode_layers(reference, reference_tokenizer, self.sentences, self.layers, pooling="mean", **self.kwargs)
            if "sentence" in self.levels
            else None
        )
        self.reference_words = (
            encode_words(reference, reference_tokenizer, self.sentences, self.layers, **self.kwargs)
            if "word" in self.levels
            else None
        )
        self.vectors: dict[str, int] = {}

    def records(self, step: int) -> list[dict]:
        paired: dict[str, dict[int, tuple[np.ndarray, np.ndarray]]] = {}
        if self.reference_sentence is not None:
            mine = encode_layers(self.model, self.tokenizer, self.sentences, self.layers, pooling="mean", **self.kwargs)
            paired["sentence"] = {layer: (mine[layer], self.reference_sentence[layer]) for layer in self.layers}
        if self.reference_words is not None:
            mine_words = encode_words(self.model, self.tokenizer, self.sentences, self.layers, **self.kwargs)
            paired["word"] = {
                layer: paired_word_vectors(mine_words, self.reference_words, layer) for layer in self.layers
            }
        out = []
        for level, by_layer in paired.items():
            self.vectors[level] = n = int(by_layer[self.layers[0]][0].shape[0])
            if n < 2:
                log.warning("only %d %s vector(s) in common; no %s-level measures", n, level, level)
                continue
            for layer in self.layers:
                x, y = by_layer[layer]
                if "euclidean" in self.measures:
                    out.append(record("euclidean", mean_euclidean_distance(x, y), layer=layer, level=level, step=step))
                out.append(record("cka", linear_cka(x, y), layer=layer, level=level, step=step))
        return out


@dataclass
class AdaptationResult:
    records: list[dict]
    train: TrainResult
    trainable: dict[int, list[int]] = field(default_factory=dict)  # step -> layers trained up to it
    # per-sentence outputs of the final evaluations (the records without `step`)
    examples: list[dict] = field(default_factory=list)


def adapt(
    model: torch.nn.Module,
    tokenizer,
    texts: Sequence[str],
    scheme: Scheme,
    args: TrainArgs,
    target: EvalSet,
    others: Sequence[EvalSet] = (),
    final_only: Sequence[EvalSet] = (),
    comparison: NativeComparison | None = None,
    select: str = "best",
    mlm_probability: float = 0.15,
    eval_batch_size: int = 16,
    checkpoint_dir: str | Path | None = None,
    intervals: RepeatedSetIntervals | None = None,
    identity: dict | None = None,
    word_level: WordNllSettings | None = None,
) -> AdaptationResult:
    """MLM-train `model` (a masked LM) on `texts` under `scheme`; checkpoints at step 0 and every
    `args.eval_every` steps (and the last step); `select` = best (lowest target perplexity, the
    seed's early stopping; step 0, the untouched model, can win) or last decides which
    parameters the model ends with. With `intervals`, every checkpoint's perplexity and mlm_loss
    records carry their bootstrap bounds.

    The records of every checkpoint travel in the training history, which a resumable run
    (`checkpoint_dir`, keyed on `identity`: xlt.core.training) saves and restores, so a resumed
    run still returns the whole curve;
    step 0 is always computed here, on the untouched model, before training starts. `word_level`
    adds the word-level NLL to the final evaluation only (a forward pass per piece: too dear per step)."""
    if select not in SELECT:
        raise XltError(f"select must be one of {SELECT}, got {select!r}")
    device = pick_device(args.device)
    model.to(device)
    checkpoint_sets = [target, *others]

    def checkpoint(step: int) -> tuple[list[dict], list[dict], float]:
        """The evaluation sets' records, the comparison's with the native model (the probes of the
        representations: TensorBoard shows them apart, xlt.core.monitor.PROBES) and the target perplexity."""
        new = evaluate_sets(model, checkpoint_sets, eval_batch_size, device, step=step, intervals=intervals)
        probes = comparison.records(step) if comparison is not None else []
        ppl = {f"{r['lang']}/{r['split']}": round(r["value"], 3) for r in new if r["metric"] == "perplexity"}
        log.info("checkpoint step %d: perplexity %s", step, ppl)
        target_ppl = next(
            r["value"]
            for r in new
            if r["metric"] == "perplexity" and r["lang"] == target.lang and r["split"] == target.split
        )
        return new, probes, target_ppl

    records, probes0, target_ppl0 = checkpoint(0)
    records += probes0
    collate = MlmCollate(tokenizer, args.max_length, mlm_probability, pad_multiple(device))
    examples = collate.encode(texts)
    state = {"completed": 0, "active": set()}

    def on_step(step: int, epoch: int) -> None:
        active = apply_scheme(model, scheme, step, epoch)
        if active != state["active"]:
            log.info("step %d (epoch %d): training encoder layers %s", step, epoch, sorted(active))
        state["active"] = active
        # train() evaluates right after this step's update, so the evaluation belongs to step + 1
        state["completed"] = step + 1

    def score(step: int, target_ppl: float) -> float:
        # "last": a score that grows with the step makes the final parameters the kept ones
        value = -target_ppl if select == "best" else float(step)
        return -math.inf if math.isnan(value) else value

    def evaluate(m) -> dict:
        step = state["completed"]
        active = sorted(state["active"])
        new, probes, target_ppl = checkpoint(step)
        new.append(record("trainable_layers", len(active), step=step))
        return {
            "score": score(step, target_ppl),
            "target_perplexity": target_ppl,
            "trainable_layers": active,
            "records": new,
            PROBES: probes,
        }

    # step 0 competes for best too: a run that only gets worse keeps the untouched model
    result = train(
        model,
        Objective(examples, collate, mlm_loss),
        args,
        dev=DevSelection(
            evaluate,
            initial_score=score(0, target_ppl0),
            # monitoring's eval/loss: the training objective on the target's texts, masked afresh (its
            # perplexity and mlm_loss records keep the fixed masks)
            loss_examples=collate.encode(target.texts) if target.texts else None,
        ),
        checkpoint=Resumable(checkpoint_dir, identity),
        layers=LayerSchedule(schedulable_parameters(model), on_step),
    )
    trainable = {}
    for entry in result.history:
        records.extend(entry["records"])
        records.extend(entry.get(PROBES, []))  # (a checkpoint of an older run kept them in its records)
        records.append(record("train_loss", entry["loss"], step=entry["step"]))
        trainable[entry["step"]] = list(entry["trainable_layers"])
    records.append(record("selected_step", result.best_step))
    examples: list[dict] = []
    records.extend(
        evaluate_sets(
            model,
            [*checkpoint_sets, *final_only],
            eval_batch_size,
            device,
            examples_out=examples,
            word_level=word_level,
        )
    )
    return AdaptationResult(records=records, train=result, trainable=trainable, examples=examples)
