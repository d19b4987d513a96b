"""Verbs of the shared evaluators (transitional: filled when eval-embeddings moves here)."""
VERBS = {}
