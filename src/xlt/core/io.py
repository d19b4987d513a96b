"""Small file helpers shared by every command: atomic writes, JSONL, metrics files.

Outputs are written to a temporary file (or directory) in the same directory and renamed
into place, so Snakemake never sees a half-written file as a finished output. Temporaries
are named `.<name>.<random>.tmp`: hidden, and never mistaken for an output.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterable, Iterator

from xlt.core.errors import XltError

_UMASK = os.umask(0)
os.umask(_UMASK)


@contextmanager
def atomic_path(path: str | os.PathLike) -> Iterator[Path]:
    """Yield a temporary path next to `path`; rename it onto `path` only on success."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    os.chmod(tmp, 0o666 & ~_UMASK)  # mkstemp creates 0600; outputs should look like any other file
    tmp_path = Path(tmp)
    try:
        yield tmp_path
        os.replace(tmp_path, path)
    finally:
        if tmp_path.exists():
            tmp_path.unlink()


@contextmanager
def atomic_directory(path: str | os.PathLike) -> Iterator[Path]:
    """Yield a temporary directory next to `path`; on success it replaces `path` as a whole
    (a previous directory there is moved aside, then deleted). A kill at any moment leaves
    the previous directory or none at `path`, never a partly written one; leftovers of
    killed writes are removed by the next write."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    remove_temporaries(path)
    tmp = Path(tempfile.mkdtemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent))
    os.chmod(tmp, 0o777 & ~_UMASK)  # mkdtemp creates 0700
    try:
        yield tmp
        if path.exists():
            # rename(2) replaces only an empty directory: move the old one aside first
            aside = Path(tempfile.mkdtemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent))
            os.replace(path, aside)
            os.replace(tmp, path)
            shutil.rmtree(aside)
        else:
            os.replace(tmp, path)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp)


def remove_temporaries(path: str | os.PathLike) -> None:
    """Delete what killed atomic writes of `path` left behind (`.<name>.<random>.tmp`)."""
    path = Path(path)
    if path.parent.is_dir():
        for tmp in path.parent.glob(f".{path.name}.*.tmp"):
            if tmp.is_dir() and not tmp.is_symlink():
                shutil.rmtree(tmp, ignore_errors=True)
            else:
                tmp.unlink(missing_ok=True)


def write_text(path: str | os.PathLike, text: str) -> None:
    with atomic_path(path) as tmp:
        tmp.write_text(text, encoding="utf-8")


def write_json(path: str | os.PathLike, obj: Any) -> None:
    write_text(path, json.dumps(obj, indent=2, sort_keys=False, default=_json_default) + "\n")


def read_json(path: str | os.PathLike) -> Any:
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def write_jsonl(path: str | os.PathLike, records: Iterable[dict]) -> int:
    n = 0
    with atomic_path(path) as tmp, open(tmp, "w", encoding="utf-8") as f:
        for record in records:
            f.write(json.dumps(record, ensure_ascii=False) + "\n")
            n += 1
    return n


def read_text(path: str | os.PathLike) -> str:
    """A UTF-8 text file's contents; a file in another encoding is a user error that names
    the file and the first line that does not decode."""
    data = Path(path).read_bytes()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        line = data.count(b"\n", 0, err.start) + 1
        column = err.start - (data.rfind(b"\n", 0, err.start) + 1) + 1
        raise XltError(
            f"{path} line {line} is not UTF-8 (byte 0x{data[err.start]:02x} at column {column}); "
            f"re-encode the file as UTF-8, e.g. iconv -f latin1 -t utf-8"
        ) from None


def read_jsonl(path: str | os.PathLike) -> list[dict]:
    return [record for _, record in numbered_jsonl(path)]


def numbered_jsonl(path: str | os.PathLike) -> Iterator[tuple[int, Any]]:
    """(line number, record) for every non-blank line of a JSONL file; a line that is not
    JSON (a truncated file's last line, say) is a user error that names the file and the line."""
    lines = read_text(path).split("\n")  # not splitlines(): U+2028 and friends may sit inside JSON strings
    last = max((i for i, line in enumerate(lines) if line.strip()), default=-1)
    for index, line in enumerate(lines):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as err:
            cut = " (the file ends mid-record: truncated?)" if index == last else ""
            raise XltError(
                f"{path} line {index + 1} is not JSON ({err.msg}){cut}; one JSON object per line is "
                f"expected: rewrite the file (rerun the step that made it)"
            ) from None
        yield index + 1, record


def _json_default(obj: Any) -> Any:
    # numpy / torch scalars end up in metrics; store them as plain numbers.
    if hasattr(obj, "item"):
        return obj.item()
    if hasattr(obj, "tolist"):
        return obj.tolist()
    if isinstance(obj, Path):
        return str(obj)
    raise TypeError(f"not JSON serialisable: {type(obj).__name__}")
