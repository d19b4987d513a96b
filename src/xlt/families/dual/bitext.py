"""The dual family's bitext: its train, dev and Tatoeba sets as {dataset, langs, split}, and their
prepared files."""

from __future__ import annotations

from xlt.core import settings
from xlt.core.plan import data_file
from xlt.families.dual.paths import FAMILY


def bitext_spec(config: dict, role: str) -> dict:
    """`train`, `dev` or `tatoeba` as {dataset, langs, split}. `dev` takes the train dataset
    and languages unless it names its own (the schema fills only its split)."""
    family = config[FAMILY]
    if role == "dev":
        train = family["train"]
        return {"dataset": train["dataset"], "langs": train["langs"], **family["dev"]}
    return family[role]


def bitext_files(config: dict, role: str) -> list[str]:
    spec = bitext_spec(config, role)
    return [data_file(spec["dataset"], lang, spec["split"]) for lang in spec["langs"]]


def require_bitext(config: dict, dataset: str, where: str) -> None:
    settings.require_task(config, dataset, ("bitext",), where)
