"""`Verb`: one `xlt` subcommand, as the command modules of every layer declare it in `VERBS`.

It lives at the bottom layer so that a layer's `commands.py` can declare its verbs without
importing `xlt.cli` (which sits above every layer and collects them)."""
from __future__ import annotations

import argparse
from dataclasses import dataclass
from typing import Callable


@dataclass(frozen=True)
class Verb:
    help: str
    add_arguments: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], None]


def key_value_pairs(values: list[str], flag: str, shape: str, example: str) -> list[tuple[str, str]]:
    """`KEY=VALUE` command-line items (--table FAMILY=CSV, --bitext SPLIT=FILE, ...) in order; an
    item without both sides is an XltError naming the flag, the expected shape and an example."""
    from xlt.core.errors import XltError

    pairs = []
    for value in values:
        key, sep, rest = value.partition("=")
        if not sep or not key or not rest:
            raise XltError(f"{flag} {value!r}: give {shape}, e.g. {example}")
        pairs.append((key, rest))
    return pairs
