"""The alignment family's part of `xlt rehearse` (a hook, xlt.rehearse.derive): a small t-SNE sample."""

from __future__ import annotations

from typing import Callable

# pairs a language in the t-SNE pictures (paper: 200 of Tatoeba's 1,000; the stand-in has 60). At
# 200 every picture is t-SNE on 960 points, 1,000 iterations: 20 CPU-s of each align job
TSNE_SAMPLE = 10


def derive(section: dict, paper: dict, cap: Callable[[dict], None], steps: int) -> None:
    section["tsne_sample"] = min(section.get("tsne_sample", TSNE_SAMPLE), TSNE_SAMPLE)
