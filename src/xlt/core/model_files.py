"""What a local model directory (the `save_pretrained` layout) must hold before anything loads it.

transformers does not always refuse an incomplete directory: without tokenizer files
`AutoTokenizer.from_pretrained` builds an empty BERT tokenizer (special tokens only), and
every word then becomes [UNK]. So a directory is checked here first: by `xlt config check`
(and the workflow, before any job) and by every verb that loads a model. Torch-free.

A model reference (a directory or a pinned hub id) becomes `from_pretrained`'s arguments here too
(`pretrained_args`), so xlt.core.models and xlt.core.heads both use it without importing each other.
"""

from __future__ import annotations

from pathlib import Path

CONFIG = "config.json"
# any one of these suffices (single file or the index of a sharded save; safetensors or torch)
WEIGHTS = ("model.safetensors", "model.safetensors.index.json", "pytorch_model.bin", "pytorch_model.bin.index.json")
# a fast tokenizer's tokenizer.json, or the vocabulary of a slow one: WordPiece (BERT, DistilBERT),
# SentencePiece (XLM-R, ...), byte-level BPE (RoBERTa)
TOKENIZER = ("tokenizer.json", "vocab.txt", "sentencepiece.bpe.model", "spiece.model", "vocab.json")
# a hub model pinned to a revision travels on the command line as one `--model` value, `id@revision`
# (a branch, tag or commit), so every loader and the run manifest see the same pin; hub ids
# never contain '@'
REVISION_SEPARATOR = "@"


def pinned_ref(hub_id: str, revision: str | None) -> str:
    """'org/name' + 'v2' -> 'org/name@v2'; no revision: the id as it is."""
    return f"{hub_id}{REVISION_SEPARATOR}{revision}" if revision else hub_id


def split_revision(ref: str) -> tuple[str, str | None]:
    """'org/name@v2' -> ('org/name', 'v2'). A local path (even one with '@' in it) or an id
    without a pin -> (ref, None)."""
    if REVISION_SEPARATOR not in ref or Path(ref).exists():
        return ref, None
    hub_id, _, revision = ref.rpartition(REVISION_SEPARATOR)
    return hub_id, revision or None


def missing_model_files(directory: str | Path, weights: bool = True) -> list[str]:
    """What `directory` lacks of config, weights and tokenizer (empty when complete)."""
    directory = Path(directory)
    missing = []
    if not (directory / CONFIG).is_file():
        missing.append(CONFIG)
    if weights and not any((directory / name).is_file() for name in WEIGHTS):
        missing.append(f"weights ({' or '.join(WEIGHTS[::2])})")
    if not any((directory / name).is_file() for name in TOKENIZER):
        missing.append(f"tokenizer files (any of {', '.join(TOKENIZER)})")
    return missing


def model_files_problem(directory: str | Path, weights: bool = True) -> str | None:
    """One line saying what `directory` lacks and how to fix it, or None when complete."""
    missing = missing_model_files(directory, weights)
    if not missing:
        return None
    return (
        f"model directory {directory} has no {', no '.join(missing)}; copy the missing files from the "
        f"model's source, or save it whole with model.save_pretrained(DIR) and tokenizer.save_pretrained(DIR)"
    )


def resolve_model_path(name_or_path: str) -> str:
    """A local directory as an absolute path; anything else is taken as a hub id (its `@revision`
    pin, if any, removed: see `pretrained_args`)."""
    path = Path(name_or_path)
    return str(path.resolve()) if path.is_dir() else split_revision(name_or_path)[0]


def pretrained_args(name_or_path: str, **kwargs) -> tuple[str, dict]:
    """(what to pass to `from_pretrained`, its keyword arguments): the directory or hub id, and
    the pinned revision of an `id@revision` reference, so every loader loads the same commit.
    trust_remote_code stays off: a sweep must never execute code shipped with weights."""
    revision = None if Path(name_or_path).is_dir() else split_revision(name_or_path)[1]
    pin = {"revision": revision} if revision else {}
    return resolve_model_path(name_or_path), {"trust_remote_code": False, **pin, **kwargs}
