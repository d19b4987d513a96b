"""XNLI from its published local files, as normalised records ``{text, text_pair, label}``
(text = premise, text_pair = hypothesis) with the label ids of the Hugging Face ``xnli`` dataset:
entailment=0, neutral=1, contradiction=2.

Three layouts:

* ``XNLI-1.0/xnli.{dev,test}.tsv``: tab-separated with a header row; the columns used are
  ``language``, ``gold_label``, ``sentence1``, ``sentence2`` (others, such as the parses,
  ``pairID`` or ``label1..5``, are ignored). All 15 languages in one file -> `load_xnli_tsv`.
* ``XNLI-MT-1.0/multinli/multinli.train.{lang}.tsv``: header ``premise hypo label``, where the
  label is spelled ``contradictory`` -> `load_xnli_mt_train`.
* XGLUE's ``NLI/{dev,test}.txt`` for one language: no header, ``premise \\t hypothesis \\t label``
  -> `load_xnli_headerless`.

Lines are split on tabs without any quote handling (the files contain unbalanced quotes).
"""

from __future__ import annotations

from pathlib import Path

from xlt.core.errors import XltError

LABEL_IDS = {"entailment": 0, "neutral": 1, "contradiction": 2}
_LABEL_ALIASES = {"contradictory": "contradiction"}  # spelling of the XNLI-MT training files


def label_id(name: str, where: str = "") -> int:
    key = _LABEL_ALIASES.get(name.strip().lower(), name.strip().lower())
    if key not in LABEL_IDS:
        raise XltError(f"{where}unknown NLI label {name!r}; expected one of {', '.join(LABEL_IDS)}")
    return LABEL_IDS[key]


def load_xnli_tsv(path: str | Path, languages: list[str] | None = None) -> dict[str, list[dict]]:
    """{language: records} from ``xnli.dev.tsv`` / ``xnli.test.tsv``, in file order; only
    `languages` when given (XltError if one of them is absent from the file)."""
    header, rows = _read_tsv(path, has_header=True)
    columns = _columns(path, header, ("language", "gold_label", "sentence1", "sentence2"))
    out: dict[str, list[dict]] = {}
    for line_no, row in rows:
        lang = row[columns["language"]]
        if languages is not None and lang not in languages:
            continue
        out.setdefault(lang, []).append(
            _record(row[columns["sentence1"]], row[columns["sentence2"]], row[columns["gold_label"]], path, line_no)
        )
    absent = [lang for lang in (languages or []) if lang not in out]
    if absent:
        raise XltError(f"{path} has no examples for language(s) {absent}; it has {sorted(out)}")
    return out


def load_xnli_mt_train(path: str | Path) -> list[dict]:
    """Records of a ``multinli.train.{lang}.tsv`` file (columns premise, hypo, label)."""
    header, rows = _read_tsv(path, has_header=True)
    columns = _columns(path, header, ("premise", "hypo", "label"))
    return [_record(row[columns["premise"]], row[columns["hypo"]], row[columns["label"]], path, n) for n, row in rows]


def load_xnli_headerless(path: str | Path) -> list[dict]:
    """Records of a headerless ``premise \\t hypothesis \\t label`` file (XGLUE's NLI layout)."""
    _, rows = _read_tsv(path, has_header=False)
    return [_record(row[0], row[1], row[2], path, n) for n, row in rows]


def _record(premise: str, hypothesis: str, label: str, path, line_no: int) -> dict:
    return {
        "text": premise.strip(),
        "text_pair": hypothesis.strip(),
        "label": label_id(label, f"{path} line {line_no}: "),
    }


def _read_tsv(path: str | Path, has_header: bool) -> tuple[list[str], list[tuple[int, list[str]]]]:
    path = Path(path)
    if not path.is_file():
        raise XltError(
            f"XNLI file {path} not found; expected XNLI-1.0/xnli.{{dev,test}}.tsv, "
            f"XNLI-MT-1.0/multinli/multinli.train.{{lang}}.tsv or a premise/hypothesis/label .txt"
        )
    with open(path, encoding="utf-8") as f:
        lines = [(n, line.rstrip("\r\n").split("\t")) for n, line in enumerate(f, start=1) if line.strip()]
    if has_header:
        if not lines:
            raise XltError(f"{path} is empty")
        header, lines = lines[0][1], lines[1:]
    else:
        header = []
    width = len(header) if has_header else 3
    for n, row in lines:
        if len(row) < width:
            raise XltError(f"{path} line {n}: {len(row)} tab-separated column(s), expected {width}")
    return header, lines


def _columns(path, header: list[str], needed: tuple[str, ...]) -> dict[str, int]:
    missing = [c for c in needed if c not in header]
    if missing:
        raise XltError(f"{path}: header has no column(s) {missing}; it has {header}")
    return {c: header.index(c) for c in needed}
