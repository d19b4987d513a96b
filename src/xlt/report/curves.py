"""Training curves of a family's runs: loss, learning rate and dev score against the step.

Every training run writes `<metrics>.curve.csv` beside its metrics JSON (xlt.core.metrics,
columns step, loss, lr, dev_score); this draws all of a family's runs in one figure, one line
per run, so a diverged or unfinished run stands out in the report.
"""

from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

from xlt.core.errors import XltError  # noqa: E402
from xlt.core.metrics import CURVE_COLUMNS  # noqa: E402
from xlt.report.figures import save  # first: it selects the headless backend

PANELS = (("loss", "training loss"), ("lr", "learning rate"), ("dev_score", "dev score"))


def read_curves(paths: list[str | Path]) -> pd.DataFrame:
    """The curves of the given CSV files, with a `run` column (the run directory's name)."""
    frames = []
    for path in map(Path, paths):
        if not path.is_file():
            raise XltError(
                f"training curve {path} not found; it is written beside the run's metrics by the training verb"
            )
        try:
            frame = pd.read_csv(path)
        except (pd.errors.EmptyDataError, pd.errors.ParserError) as err:
            raise XltError(
                f"{path} is not a training curve CSV ({err}); rerun the training job to rewrite it"
            ) from None
        missing = [column for column in CURVE_COLUMNS if column not in frame]
        if missing:
            raise XltError(f"{path} lacks the column(s) {missing}; rerun the training job to rewrite it")
        if frame.empty:
            raise XltError(f"{path} has no rows: the run logged no step; rerun the training job to rewrite it")
        for column in CURVE_COLUMNS:
            try:
                frame[column] = pd.to_numeric(frame[column])
            except (ValueError, TypeError):
                raise XltError(
                    f"{path}: column {column} holds a value that is not a number; rerun the training job to rewrite it"
                ) from None
        frames.append(frame.assign(run=path.parent.name))
    if not frames:
        raise XltError("no training curves given")
    return pd.concat(frames, ignore_index=True)


def plot_curves(curves: pd.DataFrame, out: str | Path, title: str = ""):
    """One panel per quantity (loss, learning rate, dev score), one line per run."""
    fig, axes = plt.subplots(1, len(PANELS), figsize=(5 * len(PANELS), 4), squeeze=False)
    for ax, (column, label) in zip(axes[0], PANELS):
        for run, rows in curves.groupby("run", sort=True):
            points = rows.dropna(subset=[column])
            ax.plot(
                points["step"], points[column], marker="." if column == "dev_score" else None, label=run, linewidth=1
            )
        ax.set_xlabel("optimiser step")
        ax.set_ylabel(label)
    if curves["run"].nunique() <= 12:  # a legend of a larger sweep would hide the curves
        axes[0][-1].legend(fontsize="x-small")
    fig.suptitle(title or "Training curves")
    return save(fig, out)
