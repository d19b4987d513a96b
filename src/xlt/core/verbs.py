"""`Verb`: one `xlt` subcommand, as the command modules of every layer declare it in `VERBS`,
each module naming its heading of `xlt --help` (a `VerbGroup`) in `GROUP`; and what several
verbs' parsers share: the run flags (`add_run_arguments`), --config (`add_config_argument`), the
--out of a verb that writes a metrics JSON (`add_metrics_out_argument`), the --model of a verb that
loads a checkpoint (`add_model_argument`), the `KEY=VALUE` type (`key_value`) and a repeatable
option of such items (`key_values`).

A verb names the function that runs it by dotted path ("xlt.families.freeze_depth.finetune:main"),
so a `commands.py` declares flags and paths only and imports nothing heavy, while the module
that does the work imports torch and the rest at its top: `xlt --help` imports no such module,
and a job imports only its own verb's.

It lives at the bottom layer so that a layer's `commands.py` can declare its verbs without
importing `xlt.cli` (which sits above every layer and collects them)."""

from __future__ import annotations

import argparse
import importlib
import re
from dataclasses import dataclass
from typing import Callable

from xlt.core.monitor import missing

DOTTED_PATH = re.compile(r"xlt(?:\.\w+)+:[A-Za-z]\w*")


@dataclass(frozen=True)
class Verb:
    """`target`: "package.module:function", the function that runs the verb on its parsed
    arguments (its return value: the exit status, or None for 0); `add_arguments` declares
    the verb's flags on its parser."""

    target: str
    help: str
    add_arguments: Callable[[argparse.ArgumentParser], None]

    def __post_init__(self):
        if not DOTTED_PATH.fullmatch(self.target):
            raise ValueError(f"Verb target {self.target!r}: give the function as 'xlt.package.module:function'")

    def function(self) -> Callable[[argparse.Namespace], int | None]:
        """The verb's function, its module imported now."""
        module, _, name = self.target.partition(":")
        return getattr(importlib.import_module(module), name)

    def run(self, args: argparse.Namespace) -> int | None:
        return self.function()(args)


@dataclass(frozen=True)
class VerbGroup:
    """A heading of `xlt --help`. Headings come in `rank` order; the families' (one rank) in the
    order of the verb modules."""

    rank: int
    title: str
    description: str


WORKFLOW = VerbGroup(
    0, "workflow", "check a config, list its sweep, write the rehearsal config, fork a run's jobs from one process"
)
DATA = VerbGroup(1, "data", "build the demo model, download, prepare the datasets")
EVALUATION = VerbGroup(2, "shared evaluation", "score any encoder, trained by any family or pretrained")
ANALYSIS = VerbGroup(4, "analysis and report", "tables, figures, paired tests, checks over the families' metrics")
COST = VerbGroup(5, "cost", "what a config's jobs will cost before the run, and what they cost after")


def family_group(family: str, purpose: str) -> VerbGroup:
    """The heading of one experiment family's verbs (between shared evaluation and analysis)."""
    return VerbGroup(3, f"{family} family", purpose)


# The flags of a run's job that many verbs take, declared by `add_run_arguments` only: one help text each.
RUN_FLAGS = {
    "--run-id": "the run's id: run_id of its metrics file, the row key of `xlt aggregate`'s tables",
    "--axes": 'the run\'s sweep values as a JSON object, e.g. \'{"model": "mbert"}\', stored as meta.axes of its '
    "metrics (columns in `xlt aggregate`; the workflow passes them)",
    "--out-metrics": "the metrics JSON to write",
    "--device": "torch device: auto (CUDA when available, else CPU), cpu, cuda or cuda:N",
    "--tensorboard": "true: write TensorBoard event files (loss, learning rate, evaluations, HParams) into the run's "
    "directory as it trains (config: monitor.tensorboard; needs the monitor extra)",
}


def add_run_arguments(
    parser: argparse.ArgumentParser, *flags: str, run_id_default: str | None = None, axes_default: str | None = None
) -> None:
    """Declare the run flags `flags` (keys of RUN_FLAGS) on a verb's parser, in that order.
    `run_id_default` says where the run id comes from without --run-id (None: --run-id is
    required); `axes_default` where meta.axes comes from without --axes (None: empty)."""
    unknown = [flag for flag in flags if flag not in RUN_FLAGS]
    if unknown:
        raise ValueError(f"add_run_arguments: unknown flags {unknown}; known: {list(RUN_FLAGS)}")
    for flag in flags:
        text = RUN_FLAGS[flag]
        if flag == "--run-id":
            parser.add_argument(
                flag,
                default=None,
                required=run_id_default is None,
                help=f"{text} (default: {run_id_default})" if run_id_default else f"{text} (required)",
            )
        elif flag == "--axes":  # a verb that derives its axes tells "not given" (None) from "{}"
            parser.add_argument(
                flag, default="{}" if axes_default is None else None, help=f"{text} (default: {axes_default or 'none'})"
            )
        elif flag == "--out-metrics":
            parser.add_argument(flag, required=True, help=text)
        elif flag == "--tensorboard":
            parser.add_argument(
                flag, type=monitor_switch, default=False, metavar="{true,false}", help=f"{text} (default false)"
            )
        else:
            parser.add_argument(flag, default="auto", help=text)


def add_metrics_out_argument(parser: argparse.ArgumentParser, **settings) -> None:
    """--out of a verb whose output is one metrics JSON, in --out-metrics' words; `settings` go to
    its add_argument besides (e.g. type=Path)."""
    parser.add_argument("--out", required=True, help=RUN_FLAGS["--out-metrics"], **settings)


def add_model_argument(parser: argparse.ArgumentParser, what: str = "") -> None:
    """--model, the checkpoint a verb loads: a hub id or a local directory; `what` ends its help
    (which model, e.g. "(the sweep's pretrained model)")."""
    parser.add_argument("--model", required=True, help=f"hub id or local directory {what}".rstrip())


def add_config_argument(parser: argparse.ArgumentParser, what: str = "", *, required: bool = True) -> None:
    """--config, the workflow config (YAML) a verb reads; `what` ends its help: what the verb does with
    it (a verb whose --config has a default of its own declares its flag itself)."""
    parser.add_argument("--config", required=required, help=f"a workflow config (YAML) {what}".rstrip())


def parse_bool(text: str) -> bool:
    """A boolean flag value as the plan writes it (True/False, true/false), or yes/no, 1/0, on/off."""
    value = text.strip().lower()
    if value in ("true", "yes", "1", "on"):
        return True
    if value in ("false", "no", "0", "off"):
        return False
    raise argparse.ArgumentTypeError(f"expected true or false, got {text!r}")


def monitor_switch(text: str) -> bool:
    """--tensorboard's value; true without the tensorboard package stops the verb before it loads anything."""
    on = parse_bool(text)
    if on:
        problem = missing("--tensorboard true", "--tensorboard false")
        if problem:
            raise argparse.ArgumentTypeError(problem)
    return on


def key_value(shape: str, example: str) -> Callable[[str], tuple[str, str]]:
    """An argparse `type=` for `KEY=VALUE` items (--table FAMILY=CSV, --bitext SPLIT=FILE, ...): an
    item parses to its (key, value) pair; one without both sides is a usage error naming the
    expected shape and an example, before the verb runs."""

    def parse(text: str) -> tuple[str, str]:
        key, sep, value = text.partition("=")
        if not sep or not key or not value:
            raise argparse.ArgumentTypeError(f"{text!r}: give {shape}, e.g. {example}")
        return key, value

    parse.__name__ = shape  # argparse's own messages name the type
    return parse


def key_values(shape: str, example: str) -> dict:
    """The `add_argument` settings of a repeatable `KEY=VALUE` option (--table FAMILY=CSV, ...), to
    pass as `**key_values(shape, example)` beside the flag and its help: each item parsed by
    `key_value`, the option's value the list of (key, value) pairs in order, [] when not given."""
    return {"action": "append", "default": [], "metavar": shape, "type": key_value(shape, example)}
