"""BUCC-style mining in the dual sweep (`dual.mining`): the language pairs, their BUCC files
(`make_bucc`, written once per pair unless they are local files), and the `mine` job of every
trained run and pair."""

from __future__ import annotations

import json
from pathlib import Path

from xlt.core import settings
from xlt.core.errors import XltError
from xlt.core.job_spec import JobSpec
from xlt.core.plan import Job, data_file, data_info, prompt_settings
from xlt.data.bucc_files import parse_pair
from xlt.families.dual.paths import BUCC, FAMILY, MINED


def mining_pairs(config: dict) -> list[str]:
    """Language pairs mined, as in the BUCC file names (bitext source: LANG-english)."""
    family = settings.family(config, FAMILY)
    if family is None or "mining" not in family:
        return []
    mining = family["mining"]
    if mining["source"] == "bitext":
        return [f"{lang}-{mining['english']}" for lang in mining["langs"]]
    return list(mining["pairs"])


def bucc_dir(config: dict, pair: str) -> str:
    """Local BUCC files are read where they are; the other sources' files are written by make_bucc."""
    mining = config[FAMILY]["mining"]
    return mining["dir"] if mining["source"] == "local" else BUCC.format(pair=pair)


def check(config: dict, require_bitext) -> None:
    """`dual.mining` against the datasets and itself (`require_bitext`: the family's bitext check)."""
    family = config[FAMILY]
    if "mining" not in family:
        return
    mining = family["mining"]
    if mining["tune_split"] == mining["test_split"]:
        raise XltError(
            f"{FAMILY}.mining: tune_split and test_split are both {mining['tune_split']!r}; "
            "the threshold must be tuned on another split than the one it is scored on"
        )
    if mining["source"] == "bitext":
        require_bitext(config, mining["dataset"], f"{FAMILY}.mining.dataset")
        for split in (mining["tune_split"], mining["test_split"]):
            settings.require_split(config, mining["dataset"], split, mining["langs"], f"{FAMILY}.mining")
    if mining["source"] == "local" and not Path(mining["dir"]).is_dir():
        raise XltError(
            f"{FAMILY}.mining.dir: {mining['dir']} is not a directory; point it at BUCC-layout files "
            "({src}-{tgt}.{split}.{src|tgt|gold})"
        )
    pairs = mining_pairs(config)
    for pair in pairs:
        try:
            parse_pair(pair)
        except XltError as err:
            raise XltError(f"{FAMILY}.mining: {err}") from None
    if len(set(pairs)) != len(pairs):
        raise XltError(f"{FAMILY}.mining lists a language pair more than once: {pairs}")


def mine_jobs(config: dict, run_id: str, model: str, row: dict, axes: dict) -> dict[str, Job]:
    """ "run id/pair" -> the `mine` job of a trained run (its `model` directory, its sweep `axes`)
    for every mined pair."""
    mining, axes_json = config[FAMILY].get("mining"), json.dumps(axes)
    return {
        f"{run_id}/{pair}": Job(
            run_id,
            axes={**axes, "pair": pair},
            inputs={"bucc": bucc_dir(config, pair)},
            spec=JobSpec(
                "mine",
                [
                    ("model", model),
                    ("bucc_dir", bucc_dir(config, pair)),
                    ("pair", pair),
                    ("tune_split", mining["tune_split"]),
                    ("test_split", mining["test_split"]),
                    ("pooling", row["pooling"]),
                    *prompt_settings(config, row["model"]),
                    ("k", mining["k"]),
                    ("strategy", mining["strategy"]),
                    ("max_length", settings.eval_max_length(config)),
                    ("axes", axes_json),
                    ("run_id", run_id),
                    ("out_metrics", MINED.format(run_id=run_id, pair=pair)),
                ],
            ),
        )
        for pair in mining_pairs(config)
    }


def make_bucc_jobs(config: dict) -> dict[str, Job]:
    """pair -> the job writing its BUCC files (none for local files: they are read where they are)."""
    pairs = mining_pairs(config)
    mining = config[FAMILY]["mining"] if pairs else None
    if not mining or mining["source"] == "local":
        return {}
    inputs = {"data": data_info(mining["dataset"])} if mining["source"] == "bitext" else {}
    return {
        pair: Job(
            pair,
            inputs=inputs,
            axes={"pair": pair},
            spec=JobSpec(
                "make-bucc",
                [
                    ("pair", pair),
                    ("out", BUCC.format(pair=pair)),
                    *_make_bucc_settings(mining, pair),
                    ("seed", mining["seed"]),
                ],
            ),
        )
        for pair in pairs
    }


def _make_bucc_settings(mining: dict, pair: str) -> list[tuple]:
    if mining["source"] == "bitext":
        lang = pair.split("-")[0]
        bitext = [
            ("bitext", f"{split}={data_file(mining['dataset'], lang, split)}")
            for split in (mining["tune_split"], mining["test_split"])
        ]
        return bitext + [("gold_fraction", mining["gold_fraction"])]
    hub = [
        ("hub_dataset", mining["path"]),
        ("hub_split", mining["hub_split"]),
        ("tune_fraction", mining["tune_fraction"]),
        ("split_names", f"{mining['tune_split']},{mining['test_split']}"),
    ]
    return hub + ([("revision", mining["revision"])] if "revision" in mining else [])
