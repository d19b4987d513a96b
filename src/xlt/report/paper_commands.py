"""`xlt paper-delta`: ours minus the seed studies' published numbers, as a table and a figure."""

from __future__ import annotations

from xlt.core.verbs import ANALYSIS, Verb, key_value, key_values

GROUP = ANALYSIS


def _arguments(p):
    p.add_argument(
        "tables",
        nargs="+",
        metavar="FAMILY=CSV",
        help="run tables from `xlt aggregate`",
        type=key_value("FAMILY=CSV", "myfamily=results/tables/myfamily.csv"),
    )
    p.add_argument(
        "--model",
        **key_values("NAME=REF", "mbert=bert-base-multilingual-cased"),
        help="a config model name and the hub id or path its jobs load (repeat per model); "
        "published rows match on the loaded model, not the name",
    )
    p.add_argument(
        "--split",
        **key_values("FAMILY=SPLIT", "myfamily=test"),
        help="the evaluation split of a family whose table has no split column (config <family>.eval.split)",
    )
    p.add_argument("--demo", action="store_true", help="a demo run: no overlay, and the figure says why")
    p.add_argument(
        "--rehearsal",
        action="store_true",
        help="a run of `xlt rehearse`'s config: the figure says its values are not results",
    )
    p.add_argument("--out-table", required=True, help="paper_delta CSV path")
    p.add_argument("--out-plot", required=True, help="overlay PNG path")


VERBS = {
    "paper-delta": Verb(
        "xlt.report.paper_delta:main",
        "Ours beside every published number of the seed studies (paper_delta.csv + overlay)",
        _arguments,
    )
}
