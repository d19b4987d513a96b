"""Item alignment of a dataset across its languages: declared in the config, checked on the data.

A translated test set (XNLI, stsb_multi_mt, the demo's) holds the same items in every
language, and a model's errors on an item are correlated across its translations, so the
interval of an average over languages resamples them with one shared draw
(xlt.analysis.intervals). That is a property of how the set was made, so the config declares
it (`datasets.<name>.item_aligned`) instead of the bootstrap guessing it from the gold. `xlt
prepare-data` refuses a declared set whose languages disagree (another count, another gold at a
position) and records the declaration in the prepared info.json, where the evaluating verbs
read it (`declared_alignment`) and pass it on with their example sets.
"""

from __future__ import annotations

from pathlib import Path

from xlt.core.errors import XltError
from xlt.core.io import read_json

GOLD_FIELDS = ("label", "score")  # what an item's gold is (classification, STS)
INFO = "info.json"


def check_aligned(name: str, loaded: dict[tuple[str, str], list[dict]]) -> None:
    """Every split's languages hold the same number of items with the same gold at every
    position (`loaded`: (lang, split) -> records); an XltError naming the first disagreement."""
    by_split: dict[str, list[tuple[str, list[dict]]]] = {}
    for (lang, split), records in loaded.items():
        by_split.setdefault(split, []).append((lang, records))
    fix = (
        f"fix the files, or set datasets.{name}.item_aligned: false (its intervals then resample every "
        f"language on its own)"
    )
    for split, sets in by_split.items():
        first_lang, first = sets[0]
        for lang, records in sets[1:]:
            if len(records) != len(first):
                raise XltError(
                    f"dataset {name} declares item_aligned, but split {split} has {len(records)} items in "
                    f"{lang} and {len(first)} in {first_lang}; {fix}"
                )
            for field in GOLD_FIELDS:
                gold = [r.get(field) for r in first]
                if any(value is not None for value in gold):
                    differ = next((i for i, r in enumerate(records) if r.get(field) != gold[i]), None)
                    if differ is not None:
                        raise XltError(
                            f"dataset {name} declares item_aligned, but in split {split} item {differ} has "
                            f"{field} {records[differ].get(field)!r} in {lang} and {gold[differ]!r} in "
                            f"{first_lang}; {fix}"
                        )


def declared_alignment(files) -> bool | None:
    """The `item_aligned` a prepared dataset declares, read from the info.json beside its
    `<dataset>/<lang>/<split>.jsonl` files; None where the files lie elsewhere (given by hand),
    name several datasets that disagree, or the dataset declares nothing."""
    found = set()
    for file in files:
        info = Path(file).parent.parent / INFO
        found.add(read_json(info).get("item_aligned") if info.is_file() else None)
    return found.pop() if len(found) == 1 else None
