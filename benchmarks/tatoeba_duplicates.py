"""How often Tatoeba-style bitext repeats a string: where text and index matching can disagree.

Per language: pairs, distinct non-English / English strings that occur more than once (and the
lines they cover), and per direction the share of queries whose gold target string also
occurs at another index. Only those queries can be scored differently by `match: text` (a
retrieved equal string counts) and `match: index` (only the gold index counts); with a share
of 0 the two rules give the same number for any model (xlt.evaluate.retrieval).

    python benchmarks/tatoeba_duplicates.py                       # ../shared/data/tatoeba (LASER files)
    python benchmarks/tatoeba_duplicates.py --dir DIR --langs deu,fra
    python benchmarks/tatoeba_duplicates.py --config config.yaml  # the demo's bitext, generated as
                                                                  # the workflow's prepare step does
With --config, every bitext dataset the config declares is read through `xlt.data.sources`
(demo sets are generated in memory, nothing is written); --dataset/--split pick one. The
config's Tatoeba languages that --dir lacks are listed at the end (--paper CONFIG).
"""

from __future__ import annotations

import argparse
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared" / "data" / "tatoeba"


def duplicate_stats(xx: list[str], en: list[str]) -> dict:
    """The row of one language (see the module docstring)."""
    xx_count, en_count = Counter(xx), Counter(en)
    n = len(xx)
    return {
        "pairs": n,
        "xx_dup_strings": sum(1 for c in xx_count.values() if c > 1),
        "xx_dup_lines": sum(c for c in xx_count.values() if c > 1),
        "en_dup_strings": sum(1 for c in en_count.values() if c > 1),
        "en_dup_lines": sum(c for c in en_count.values() if c > 1),
        # xx->en retrieves English: text and index can disagree where the gold English repeats
        "xx->en_can_differ": sum(en_count[s] > 1 for s in en) / n,
        "en->xx_can_differ": sum(xx_count[s] > 1 for s in xx) / n,
    }


def laser_sets(directory: Path, langs: list[str] | None) -> dict[str, tuple[list[str], list[str]]]:
    from xlt.data.bitext_files import available_tatoeba_langs, load_tatoeba

    return {lang: load_tatoeba(directory, lang) for lang in (langs or available_tatoeba_langs(directory))}


def config_sets(path: Path, dataset: str | None, split: str | None) -> dict[str, tuple[list[str], list[str]]]:
    """Every (dataset, split, lang) of the config's bitext datasets, as the prepare step loads them."""
    import yaml

    from xlt.core.settings import split_languages, validate
    from xlt.data.sources import load_records

    config = validate(yaml.safe_load(path.read_text()))
    world = config.get("demo_world", {}).get("languages")
    out = {}
    for name, spec in config["datasets"].items():
        if spec["task"] != "bitext" or (dataset and name != dataset):
            continue
        for one_split, langs in split_languages(spec).items():
            if split and one_split != split:
                continue
            for lang in langs:
                records = load_records(name, spec, lang, one_split, REPO, world)
                out[f"{name}/{lang}/{one_split}"] = ([r["text"] for r in records], [r["text_pair"] for r in records])
    return out


def tatoeba_langs(path: Path) -> list[str]:
    """The languages a config evaluates Tatoeba on (dual.tatoeba, sbert.eval.bitext, alignment.data)."""
    import yaml

    config = yaml.safe_load(path.read_text())
    sections = [
        config.get("dual", {}).get("tatoeba"),
        config.get("sbert", {}).get("eval", {}).get("bitext"),
        config.get("alignment", {}).get("data"),
    ]
    return list(dict.fromkeys(lang for s in sections if s for lang in s.get("langs", [])))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", type=Path, default=SHARED, help="LASER-layout Tatoeba folder (default %(default)s)")
    parser.add_argument("--langs", help="comma-separated codes (default: every code in --dir)")
    parser.add_argument("--config", type=Path, help="read the config's bitext datasets instead of --dir")
    parser.add_argument("--dataset", help="with --config: only this dataset")
    parser.add_argument("--split", help="with --config: only this split")
    parser.add_argument(
        "--paper",
        type=Path,
        default=REPO / "config" / "paper.yaml",
        help="config whose Tatoeba languages are checked against --dir (default %(default)s)",
    )
    args = parser.parse_args()

    sets = (
        config_sets(args.config, args.dataset, args.split)
        if args.config
        else laser_sets(args.dir, args.langs.split(",") if args.langs else None)
    )
    rows = {key: duplicate_stats(xx, en) for key, (xx, en) in sets.items()}
    columns = list(next(iter(rows.values())))
    print("| set | " + " | ".join(columns) + " |")
    print("|---" * (len(columns) + 1) + "|")
    for key, row in rows.items():
        cells = [f"{v:.3f}" if isinstance(v, float) else str(v) for v in row.values()]
        print(f"| {key} | " + " | ".join(cells) + " |")
    if not args.config and args.paper.is_file():
        wanted = tatoeba_langs(args.paper)
        print(
            f"\n{args.paper.name} Tatoeba languages ({len(wanted)}): in {args.dir}: "
            f"{', '.join(lang for lang in wanted if lang in sets) or 'none'}; "
            f"not there: {', '.join(lang for lang in wanted if lang not in sets) or 'none'}"
        )


if __name__ == "__main__":
    main()
