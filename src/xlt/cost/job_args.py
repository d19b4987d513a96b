"""A planned job's other `xlt` arguments read back: the values after a flag. The plan reads a job's
training settings with the training verbs' own parser (xlt.cost.estimate.training_settings); the
model, data files, --freeze-depth and the flags the families' cost hooks read still come through
here, until a job carries them as typed fields (issue 38)."""

from __future__ import annotations


def values(args: list[str], flag: str) -> list[str]:
    """Every value given after `flag`, as strings."""
    return [str(args[i + 1]) for i, a in enumerate(args[:-1]) if a == flag]


def value(args: list[str], flag: str, default):
    """The first value after `flag`, of `default`'s type when that is a number, else `default`."""
    found = values(args, flag)
    return (
        type(default)(float(found[0]))
        if found and isinstance(default, (int, float))
        else (found[0] if found else default)
    )
