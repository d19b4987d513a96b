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


# what `snakemake --report` appends to every caption and to the front page before rendering
# (snakemake/report/__init__.py, `rst_links`): one link target per category and result file
RST_LINKS = """

.. _Workflow: javascript:show_panel('workflow')
.. _Statistics: javascript:show_panel('statistics')
{% for name in categories %}
.. _{{ name }}: javascript:app.showCategory('{{ name|urlencode }}')
{% endfor %}
{% for target in files %}
.. _{{ target }}: javascript:app.showResultInfo('{{ target|urlencode }}')
{% endfor %}
"""


def render(template: str, config: dict, categories: list[str] = (), files: list[str] = (), **wildcards) -> str:
    snakemake = SimpleNamespace(config=config, wildcards=Wildcards(wildcards))
    return SNAKEMAKE_REPORT_ENV.from_string(template + RST_LINKS).render(
        snakemake=snakemake, categories=sorted(categories), files=list(files)
    )


def system_messages(text: str) -> list[str]:
    """Every docutils system message the report would show (WARNING and up, docutils' default
    report level, which snakemake keeps: each is a red box in the page)."""
    stream = io.StringIO()
    docutils.core.publish_parts(
        text, writer="html", settings_overrides={"report_level": 2, "halt_level": 5, "warning_stream": stream}
    )
    return [line for line in stream.getvalue().splitlines() if line.strip()]
