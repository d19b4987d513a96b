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
