"""The dual family's evaluation job (`tatoeba_dual`, `xlt eval-embeddings`): Tatoeba-style retrieval
and, with `dual.sts`, STS; the same command for a trained run, a baseline and the distillation
teacher."""

from __future__ import annotations

import json

from xlt.core import settings
from xlt.core.job_spec import JobSpec
from xlt.core.plan import Job, data_file, data_info, prompt_settings
from xlt.families.dual.bitext import bitext_files
from xlt.families.dual.paths import FAMILY, TATOEBA


def sts_sets(config: dict) -> list[dict]:
    """`dual.sts` as a list of STS sets (one mapping or a list of them in the config; none without it)."""
    sts = config[FAMILY].get("sts")
    return [] if not sts else [sts] if isinstance(sts, dict) else list(sts)


def _sts_files(config: dict) -> tuple[list, list]:
    """`--sts FILE ...` of every `dual.sts` set and their datasets' data inputs (none without it)."""
    sets = sts_sets(config)
    return (
        [("sts", data_file(sts["dataset"], lang, sts["split"])) for sts in sets for lang in sts["langs"]],
        [data_info(sts["dataset"]) for sts in sets],
    )


def tatoeba_job(config: dict, run_id: str, model: str, model_files, axes: dict, layer: int | None = None) -> Job:
    """`xlt eval-embeddings` on the Tatoeba (and `dual.sts`) sets: the same command for a trained
    run, a baseline and the distillation teacher (with its own pooled layer)."""
    spec = config[FAMILY]["tatoeba"]
    sts_files, sts_data = _sts_files(config)
    data = [data_info(spec["dataset"]), *[d for d in sts_data if d != data_info(spec["dataset"])]]
    return Job(
        run_id,
        axes=axes,
        inputs={"model": model_files, "data": data[0] if len(data) == 1 else data},
        spec=JobSpec(
            "eval-embeddings",
            [
                ("model", model),
                ("pooling", axes["pooling"]),
                *([("layer", layer)] if layer is not None else []),
                *prompt_settings(config, axes["model"]),
                *[("bitext", f) for f in bitext_files(config, "tatoeba")],
                *sts_files,
                ("match", spec["match"]),
                ("axes", json.dumps(axes)),
                ("run_id", run_id),
                ("family", FAMILY),
                ("max_length", settings.eval_max_length(config)),
                ("out", TATOEBA.format(run_id=run_id)),
            ],
        ),
    )
