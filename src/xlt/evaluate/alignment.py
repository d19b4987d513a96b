"""How well does each layer of an encoder align translations? Per-layer bitext retrieval.

For every hidden-state index (0 = embeddings, L = last layer) both sides of a set of
parallel sentences are mean-pooled (`xlt.core.embeddings.encode_layers`) and each sentence
retrieves its nearest neighbour by cosine on the other side; accuracy is the share whose
nearest neighbour is its own translation (Tatoeba-style, by position, ties to the lower
index; `xlt.evaluate.retrieval`, in float64). Directions: "xx->en" (non-English queries,
English candidates) and "en->xx".

Optional per-language mean-centring subtracts each side's mean vector (per layer, over
the evaluated sentences) before the cosine. Multilingual encoders keep a language-specific
offset in their representations (Libovický et al. 2020); centring removes it and shows how
much of the misalignment is just that offset.

`project_layers` makes 2-D pictures of a sample of parallel sentences for chosen layers:
t-SNE (seeded) or PCA, on L2-normalised vectors so distances follow the cosine.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from xlt.core.choices import PROJECTION_METHODS
from xlt.core.errors import XltError
from xlt.core.metrics import record
from xlt.data.bitext_files import Bitext
from xlt.evaluate.retrieval import EN_TO_XX, XX_TO_EN, bitext_retrieval, retrieval_examples
from xlt.evaluate.vectors import l2_normalise

DIRECTIONS = (XX_TO_EN, EN_TO_XX)
RETRIEVAL_METRIC = "bitext_retrieval_acc"
# the per-layer accuracy's rule: by index, the retrieval default (it has vectors, not texts)
MATCH = "index"
CENTERED_SUFFIX = "_centered"
MIN_TSNE_POINTS = 4  # below this t-SNE is meaningless; PCA is used instead


@dataclass
class EncodedBitext:
    """Pooled vectors of both sides of one bitext, per hidden-state index."""

    lang: str
    texts: dict[int, np.ndarray]
    english: dict[int, np.ndarray]


def parse_layers(spec: str | Sequence[int] | None, num_layers: int) -> list[int]:
    """ "all" / None -> 0..L; "0,4,8" or a list -> those indices, checked against 0..L."""
    if spec is None or (isinstance(spec, str) and spec.strip().lower() == "all"):
        return list(range(num_layers + 1))
    if isinstance(spec, str):
        try:
            layers = [int(part) for part in spec.split(",") if part.strip()]
        except ValueError:
            raise XltError(
                f"layers {spec!r}: use 'all' or comma-separated hidden-state indices between 0 and {num_layers}"
            ) from None
    else:
        layers = [int(layer) for layer in spec]
    bad = [layer for layer in layers if not 0 <= layer <= num_layers]
    if bad or not layers:
        raise XltError(
            f"layers {spec!r}: indices must be between 0 (embeddings) and {num_layers} (last layer) "
            f"for this model; got {bad or 'none'}"
        )
    return sorted(set(layers))


def only_layers(encoded: EncodedBitext, layers: Sequence[int]) -> EncodedBitext:
    """The same bitext with only the hidden states `layers` (e.g. the table's, when more were
    encoded for the pictures)."""
    return EncodedBitext(
        encoded.lang,
        {layer: encoded.texts[layer] for layer in layers},
        {layer: encoded.english[layer] for layer in layers},
    )


def center(vectors: np.ndarray) -> np.ndarray:
    """Subtract the mean vector of this set (one language, one layer)."""
    vectors = np.asarray(vectors, dtype=np.float64)
    return vectors - vectors.mean(axis=0, keepdims=True)


def alignment_records(
    encoded: Sequence[EncodedBitext], center_languages: bool = False, examples_out: list | None = None
) -> list[dict]:
    """Retrieval accuracy records (metric, value, lang, layer, direction) for every layer.

    The metric is "bitext_retrieval_acc", or "bitext_retrieval_acc_centered" with centring.
    With `examples_out` (a MetricsFile's `examples`), every layer's retrieved indices go there.
    """
    metric = RETRIEVAL_METRIC + (CENTERED_SUFFIX if center_languages else "")
    records = []
    for bitext in encoded:
        for layer in sorted(bitext.texts):
            src, eng = bitext.texts[layer], bitext.english[layer]
            if center_languages:
                src, eng = center(src), center(eng)
            result = bitext_retrieval(src, eng, match=MATCH, dtype=np.float64)
            records.append(record(metric, result.accuracy_xx_to_en, lang=bitext.lang, layer=layer, direction=XX_TO_EN))
            records.append(record(metric, result.accuracy_en_to_xx, lang=bitext.lang, layer=layer, direction=EN_TO_XX))
            if examples_out is not None:
                for one in retrieval_examples(result, lang=bitext.lang, layer=layer):
                    examples_out.append(one | {"metric": metric})
    return records


def encode_bitexts(
    model, tokenizer, bitexts: Sequence[Bitext], layers: Sequence[int], pooling: str = "mean", **encode_kwargs
) -> list[EncodedBitext]:
    """Encode both sides of every bitext at every requested hidden-state index in one pass each."""
    from xlt.core.embeddings import encode_layers  # deferred: imports torch

    encoded = []
    for bitext in bitexts:
        texts = encode_layers(model, tokenizer, bitext.texts, layers, pooling=pooling, **encode_kwargs)
        english = encode_layers(model, tokenizer, bitext.english, layers, pooling=pooling, **encode_kwargs)
        encoded.append(EncodedBitext(bitext.lang, texts, english))
    return encoded


def with_projection(encoded: Sequence[EncodedBitext], layer: int, projection, index: int) -> list[EncodedBitext]:
    """Each bitext with one more index, `index` (the model's last hidden state + 1): its pooled
    `layer` through a saved encoder's trained projection, the sentence vector the model emits."""
    from xlt.core.sentence_encoder import project  # deferred: imports torch

    return [
        EncodedBitext(
            e.lang,
            {**e.texts, index: project(e.texts[layer], projection)},
            {**e.english, index: project(e.english[layer], projection)},
        )
        for e in encoded
    ]


def layer_alignment(
    model,
    tokenizer,
    bitexts: Sequence[Bitext],
    layers: str | Sequence[int] | None = "all",
    pooling: str = "mean",
    center_languages: bool = False,
    **encode_kwargs,
) -> list[dict]:
    """Per-layer bitext retrieval accuracy of `model` in both directions, as metric records."""
    from xlt.core.models import num_layers  # deferred: imports torch

    chosen = parse_layers(layers, num_layers(model))
    encoded = encode_bitexts(model, tokenizer, bitexts, chosen, pooling=pooling, **encode_kwargs)
    return alignment_records(encoded, center_languages=center_languages)


# ---------------------------------------------------------------------------------------
# 2-D projections


@dataclass
class Projection:
    """2-D coordinates of sampled parallel sentences at one layer.

    Point p is sentence `pair[p]` of bitext `source[p]`, on the side `langs[p]` (the
    bitext's language or the English label), so translations share (source, pair).
    """

    layer: int
    method: str
    coords: np.ndarray
    langs: list[str]
    source: list[str]
    pair: np.ndarray


def project_2d(
    vectors: np.ndarray, method: str = "tsne", seed: int = 0, perplexity: float = 30.0, threads: int | None = 1
) -> tuple[np.ndarray, str]:
    """(n, 2) coordinates and the method actually used (PCA when t-SNE has too few points).

    t-SNE perplexity is clamped to (n - 1) / 3 (at least 1), so it stays below n.
    `threads` caps t-SNE's OpenMP threads (None: library default); one thread avoids
    the heavy slow-down of oversubscribed OpenMP when several jobs share a machine.
    """
    if method not in PROJECTION_METHODS:
        raise ValueError(f"unknown projection {method!r}; choose one of {PROJECTION_METHODS}")
    vectors = l2_normalise(vectors, np.float64)
    n = len(vectors)
    if method == "tsne" and n >= MIN_TSNE_POINTS:
        from sklearn.manifold import TSNE  # deferred: sklearn: slow to import
        from threadpoolctl import threadpool_limits  # deferred: with sklearn

        clamped = float(min(perplexity, max(1.0, (n - 1) / 3)))
        tsne = TSNE(n_components=2, perplexity=clamped, random_state=seed, init="pca", learning_rate="auto")
        with threadpool_limits(limits=threads):
            return tsne.fit_transform(vectors), "tsne"
    from sklearn.decomposition import PCA  # deferred: sklearn: slow to import

    coords = np.zeros((n, 2))
    if n >= 2:
        components = min(2, n, vectors.shape[1])
        coords[:, :components] = PCA(n_components=components, svd_solver="full").fit_transform(vectors)
    return coords, "pca"


def sample_pairs(n: int, sample: int, seed: int = 0) -> np.ndarray:
    """Sorted indices of up to `sample` pairs out of n, drawn without replacement (seeded)."""
    if sample >= n:
        return np.arange(n)
    return np.sort(np.random.default_rng(seed).choice(n, size=sample, replace=False))


def project_layers(
    encoded: Sequence[EncodedBitext],
    layers: Sequence[int],
    sample: int = 200,
    method: str = "tsne",
    center_languages: bool = False,
    seed: int = 0,
    perplexity: float = 30.0,
    threads: int | None = 1,
    english: str = "en",
) -> list[Projection]:
    """Project the same sampled pairs at each layer; all languages share one picture per layer.

    English sides are labelled `english` (all bitexts' English sentences share the label).
    """
    picks = {b.lang: sample_pairs(len(next(iter(b.texts.values()))), sample, seed) for b in encoded}
    projections = []
    for layer in layers:
        blocks, langs, source, pair = [], [], [], []
        for bitext in encoded:
            if layer not in bitext.texts:
                raise ValueError(f"layer {layer} was not encoded for {bitext.lang}")
            idx = picks[bitext.lang]
            for side_lang, vectors in ((bitext.lang, bitext.texts[layer]), (english, bitext.english[layer])):
                chosen = center(vectors)[idx] if center_languages else np.asarray(vectors)[idx]
                blocks.append(chosen)
                langs += [side_lang] * len(idx)
                source += [bitext.lang] * len(idx)
                pair.append(idx)
        coords, used = project_2d(
            np.concatenate(blocks), method=method, seed=seed, perplexity=perplexity, threads=threads
        )
        projections.append(Projection(layer, used, coords, langs, source, np.concatenate(pair)))
    return projections
