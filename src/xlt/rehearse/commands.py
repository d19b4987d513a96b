"""`xlt rehearse`'s flags (the verb runs from xlt.rehearse.workdir)."""

from __future__ import annotations

from xlt.core.verbs import WORKFLOW, Verb

GROUP = WORKFLOW


def _arguments(p):
    p.add_argument("--config", required=True, help="the paper-scale config to rehearse (e.g. config/paper.yaml)")
    p.add_argument("--out", required=True, help="the rehearsal's working directory: stand-ins, config.yaml, results/")
    p.add_argument(
        "--cut-down",
        action="store_true",
        help="one seed, two freeze depths, the first values of other axes: every rule, fewest jobs",
    )


VERBS = {
    "rehearse": Verb(
        "xlt.rehearse.workdir:main",
        "The paper sweep's config on offline stand-in models and data (runs every rule in minutes)",
        _arguments,
    )
}
