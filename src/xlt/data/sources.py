"""Where data comes from: the demo generator, local files, or Hugging Face `datasets`.

Each source turns one (language, split) of a dataset declared in the config into
normalised records (see `xlt.data.records`). A dataset spec is the config entry, e.g.

    xnli:            {source: hf, task: nli, path: xnli, name: "{lang}",
                      split_names: {dev: validation}, columns: {text: premise, text_pair: hypothesis}}
    my-nli:          {source: local, task: nli, files: "data/nli/{split}.{lang}.tsv", format: tsv,
                      columns: {text: sentence1, text_pair: sentence2, label: gold_label},
                      label_names: [entailment, neutral, contradiction]}
    demo-nli:        {source: demo, task: nli, sizes: {train: 1500, dev: 200, test: 300}}
    cls-books:       {source: local, task: sentiment, format: cls, files: data/cls-acl10-unprocessed,
                      domain: books, splits: {train: [en], unlabeled: [en], test: all}}

An unlabelled split (`unlabeled` / `unlabelled`, e.g. CLS's review pool) is normalised without
labels, whatever the source holds.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

from xlt.core.errors import XltError
from xlt.core.io import numbered_jsonl, read_text
from xlt.data import demo
from xlt.data.cls import load_cls
from xlt.data.records import normalise, source_columns

UNLABELLED_SPLITS = ("unlabeled", "unlabelled")


def load_records(
    name: str, spec: dict, lang: str, split: str, root: str | Path = ".", world: dict | None = None
) -> list[dict]:
    """`world`: the demo languages (config demo_world.languages) a demo source renders."""
    source = spec["source"]
    labelled = split not in UNLABELLED_SPLITS
    origin = lines = None
    if source == "demo":
        size = spec.get("sizes", {}).get(split)
        if size is None:
            raise XltError(f"dataset {name}: no size for split {split!r}; add it under datasets.{name}.sizes")
        raw = demo.generate(spec["task"], lang, split, int(size), int(spec.get("seed", 13)), spec.get("domain"), world)
    elif source == "local" and spec.get("format") == "cls":  # the published layout fixes the file names
        raw = _read_cls(name, spec, lang, split, Path(root))
    elif source == "local":
        path = local_path(name, spec, lang, split, Path(root))
        raw, lines = _read_local(name, spec, lang, split, path, labelled)
        origin = str(path)
    elif source == "hf":
        raw = _read_hf(name, spec, lang, split)
    else:  # the schema rejects this first; kept for direct API use
        raise XltError(f"dataset {name}: unknown source {source!r}; use demo, local or hf")
    return normalise(
        raw,
        spec["task"],
        name=name,
        columns=spec.get("columns"),
        label_names=spec.get("label_names"),
        labelled=labelled,
        origin=origin,
        lines=lines,
    )


def local_path(name: str, spec: dict, lang: str, split: str, root: Path) -> Path:
    files = spec["files"]
    pattern = files.get(split) if isinstance(files, dict) else files
    if pattern is None:
        raise XltError(f"dataset {name}: no file pattern for split {split!r} under datasets.{name}.files")
    path = Path(pattern.format(lang=lang, split=split))
    return path if path.is_absolute() else root / path


def _read_local(
    name: str, spec: dict, lang: str, split: str, path: Path, labelled: bool
) -> tuple[list[dict], list[int]]:
    """The rows of one local file and the line each starts on (for error messages)."""
    if not path.is_file():
        raise XltError(
            f"dataset {name}: file not found for lang={lang} split={split}: {path}; add the file, or drop "
            f"{lang} from datasets.{name}.languages / splits (files: {spec['files']!r}, with {{lang}} and "
            f"{{split}} filled in)"
        )
    fmt = spec.get("format") or path.suffix.lstrip(".")
    if fmt == "jsonl":
        numbered = list(numbered_jsonl(path))
        rows, lines = [record for _, record in numbered], [number for number, _ in numbered]
        for row, number in zip(rows, lines):
            if not isinstance(row, dict):
                raise XltError(f"{path} line {number} is not a JSON object; each line of a jsonl dataset is one record")
    elif fmt == "txt":  # plain text, one sentence per line (a corpus): the line is `text`
        numbered = [(n, line.strip()) for n, line in enumerate(read_text(path).split("\n"), start=1) if line.strip()]
        rows, lines = [{"text": line} for _, line in numbered], [n for n, _ in numbered]
    elif fmt in ("tsv", "csv"):
        rows, lines = _read_delimited(name, spec, path, read_text(path), fmt, labelled)
    else:
        raise XltError(f"dataset {name}: unknown format {fmt!r} for {path}; use tsv, csv, jsonl or txt")
    if not rows:
        raise XltError(
            f"dataset {name}: {path} has no rows (an empty {split} split for {lang}); fill the file, or drop "
            f"{lang} from datasets.{name}.splits"
        )
    return rows, lines


def _read_delimited(
    name: str, spec: dict, path: Path, text: str, fmt: str, labelled: bool
) -> tuple[list[dict], list[int]]:
    delimiter = "\t" if fmt == "tsv" else ","
    quoting = csv.QUOTE_NONE if fmt == "tsv" else csv.QUOTE_MINIMAL
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter, quoting=quoting)
    header = spec.get("header", True)
    columns = None
    rows, lines, start = [], [], 1
    for fields in reader:
        line, start = start, reader.line_num + 1  # a quoted field may span lines: a row starts after the last one
        if not fields:
            continue  # blank line
        if header and columns is None:
            columns = fields
            missing = [
                c
                for c in source_columns(spec["task"], name, spec.get("columns"), labelled).values()
                if c not in columns
            ]
            if missing:
                raise XltError(
                    f"{path} line {line} (the header) has no column(s) {missing}; it has {columns}. Add "
                    f"them to the file, or map the fields to its columns with datasets.{name}.columns"
                )
            continue
        if columns is not None and len(fields) != len(columns):
            raise XltError(
                f"{path} line {line} has {len(fields)} fields, the header has {len(columns)}; a field is "
                f"missing or holds a stray {'tab' if fmt == 'tsv' else 'comma'}: fix that line"
            )
        # without a header, columns are addressed by position: {text: 0, text_pair: 1, label: 2}
        rows.append(dict(zip(columns, fields)) if columns is not None else dict(enumerate(fields)))
        lines.append(line)
    return rows, lines


def _read_cls(name: str, spec: dict, lang: str, split: str, root: Path) -> list[dict]:

    if not isinstance(spec["files"], str) or not spec.get("domain"):
        raise XltError(
            f"dataset {name}: format cls needs `files` = the cls-acl10-unprocessed directory and "
            f"`domain` (books, dvd or music)"
        )
    directory = Path(spec["files"])
    return load_cls(directory if directory.is_absolute() else root / directory, lang, spec["domain"], split)


def _read_hf(name: str, spec: dict, lang: str, split: str) -> list[dict]:
    import datasets  # heavy import, only for real runs

    hf_split = spec.get("split_names", {}).get(split, split)
    config_name = spec.get("name")
    config_name = config_name.format(lang=lang) if config_name else None
    try:
        ds = datasets.load_dataset(spec["path"], config_name, split=hf_split, revision=spec.get("revision"))
    except Exception as err:  # network, missing config, offline cache miss
        raise XltError(
            f"dataset {name}: cannot load Hugging Face dataset {spec['path']!r} (config {config_name!r}, "
            f"split {hf_split!r}): {err}. Offline? Run `xlt prefetch` where there is internet, "
            f"or declare the data as source: local"
        ) from err
    if spec.get("max_rows"):
        ds = ds.select(range(min(len(ds), int(spec["max_rows"]))))
    return list(ds)
