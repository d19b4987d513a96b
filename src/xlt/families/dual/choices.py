"""The dual family's fixed choice lists, which its flags offer and its modules check. Free of heavy
imports (no torch): building the verbs' parsers imports it."""

from __future__ import annotations

from xlt.core.choices import SYMMETRIC_MODES

# symmetric modes a dual encoder may train with: both directions, summed or averaged
DUAL_SYMMETRIC = tuple(mode for mode in SYMMETRIC_MODES if mode != "none")
# the objective axis: LaBSE's additive-margin softmax, or multilingual knowledge distillation from
# a fixed teacher (xlt.families.dual.distill); the first is the default
DUAL_OBJECTIVES = ("additive_margin", "mse_distill")
