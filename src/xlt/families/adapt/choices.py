"""The adapt family's fixed choice lists, which its flags offer and its modules check. Free of heavy
imports (no torch): building the verbs' parsers imports it."""

from __future__ import annotations

ADAPT_SELECT = ("best", "last")  # xlt.families.adapt.adaptation: which checkpoint an adaptation keeps
SIMILARITY_LEVELS = ("sentence", "word")  # xlt.families.adapt.similarity
