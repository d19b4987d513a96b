"""Verbs of the report layer every family shares: the tidy metrics table, its figures and the training
curves; and the flags of a verb that draws a figure (`add_figure_arguments`, a family's plot verbs too)."""

from __future__ import annotations

from xlt.core.verbs import ANALYSIS, Verb

GROUP = ANALYSIS


def add_figure_arguments(p, default_title: str) -> None:
    """--out and --title of a verb that draws one figure; `default_title` says what the title is
    without --title."""
    p.add_argument("--out", required=True, help="PNG path")
    p.add_argument("--title", default="", help=f"figure title (default: {default_title})")


def _aggregate_arguments(p):
    p.add_argument("metrics", nargs="+", help="metrics JSON files")
    p.add_argument("--out", required=True, help="CSV path: one row per run, language and metric")
    p.add_argument(
        "--summary",
        default=None,
        help="CSV path for the rows over several languages (lang avg, "
        "multilingual); default: OUT with _summary before .csv",
    )
    p.add_argument(
        "--resamples", type=int, default=1000, help="bootstrap resamples per interval (config statistics.resamples)"
    )
    p.add_argument("--seed", type=int, default=0, help="bootstrap seed (config statistics.seed)")
    p.add_argument("--confidence", type=float, default=0.95, help="interval level (config statistics.confidence)")


def _plot_arguments(p):
    # the kinds are checked when the verb runs: listing them here would import every family's
    # plotting module (matplotlib) and make `xlt --help` slow
    p.add_argument("kind", help="a plot kind of one family's plots.PLOTS, e.g. accuracy-vs-depth")
    p.add_argument("--table", required=True, help="tidy CSV from `xlt aggregate`")
    add_figure_arguments(p, "the plot kind's own")


def _plot_curves_arguments(p):
    p.add_argument(
        "curves", nargs="+", help="training curve CSVs (<run>/train.curve.csv, written beside a run's metrics)"
    )
    add_figure_arguments(p, "'Training curves'")


VERBS = {
    "aggregate": Verb(
        "xlt.report.write_tables:main",
        "Collect metrics JSON files into one tidy CSV (run axes + dimensions + metric + value)",
        _aggregate_arguments,
    ),
    "plot": Verb("xlt.report.draw_plot:main", "Draw one figure from a tidy metrics table", _plot_arguments),
    "plot-curves": Verb(
        "xlt.report.draw_curves:main",
        "Draw the training curves (loss, learning rate, dev score) of a family's runs in one figure",
        _plot_curves_arguments,
    ),
}
