"""Normalise one configured dataset into results/data/{dataset}/{lang}/{split}.jsonl."""
from __future__ import annotations

from pathlib import Path

from xlt.core.errors import XltError
from xlt.core.io import write_json, write_jsonl
from xlt.core.settings import split_languages
from xlt.data.sources import load_records, local_path


def output_files(out_dir: str | Path, spec: dict) -> list[Path]:
    out_dir = Path(out_dir)
    return [out_dir / lang / f"{split}.jsonl" for split, langs in split_languages(spec).items() for lang in langs]


def prepare(name: str, spec: dict, out_dir: str | Path, root: str | Path = ".", world: dict | None = None) -> dict:
    """Load every (split, language) first, then write them all: a missing file fails
    before anything is written."""
    loaded = {}
    for split, langs in split_languages(spec).items():
        for lang in langs:
            records = load_records(name, spec, lang, split, root, world)
            if not records:  # rows there were, but none with a gold label
                raise XltError(f"dataset {name}: split {split} of {lang}{_origin(name, spec, lang, split, root)} has no "
                               f"labelled rows (all labels negative); fill it, or drop {lang} from datasets.{name}.splits")
            loaded[(lang, split)] = records
    out_dir = Path(out_dir)
    counts = {}
    for (lang, split), records in loaded.items():
        counts[f"{lang}/{split}"] = write_jsonl(out_dir / lang / f"{split}.jsonl", records)
    info = {"name": name, "task": spec["task"], "source": spec["source"], "counts": counts}
    if spec["source"] == "demo":  # what the synthetic languages share with English, for the report
        from xlt.data import demo

        info["world"] = demo.describe(sorted(set(lang for lang, _ in loaded) - {"en"}), world)
    write_json(out_dir / "info.json", info)
    return info


def _origin(name: str, spec: dict, lang: str, split: str, root: str | Path) -> str:
    if spec["source"] != "local" or spec.get("format") == "cls":
        return ""
    return f" ({local_path(name, spec, lang, split, Path(root))})"
