"""Transitional."""
VERBS = {}
