"""Stand-in data for the rehearsal: generated rows with each dataset's languages, splits,
columns and label names, written where the real data would be found.

- `source: hf` datasets (and hub data a family reads outside `datasets:`, written by its
  rehearsal hook with these writers, e.g. `write_bucc`) go into the `datasets` cache layout
  under the real hub id and config name (`<namespace>___<name>/<config>/<version>/<hash>`), the
  copy `load_dataset` reads with HF_HUB_OFFLINE=1 after `xlt prefetch`. (A hub-layout dataset
  repo would not do: `load_dataset` needs the hub's API to resolve one, offline or not.)
- `source: local` CLS goes into the published `cls-acl10-unprocessed` layout at the config's path.
"""

from __future__ import annotations

import json
import random
import re
import shutil
import tempfile
from pathlib import Path

from xlt.core import registry, settings
from xlt.core.errors import XltError
from xlt.core.prefetch import hf_split
from xlt.core.settings import split_languages
from xlt.data.cls import cls_path
from xlt.rehearse.text import render, sentence_ids

ROWS = {"train": 300, "unlabeled": 200}  # every other split: ROWS_OTHER
ROWS_OTHER = 60
DEFAULT_LABELS = {"nli": ["entailment", "neutral", "contradiction"], "sentiment": ["negative", "positive"]}
SLICE = re.compile(r"^(\w+)\[(\d*):(\d*)\]$")
BUCC_SOURCES, BUCC_TARGETS, BUCC_GOLD = 80, 100, 50
ARTICLE_SENTENCES = (3, 6)  # sentences of a stand-in corpus row (an article)


def base_split(split_name: str) -> tuple[str, int]:
    """'train[80:90]' -> ('train', 90): the split to generate and the rows a slice of it needs."""
    match = SLICE.match(split_name)
    if not match:
        return split_name, 0
    return match.group(1), int(match.group(3) or 0)


def _rows(
    task: str, columns: dict, lang: str, split: str, count: int, rng: random.Random, label_names: list[str]
) -> list[dict]:
    col = {field: columns.get(field, field) for field in ("text", "text_pair", "label", "score")}
    rows = []
    for i in range(count):
        ids = sentence_ids(rng)
        row = {col["text"]: render(ids, lang)}
        if task == "corpus":  # an article: several sentences, a line each (no full stop: a word-level stand-in
            # vocabulary has no "." token), so a corpus drawn as sentences (xlt.data.sentences) finds several
            row[col["text"]] = "\n".join(
                render(sentence_ids(rng), lang) for _ in range(rng.randint(*ARTICLE_SENTENCES))
            )
        if task == "bitext":  # the language's side and its English translation
            row[col["text_pair"]] = render(ids, "en")
        elif task in ("nli", "sts"):
            row[col["text_pair"]] = render(sentence_ids(rng), lang)
        if task in ("nli", "sentiment") and split not in ("unlabeled", "unlabelled"):
            row[col["label"]] = i % len(label_names)
        if task == "sts":
            row[col["score"]] = round(rng.uniform(0, 5), 2)
        rows.append(row)
    rng.shuffle(rows)
    return rows


def _features(task: str, columns: dict, label_names: list[str], labelled: bool):
    import datasets  # deferred: datasets: seconds to import

    col = {field: columns.get(field, field) for field in ("text", "text_pair", "label", "score")}
    fields = {
        "nli": ["text", "text_pair"],
        "sentiment": ["text"],
        "sts": ["text", "text_pair"],
        "bitext": ["text", "text_pair"],
        "corpus": ["text"],
    }[task]
    features = {col[f]: datasets.Value("string") for f in fields}
    if task in ("nli", "sentiment") and labelled:
        features[col["label"]] = datasets.ClassLabel(names=label_names)
    if task == "sts":
        features[col["score"]] = datasets.Value("float32")
    return datasets.Features(features)


def write_cached(
    datasets_cache: Path, hub_id: str, config_name: str | None, splits: dict[str, list[dict]], features=None
) -> Path:
    """`splits` (split -> rows) as the prepared copy of hub_id/config_name in the datasets cache."""
    from datasets.packaged_modules.json.json import Json  # deferred: datasets: seconds to import

    name = hub_id.split("/")[-1]
    config = config_name or "default"
    final = datasets_cache / hub_id.replace("/", "___") / config / "0.0.0" / "rehearsal"
    datasets_cache.mkdir(parents=True, exist_ok=True)  # the first stand-in may come from a family's hook
    with tempfile.TemporaryDirectory(dir=datasets_cache.parent) as tmp:
        files = {}
        for split, rows in splits.items():
            files[split] = str(Path(tmp) / f"{split}.jsonl")
            Path(files[split]).write_text("".join(json.dumps(row) + "\n" for row in rows))
        builder = Json(
            cache_dir=str(Path(tmp) / "cache"),
            dataset_name=name,
            config_name=config,
            data_files=files,
            features=features,
            hash="rehearsal",
            version="0.0.0",
        )
        builder.download_and_prepare()
        if final.exists():
            shutil.rmtree(final)
        final.parent.mkdir(parents=True, exist_ok=True)
        shutil.copytree(builder.cache_dir, final)
    return final


def required_rows(config: dict) -> dict[tuple[str, str], int]:
    """(dataset, split) -> rows the sweep needs beyond the defaults, as the enabled families ask
    through their optional hook `rehearsal.required_rows(config)` (a training size that must fit
    in a split, as it does at paper scale); the most any family asks for."""
    need: dict[tuple[str, str], int] = {}
    for name in registry.names():
        rows = registry.hook(name, "rehearsal", "required_rows") if settings.family(config, name) else None
        for key, count in (rows(config) if rows else {}).items():
            need[key] = max(need.get(key, 0), count)
    return need


def hf_loads(config: dict) -> dict[tuple, dict]:
    """(hub id, config name) -> {"dataset": the first dataset name reading it, "lang", "splits":
    {split: rows needed}} for every `source: hf` dataset of the config. Two datasets may read one
    hub config (XNLI's test sets and its validation sentences): one cache entry holds both's splits."""
    loads: dict[tuple, dict] = {}
    required = required_rows(config)
    for name, spec in config.get("datasets", {}).items():
        if spec["source"] != "hf":
            continue
        for split, langs in split_languages(spec).items():
            base, needed = base_split(hf_split(spec, split))
            needed = max(needed, required.get((name, split), 0))
            for lang in langs:
                config_name = spec["name"].format(lang=lang) if spec.get("name") else None
                entry = loads.setdefault((spec["path"], config_name), {"dataset": name, "lang": lang, "splits": {}})
                entry["splits"][base] = max(entry["splits"].get(base, 0), needed, ROWS.get(base, ROWS_OTHER))
    return loads


def write_hf_datasets(config: dict, datasets_cache: Path, seed: int = 0) -> int:
    """Every `source: hf` (hub id, config name) the config reads; returns how many."""
    loads = hf_loads(config)
    for (hub_id, config_name), load in loads.items():
        spec = config["datasets"][load["dataset"]]
        task, columns = spec["task"], spec.get("columns", {})
        labels = [str(n) for n in spec.get("label_names") or DEFAULT_LABELS.get(task, [])]
        # one item list per split, rendered in each language: a translated set (XNLI, stsb_multi_mt)
        # is the same items in every config, which their `item_aligned: true` declares and prepare-data checks
        splits = {
            split: _rows(task, columns, load["lang"], split, count, random.Random(f"{seed}:{hub_id}:{split}"), labels)
            for split, count in load["splits"].items()
        }
        labelled = all(split not in ("unlabeled", "unlabelled") for split in splits)
        write_cached(datasets_cache, hub_id, config_name, splits, _features(task, columns, labels, labelled))
    return len(loads)


def write_bucc(mining: dict, datasets_cache: Path, seed: int = 0) -> int:
    """BUCC-style mining data in mteb/bucc-bitext-mining's shape: one row a pair, `sentence1`
    (sources), `sentence2` (targets) and 1-based `gold` [source, target] pairs."""
    import datasets  # deferred: datasets: seconds to import

    features = datasets.Features(
        {
            "sentence1": datasets.Sequence(datasets.Value("string")),
            "sentence2": datasets.Sequence(datasets.Value("string")),
            "gold": datasets.Sequence(datasets.Sequence(datasets.Value("int64"))),
        }
    )
    for pair in mining["pairs"]:
        src, tgt = pair.split("-")
        rng = random.Random(f"{seed}:bucc:{pair}")
        gold_ids = [sentence_ids(rng) for _ in range(BUCC_GOLD)]
        sources = gold_ids + [sentence_ids(rng) for _ in range(BUCC_SOURCES - BUCC_GOLD)]
        targets = gold_ids + [sentence_ids(rng) for _ in range(BUCC_TARGETS - BUCC_GOLD)]
        src_order, tgt_order = (
            rng.sample(range(len(sources)), len(sources)),
            rng.sample(range(len(targets)), len(targets)),
        )
        where_src = {old: new for new, old in enumerate(src_order)}
        where_tgt = {old: new for new, old in enumerate(tgt_order)}
        row = {
            "sentence1": [render(sources[i], src) for i in src_order],
            "sentence2": [render(targets[i], tgt) for i in tgt_order],
            "gold": [[where_src[i] + 1, where_tgt[i] + 1] for i in range(BUCC_GOLD)],
        }
        write_cached(datasets_cache, mining["path"], pair, {mining["hub_split"]: [row]}, features)
    return len(mining["pairs"])


def write_cls(spec: dict, root: Path, seed: int = 0, required: dict | None = None) -> None:
    """CLS reviews of one domain in the published layout (ja is read from jp/): balanced 1-2 and
    4-5 star reviews, unlabelled ones of any rating."""
    for split, langs in split_languages(spec).items():
        for lang in langs:
            rng = random.Random(f"{seed}:cls:{spec['domain']}:{lang}:{split}")
            count = max(ROWS.get(split, ROWS_OTHER), (required or {}).get((spec["name"], split), 0))
            path = cls_path(root / spec["files"], lang, spec["domain"], split)
            path.parent.mkdir(parents=True, exist_ok=True)
            items = []
            for i in range(count):
                rating = rng.choice((1.0, 2.0)) if i % 2 else rng.choice((4.0, 5.0))
                items.append(
                    f"<item><rating>{rating}</rating><summary>{render(sentence_ids(rng, 2, 4), lang)}"
                    f"</summary><text>{render(sentence_ids(rng), lang)}</text></item>\n"
                )
            path.write_text("".join(items))


def write_local(config: dict, root: Path, seed: int = 0) -> int:
    count = 0
    for name, spec in config.get("datasets", {}).items():
        if spec["source"] != "local":
            continue
        if spec.get("format") != "cls":
            raise XltError(
                f"rehearsal: dataset {name} is local ({spec.get('format')}); the rehearsal generates "
                f"stand-ins for hub datasets and the CLS layout only"
            )
        write_cls({**spec, "name": name}, root, seed, required_rows(config))
        count += 1
    return count
