"""Verbs of the bottom layer: the config itself (check, show) and its sweep."""

from __future__ import annotations

from xlt.core.verbs import WORKFLOW, Verb, add_config_argument

GROUP = WORKFLOW


def _config_arguments(p):
    p.add_argument(
        "action",
        choices=["check", "show"],
        help="check: validate and say so; show: print the effective config, every default filled in",
    )
    add_config_argument(p)


def _sweep_arguments(p):
    add_config_argument(p, "whose runs to list")


VERBS = {
    "config": Verb(
        "xlt.core.show_config:main",
        "Validate a config (check) or print it with every default filled in (show)",
        _config_arguments,
    ),
    "sweep": Verb(
        "xlt.core.sweep:main",
        "Validate a config and print its sweep: one row per run (`xlt plan` estimates what they cost)",
        _sweep_arguments,
    ),
}
