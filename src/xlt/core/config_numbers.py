"""Numbers in a config that cannot be meant: what `xlt.core.settings.validate` refuses on top of
the schema's ranges, for every key at once.

- A non-finite number (`.nan`, `.inf`) anywhere: YAML spells them, JSON Schema's range keywords
  let NaN through (every comparison with it is false), and no setting means one.
- A float where the schema says integer: jsonschema's draft-6+ `integer` accepts any float with
  a zero fraction, so `sizes.dev: 1.0e+308` passed as a count; `STRICT_INTEGERS` is the type
  checker that refuses floats there.
- An integer outside int64: torch, numpy and the JSON the jobs write cannot hold it.
- A warm-up (`warmup_steps`) as long as the run or longer, where the run's length is set in
  steps (`max_steps`): the learning rate would never reach its peak (`check_warmup`; a run counted
  in epochs is checked when its length is known, by xlt.core.training).
And `message` turns a schema error into one line with the key, the value and the fix.
"""

from __future__ import annotations

import math

from xlt.core.errors import XltError

INT64 = (-(2**63), 2**63 - 1)


def _strict_integer(checker, instance) -> bool:
    return isinstance(instance, int) and not isinstance(instance, bool)


def strict_type_checker(base_checker):
    """`base_checker` with `integer` meaning a whole number written without a point or exponent."""
    return base_checker.redefine("integer", _strict_integer)


def check_numbers(config: dict) -> None:
    """Raise on the first number of `config` no one means (this module's list), naming its key;
    before the schema's errors, so a key's value may still be of the wrong type here."""
    _finite_and_int64(config)
    check_warmup(config)


def _finite_and_int64(value, where: str = "") -> None:
    """Raise on the first non-finite float or out-of-int64 integer in `value` (nested dicts and
    lists), naming its key."""
    if isinstance(value, dict):
        for key, sub in value.items():
            _finite_and_int64(sub, f"{where}.{key}" if where else str(key))
    elif isinstance(value, list):
        for i, sub in enumerate(value):
            _finite_and_int64(sub, f"{where}.{i}")  # the schema errors' notation
    elif isinstance(value, float) and not math.isfinite(value):
        raise XltError(
            f"config error at {where or '(top level)'}: {value} is not a finite number; "
            f"give a finite value in the key's range, or delete the key for its default"
        )
    elif isinstance(value, int) and not isinstance(value, bool) and not INT64[0] <= value <= INT64[1]:
        raise XltError(
            f"config error at {where}: {value} does not fit a 64-bit integer; no count or seed "
            f"is that large; give a value in the key's range, or delete the key for its default"
        )


def check_warmup(config: dict) -> None:
    """Raise where a `training` mapping's effective warmup_steps is not below its effective
    max_steps (> 0). A nested `training` (dual.distill's, a MonoX task's, adapt.curve's) overrides
    the ones above it, as the families merge them: shared, then the family's, then its own."""

    def walk(node, where: str, inherited: dict, origin: dict) -> None:
        if isinstance(node, list):
            for i, item in enumerate(node):
                walk(item, f"{where}.{i}", inherited, origin)
            return
        if not isinstance(node, dict):
            return
        own = node.get("training")
        if isinstance(own, dict):
            here = f"{where}.training" if where else "training"
            inherited = {**inherited, **own}
            origin = {**origin, **{key: f"{here}.{key}" for key in own}}
            warmup, steps = inherited.get("warmup_steps", 0), inherited.get("max_steps", 0)
            whole = type(warmup) is int and type(steps) is int  # else the schema names the type
            if whole and warmup > 0 and steps > 0 and warmup >= steps:
                raise XltError(
                    f"config error at {origin['warmup_steps']}: {warmup} warm-up steps, the run is "
                    f"{steps} steps ({origin['max_steps']}); set {origin['warmup_steps']} within "
                    f"[0, {steps - 1}] (0: warmup_ratio applies)"
                )
        for key, sub in node.items():
            if key != "training":
                walk(sub, f"{where}.{key}" if where else str(key), inherited, origin)

    walk(config, "", {}, {})


def _interval(subschema: dict) -> str:
    """The range a number schema allows, in interval notation, e.g. `(0, 1]`."""
    low = subschema.get("exclusiveMinimum", subschema.get("minimum"))
    high = subschema.get("exclusiveMaximum", subschema.get("maximum"))
    left = "(" if "exclusiveMinimum" in subschema or low is None else "["
    right = ")" if "exclusiveMaximum" in subschema or high is None else "]"
    return f"{left}{'-inf' if low is None else low}, {'inf' if high is None else high}{right}"


_RANGE = {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"}


def _float_for_integer(err) -> bool:
    kinds = err.validator_value if isinstance(err.validator_value, list) else [err.validator_value]
    return err.validator == "type" and "integer" in kinds and isinstance(err.instance, float)


def message(err, where: str) -> str:
    """One line for a jsonschema error at `where`: the key, the bad value and what to write instead."""
    if err.validator in ("oneOf", "anyOf"):  # e.g. a train size: an integer or `all`
        floats = [sub for sub in err.context if _float_for_integer(sub)]
        if floats:
            return message(floats[0], where)
    if _float_for_integer(err):
        return (
            f"config error at {where}: {err.instance!r} is a float where a whole number (a count, a "
            f"step, a seed) is meant; write an integer without a decimal point or exponent"
        )
    if err.validator in _RANGE:
        interval = _interval(err.schema)
        return f"config error at {where}: {err.instance!r} is outside {interval}; set {where} within {interval}"
    return f"config error at {where}: {err.message}"
