"""Layer schemes of an MLM adaptation run, fixed or gradually unfrozen: parsing and the layer
numbers, free of torch (the plan and `xlt config check` read them; xlt.families.adapt.layer_schemes
applies them to a model).

Numbering (seed 003, Table 2 and Section 3.2). Encoder layers are numbered 1..L (L = 12 for
mBERT); 0 names the embedding output. A trained range "A-B" names the *boundaries* of the
trained block as hidden-state indices: it trains encoder layers A+1 .. B, i.e. the layers
whose outputs are hidden states A+1 .. B. This is the only reading under which the seed's
four schemes "0-12", "6-12", "9-12", "11-12" are, as its Section 3.2 says, training "the
last 12, 6, 3, 1 layers":

    "0-12"   layers 1..12  (all layers; embeddings still frozen)
    "6-12"   layers 7..12  (last 6)
    "9-12"   layers 10..12 (last 3)
    "11-12"  layer 12      (last 1)

Valid ranges satisfy 0 <= A < B <= L. The word/position embeddings are never trained
("The initial embedding layer of multi-lingual BERT is never trained").

Gradual unfreezing (ULMFiT-style, seed: "We unfreeze 4 layers consecutively from the end at
every epoch for three epochs"): the top `start` layers are trainable at first and `step`
more are unfrozen from the top at every stage; a stage is `every_epochs` epochs or
`every_steps` optimisation steps. Stage k trains the top min(L, start + k*step) layers.
The seed's setting is {gradual: {every_epochs: 1, step: 4, start: 4}}: layers 9..12 in
epoch 0, 5..12 in epoch 1, 1..12 from epoch 2 on.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Union

from xlt.core.errors import XltError


@dataclass(frozen=True)
class RangeScheme:
    """Train encoder layers start+1 .. end (1-based), see the module docstring."""

    start: int
    end: int

    @property
    def name(self) -> str:
        return f"{self.start}-{self.end}"


@dataclass(frozen=True)
class GradualScheme:
    """Top `start` layers first, `step` more from the top every `every_steps` steps or `every_epochs` epochs."""

    start: int
    step: int
    every_steps: int | None = None
    every_epochs: int | None = None

    @property
    def name(self) -> str:
        unit = f"{self.every_steps}steps" if self.every_steps is not None else f"{self.every_epochs}epochs"
        return f"gradual-start{self.start}-step{self.step}-every{unit}"

    def stage(self, step: int, epoch: int) -> int:
        if self.every_steps is not None:
            return step // self.every_steps
        return epoch // self.every_epochs


Scheme = Union[RangeScheme, GradualScheme]

_RANGE = re.compile(r"^\s*(\d+)\s*-\s*(\d+)\s*$")
_GRADUAL_KEYS = {"every_steps", "every_epochs", "step", "start"}
_EXAMPLES = "e.g. '6-12' (trains layers 7..12) or {gradual: {every_epochs: 1, step: 4, start: 4}}"


def _positive_int(value, key: str, scheme) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise XltError(f"layer scheme {scheme!r}: '{key}' must be a positive integer, got {value!r}")
    return value


def parse_scheme(scheme: str | dict | RangeScheme | GradualScheme, num_layers: int) -> Scheme:
    """A scheme from its config form, checked against a model with `num_layers` layers."""
    if isinstance(scheme, (RangeScheme, GradualScheme)):
        _check(scheme, num_layers, scheme)
        return scheme
    if isinstance(scheme, str):
        match = _RANGE.match(scheme)
        if not match:
            raise XltError(f"layer scheme {scheme!r} is not a range 'A-B' or a gradual mapping; {_EXAMPLES}")
        parsed: Scheme = RangeScheme(int(match.group(1)), int(match.group(2)))
    elif isinstance(scheme, dict):
        if set(scheme) != {"gradual"} or not isinstance(scheme["gradual"], dict):
            raise XltError(f"layer scheme {scheme!r} must be a mapping with the single key 'gradual'; {_EXAMPLES}")
        cfg = scheme["gradual"]
        unknown = set(cfg) - _GRADUAL_KEYS
        if unknown:
            raise XltError(
                f"layer scheme {scheme!r}: unknown key(s) {sorted(unknown)}; allowed {sorted(_GRADUAL_KEYS)}"
            )
        if ("every_steps" in cfg) == ("every_epochs" in cfg):
            raise XltError(f"layer scheme {scheme!r}: give exactly one of 'every_steps' or 'every_epochs'")
        if "step" not in cfg:
            raise XltError(f"layer scheme {scheme!r}: 'step' (layers unfrozen per stage) is required")
        step = _positive_int(cfg["step"], "step", scheme)
        parsed = GradualScheme(
            start=_positive_int(cfg.get("start", step), "start", scheme),
            step=step,
            every_steps=_positive_int(cfg["every_steps"], "every_steps", scheme) if "every_steps" in cfg else None,
            every_epochs=_positive_int(cfg["every_epochs"], "every_epochs", scheme) if "every_epochs" in cfg else None,
        )
    else:
        raise XltError(f"layer scheme {scheme!r} has type {type(scheme).__name__}; {_EXAMPLES}")
    _check(parsed, num_layers, scheme)
    return parsed


def _check(parsed: Scheme, num_layers: int, original) -> None:
    if isinstance(parsed, RangeScheme):
        if not 0 <= parsed.start < parsed.end <= num_layers:
            raise XltError(
                f"layer scheme {original!r} is out of range for a model with {num_layers} layers; "
                f"use 'A-B' with 0 <= A < B <= {num_layers} (trains layers A+1..B, e.g. '0-{num_layers}' = all)"
            )
    elif not 1 <= parsed.start <= num_layers:
        raise XltError(
            f"layer scheme {original!r}: 'start' {parsed.start} must be between 1 and {num_layers} "
            f"(the number of layers of the model)"
        )


def trainable_layers(scheme: Scheme, step: int, epoch: int, num_layers: int) -> set[int]:
    """1-based encoder layers trained at optimisation step `step` (0-based) of epoch `epoch` (0-based)."""
    if step < 0 or epoch < 0:
        raise ValueError(f"step and epoch count from 0, got step={step}, epoch={epoch}")
    _check(scheme, num_layers, scheme.name)
    if isinstance(scheme, RangeScheme):
        return set(range(scheme.start + 1, scheme.end + 1))
    top = min(num_layers, scheme.start + scheme.stage(step, epoch) * scheme.step)
    return set(range(num_layers - top + 1, num_layers + 1))


def run_label(scheme: Scheme) -> str:
    """Run-id part of a scheme: layers9-12, gradual-start4-step4-every1epochs."""
    return f"layers{scheme.name}" if isinstance(scheme, RangeScheme) else scheme.name


def scheme_arg(spec: str | dict) -> str:
    """A scheme's config form as the value of `xlt adapt-mlm --scheme` (a mapping as JSON)."""
    return json.dumps(spec) if isinstance(spec, dict) else spec


def parse_scheme_arg(text: str) -> str | dict:
    """The --scheme value back in its config form: a range string, or a JSON mapping for gradual unfreezing."""
    text = text.strip()
    if text.startswith("{"):
        try:
            return json.loads(text)
        except json.JSONDecodeError as err:
            raise XltError(f"--scheme {text!r} is not valid JSON ({err})") from None
    return text
