"""Normalise one configured dataset into results/data/{dataset}/{lang}/{split}.jsonl."""

from __future__ import annotations

from pathlib import Path

from xlt.core.errors import XltError
from xlt.core.io import write_json, write_jsonl
from xlt.core.settings import check_sentences, split_languages
from xlt.data import demo
from xlt.data.item_alignment import check_aligned
from xlt.data.sentences import abbreviation_list, corpus_sentences, digest, draw_splits, segmenter_version
from xlt.data.sources import load_records, local_path
from xlt.data.token_lengths import sample


def output_files(out_dir: str | Path, spec: dict) -> list[Path]:
    out_dir = Path(out_dir)
    return [out_dir / lang / f"{split}.jsonl" for split, langs in split_languages(spec).items() for lang in langs]


def prepare(
    name: str,
    spec: dict,
    out_dir: str | Path,
    root: str | Path = ".",
    world: dict | None = None,
    tokenizer: str | None = None,
) -> dict:
    """Load every (split, language) first, then write them all: a missing file fails
    before anything is written. With `tokenizer` (a model's hub id or directory), info.json also
    records a sample of each split's token lengths (xlt.data.token_lengths) for `xlt plan`."""
    loaded_tokenizer = _tokenizer(tokenizer) if tokenizer else None
    loaded = {}
    drawn = _sentence_splits(name, spec, root, world) if spec.get("sentences") else {}
    for split, langs in split_languages(spec).items():
        for lang in langs:
            records = drawn[(lang, split)] if drawn else load_records(name, spec, lang, split, root, world)
            if not records:  # rows there were, but none with a gold label
                raise XltError(
                    f"dataset {name}: split {split} of {lang}{_origin(name, spec, lang, split, root)} has no "
                    f"labelled rows (all labels negative); fill it, or drop {lang} from datasets.{name}.splits"
                )
            loaded[(lang, split)] = records
    if spec.get("item_aligned"):
        check_aligned(name, loaded)  # before anything is written
    out_dir = Path(out_dir)
    counts = {}
    for (lang, split), records in loaded.items():
        counts[f"{lang}/{split}"] = write_jsonl(out_dir / lang / f"{split}.jsonl", records)
    info = {"name": name, "task": spec["task"], "source": spec["source"], "counts": counts}
    if drawn:
        info["sentences"] = _sentence_manifest(spec["sentences"], loaded)
    if "item_aligned" in spec:  # read by the evaluating verbs (xlt.data.item_alignment)
        info["item_aligned"] = spec["item_aligned"]
    if spec["source"] == "demo":  # what the synthetic languages share with English, for the report
        info["world"] = demo.describe(sorted(set(lang for lang, _ in loaded) - {"en"}), world)
    if loaded_tokenizer is not None:
        info["token_lengths"] = {
            split: sample({lang: loaded[(lang, split)] for lang in langs}, loaded_tokenizer, tokenizer)
            for split, langs in split_languages(spec).items()
        }
    write_json(out_dir / "info.json", info)
    return info


def _sentence_splits(name: str, spec: dict, root: str | Path, world: dict | None) -> dict[tuple[str, str], list[dict]]:
    """(lang, split) -> sentence records: each language's documents read once from the pool split,
    cut into sentences and drawn into the splits (xlt.data.sentences)."""
    check_sentences(name, spec)
    options, splits = spec["sentences"], split_languages(spec)
    out = {}
    for lang in sorted({lang for langs in splits.values() for lang in langs}):
        documents = [r["text"] for r in load_records(name, spec, lang, options["pool"], root, world)]
        wanted = {split: size for split, size in options["sizes"].items() if lang in splits[split]}
        drawn = draw_splits(corpus_sentences(documents, options["min_words"], lang), wanted, options["seed"], name)
        out.update({(lang, split): [{"text": s} for s in sentences] for split, sentences in drawn.items()})
    return out


def _sentence_manifest(options: dict, loaded: dict) -> dict:
    """How the sentences were made, and each split's count and sha256 (xlt.data.sentences.digest)."""
    return {
        "segmenter": segmenter_version(),
        "abbreviations": {lang: abbreviation_list(lang) for lang in sorted({lang for lang, _ in loaded})},
        "pool": options["pool"],
        "seed": options["seed"],
        "min_words": options["min_words"],
        "splits": {
            f"{lang}/{split}": {"count": len(records), "sha256": digest([r["text"] for r in records])}
            for (lang, split), records in loaded.items()
        },
    }


def _tokenizer(ref: str):
    """The tokenizer a length sample is counted with; a clear error before any data is loaded."""
    from xlt.core.models import load_tokenizer  # deferred: imports torch

    try:
        return load_tokenizer(ref)
    except (OSError, ValueError) as err:
        raise XltError(
            f"--tokenizer {ref}: cannot load its tokenizer ({err}); run `xlt prefetch --config CONFIG` "
            "for a hub model, or pass a model directory"
        ) from None


def _origin(name: str, spec: dict, lang: str, split: str, root: str | Path) -> str:
    if spec["source"] != "local" or spec.get("format") == "cls":
        return ""
    return f" ({local_path(name, spec, lang, split, Path(root))})"
