"""`JobSpec`: what one planned job runs, as data: the `xlt` verb and its settings, each under the
name its verb's parser stores it by (argparse's `dest`), in command-line order. A job's flags are
rendered from it (`JobSpec.args`), and the cost plan (xlt.cost) reads its typed values, not the
rendered flags.

A setting renders as `--dest-with-dashes VALUE`; a list as one flag followed by its items (a flag
of several values, `nargs`); a dest given twice as the flag twice (`action="append"`); `ON` as the
bare flag (`action="store_true"`). tests/core/test_job_specs.py parses every planned job's
rendered flags with its verb's own parser and checks that they give back the spec's values, so a
renamed flag or one the verb reads otherwise fails a test instead of changing a plan."""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, Iterable

from xlt.core.errors import XltError
from xlt.core.train_args import TrainArgs, train_setting


class _On:
    """A switch that is set (`action="store_true"`): rendered as the bare flag."""

    def __bool__(self) -> bool:
        return True

    def __repr__(self) -> str:
        return "ON"


ON = _On()
_MISSING = object()


def flag(dest: str) -> str:
    """The command-line flag of a setting: `--` and its dest with dashes."""
    return "--" + dest.replace("_", "-")


@dataclass(frozen=True)
class JobSpec:
    """`verb`: the `xlt` subcommand the job runs; `settings`: (dest, value) pairs in command-line
    order (module docstring)."""

    verb: str
    settings: tuple[tuple[str, Any], ...] = ()

    def __post_init__(self):
        object.__setattr__(self, "settings", tuple((dest, value) for dest, value in self.settings))
        for dest, value in self.settings:
            if not dest.isidentifier():
                raise ValueError(f"JobSpec({self.verb!r}): setting {dest!r} is no argparse dest (a Python name)")
            if value is False or value is None:
                raise ValueError(
                    f"JobSpec({self.verb!r}): setting {dest!r} is {value!r}; leave an unset switch out, "
                    "and give a flag that takes a value its value"
                )

    @property
    def args(self) -> list:
        """The job's flags, rendered in the settings' order (values as given; `Job.cli` quotes them)."""
        out = []
        for dest, value in self.settings:
            if value is ON:
                out.append(flag(dest))
            elif isinstance(value, (list, tuple)):
                out += [flag(dest), *value]
            else:
                out += [flag(dest), value]
        return out

    def has(self, dest: str) -> bool:
        return any(d == dest for d, _ in self.settings)

    def all(self, dest: str) -> list:
        """Every value of `dest`: a list's items, a repeated setting's values, in order."""
        out = []
        for d, value in self.settings:
            if d == dest:
                out += list(value) if isinstance(value, (list, tuple)) else [value]
        return out

    def get(self, dest: str, default: Any = _MISSING) -> Any:
        """The value of `dest`; `default` where the job does not set it (without one, an error)."""
        for d, value in self.settings:
            if d == dest:
                return value
        if default is _MISSING:
            raise XltError(f"a planned `xlt {self.verb}` job sets no {flag(dest)}; its plan must give it")
        return default

    def values(self) -> Iterable:
        """Every value of every setting, lists flattened (the files a job names are among them)."""
        for _, value in self.settings:
            yield from value if isinstance(value, (list, tuple)) else [value]

    def train_args(self) -> TrainArgs:
        """The job's training settings as its verb parses them: the TrainArgs fields it sets, each
        converted as the training verbs' parser converts its flag (xlt.core.train_args), the
        others at TrainArgs' defaults, which are that parser's."""
        given = {dest: value for dest, value in self.settings}  # a repeated flag: argparse keeps the last
        return TrainArgs(**{f.name: train_setting(f.name, given[f.name]) for f in fields(TrainArgs) if f.name in given})
