"""Render report text as `snakemake --report` does: Jinja with its environment, then docutils.

Snakemake renders captions and the front page with ``Environment(trim_blocks=True,
lstrip_blocks=True)``, which removes the newline after every block tag; a plain
``jinja2.Template`` keeps it, so a page can be valid there and broken in the report."""
from __future__ import annotations

import io
from types import SimpleNamespace

import docutils.core
import jinja2

SNAKEMAKE_REPORT_ENV = jinja2.Environment(trim_blocks=True, lstrip_blocks=True)


class Wildcards(dict):
    """snakemake.wildcards: a Namedlist that captions read with ["name"] and .keys()."""


def render(template: str, config: dict, **wildcards) -> str:
    snakemake = SimpleNamespace(config=config, wildcards=Wildcards(wildcards))
    return SNAKEMAKE_REPORT_ENV.from_string(template).render(snakemake=snakemake, categories={}, files={})


def system_messages(text: str) -> list[str]:
    """Every docutils system message (INFO and up) the text produces; the report prints those
    from WARNING up as red boxes in the page."""
    stream = io.StringIO()
    docutils.core.publish_parts(text, writer="html",
                                settings_overrides={"report_level": 1, "halt_level": 5, "warning_stream": stream})
    return [line for line in stream.getvalue().splitlines() if line.strip()]
