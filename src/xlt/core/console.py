"""What an `xlt` job prints: plain lines in a log file, a progress bar at a terminal.

A Snakemake or SLURM job log is a file: there ANSI colour codes and tqdm bars (redrawn with
carriage returns) turn into noise, and transformers' LOAD REPORT (a multi-line table printed by
every `from_pretrained` that leaves weights missing or unused) buries the training lines. So when
the output is not a terminal, `configure()` switches progress bars and colours off and folds the
report into one line. Kept free of heavy imports: the CLI calls it before any verb runs.
"""

from __future__ import annotations

import logging
import os
import re
import sys
from datetime import timedelta

ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
# environment switches honoured by tqdm (>= 4.66), huggingface_hub, datasets and colour-aware tools
QUIET_ENV = {
    "TQDM_DISABLE": "1",
    "HF_HUB_DISABLE_PROGRESS_BARS": "1",
    "HF_DATASETS_DISABLE_PROGRESS_BARS": "1",
    "NO_COLOR": "1",
}
# the loggers that print transformers' load report (from_pretrained of models and of their heads)
_LOAD_REPORT_LOGGERS = ("transformers.modeling_utils",)
_MAX_KEYS = 4  # keys named per status in the one-line report; the rest are counted


def interactive() -> bool:
    """True when a person watches: stdout and stderr are both terminals."""
    return all(stream is not None and stream.isatty() for stream in (sys.stdout, sys.stderr))


def configure() -> None:
    """Plain output for a log file (see the module docstring); nothing changes at a terminal."""
    if interactive():
        return
    for name, value in QUIET_ENV.items():
        os.environ.setdefault(name, value)
    for name in _LOAD_REPORT_LOGGERS:
        logger = logging.getLogger(name)
        if not any(isinstance(f, OneLineLoadReport) for f in logger.filters):
            logger.addFilter(OneLineLoadReport())


# libraries that print their records with a handler of their own; transformers also passes them
# on to the root logger when CI=true (transformers.utils.logging), where xlt's handler would
# print every line a second time
_OWN_HANDLER_LIBRARIES = ("transformers",)


class PrintedByLibrary(logging.Filter):
    """At the root logger's handlers: drops a record that its library's own handler prints."""

    def filter(self, record: logging.LogRecord) -> bool:
        top = record.name.partition(".")[0]
        return not (top in _OWN_HANDLER_LIBRARIES and logging.getLogger(top).handlers)


def print_library_records_once() -> None:
    """Install `PrintedByLibrary` on the root logger's handlers (after logging.basicConfig)."""
    for handler in logging.getLogger().handlers:
        if not any(isinstance(f, PrintedByLibrary) for f in handler.filters):
            handler.addFilter(PrintedByLibrary())


def one_line_load_report(text: str) -> str:
    """transformers' LOAD REPORT (header, Key | Status table, notes) as one line, e.g.
    'BertForSequenceClassification load report from: m/ MISSING (newly initialised):
    classifier.bias, classifier.weight' (one line; wrapped here)."""
    text = ANSI.sub("", text)
    lines = text.splitlines()
    header = lines[0].replace("LOAD REPORT", "load report").strip()
    notes = {}
    for line in lines:
        match = re.match(r"- (\w+):\s*(.*)", line.strip())
        if match:
            notes[match.group(1)] = match.group(2)
    by_status: dict[str, list[str]] = {}
    for line in lines[1:]:
        cells = [cell.strip() for cell in line.split("|")]
        if len(cells) >= 2 and cells[1].isupper() and cells[0] != "Key":
            by_status.setdefault(cells[1], []).append(cells[0])
    parts = []
    for status, keys in by_status.items():
        keys = sorted(keys)  # transformers lists them in set order
        named = ", ".join(keys[:_MAX_KEYS]) + (f" and {len(keys) - _MAX_KEYS} more" if len(keys) > _MAX_KEYS else "")
        why = " (newly initialised)" if status == "MISSING" else " (not used)" if status == "UNEXPECTED" else ""
        parts.append(f"{status}{why}: {named}")
    return " ".join([header, "; ".join(parts)]).strip()


class OneLineLoadReport(logging.Filter):
    """Rewrites a LOAD REPORT record in place into one line (never drops a record)."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        if "LOAD REPORT" in message:
            record.msg, record.args = one_line_load_report(message), ()
        return True


def duration(seconds: float) -> str:
    """0:01:20 for 80 seconds."""
    return str(timedelta(seconds=int(max(0.0, seconds))))


def progress_line(
    step: int, total: int, loss: float, lr: float, samples_per_s: float, elapsed_s: float, eta_s: float
) -> str:
    """'step 40/300 loss 0.6931 lr 4.1e-04 samples/s 812 elapsed 0:00:12 eta 0:01:20': one line
    a user reads in a job log to tell whether a long job is healthy and when it ends."""
    return (
        f"step {step}/{total} loss {loss:.4f} lr {lr:.1e} samples/s {samples_per_s:.0f} "
        f"elapsed {duration(elapsed_s)} eta {duration(eta_s)}"
    )


class _NoBar:
    def update(self, n: int = 1) -> None:
        pass

    def close(self) -> None:
        pass


def progress_bar(total: int, initial: int = 0, desc: str = ""):
    """A tqdm bar at a terminal; in a log file an object whose update/close do nothing."""
    if not interactive():
        return _NoBar()
    from tqdm.auto import tqdm  # deferred: tqdm: only for progress bars

    return tqdm(total=total, initial=initial, desc=desc, dynamic_ncols=True, leave=False)
