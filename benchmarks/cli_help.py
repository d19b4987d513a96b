"""How long `xlt --help` takes (the newcomer's first command; the target is under 1 s) and what
it imports: median wall time over fresh processes, next to the bare interpreter's start-up and
a light job's parser (`xlt aggregate --help`), with the load average.

    PYTHONPATH=src python benchmarks/cli_help.py [--repeats 7]

Prints a Markdown table; a figure, not a pass/fail test. The heavy modules column lists what of
torch, transformers, pandas, matplotlib and sklearn the full parser imported (none expected).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time

from machine import load_average

HEAVY = ("torch", "transformers", "pandas", "matplotlib", "sklearn")
COMMANDS = {
    "python -c pass (interpreter start-up)": ["-c", "pass"],
    "xlt --help": ["-m", "xlt.cli", "--help"],
    "xlt aggregate --help": ["-m", "xlt.cli", "aggregate", "--help"],
}


def wall_times(argv: list[str], repeats: int) -> list[float]:
    """Wall seconds of `repeats` fresh `python argv` processes (output discarded)."""
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        subprocess.run([sys.executable, *argv], check=True, stdout=subprocess.DEVNULL)
        times.append(time.perf_counter() - started)
    return times


def heavy_imports() -> list[str]:
    """The heavy modules building the full parser imports."""
    code = (
        f"import sys; from xlt.cli import build_parser; build_parser(); "
        f"print(','.join(m for m in {HEAVY!r} if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout.strip()
    return out.split(",") if out else []


def run(repeats: int, echo=print) -> dict:
    results = {"load_average": load_average(), "heavy_imports": heavy_imports(), "commands": {}}
    echo(f"load average {results['load_average']}; {repeats} fresh processes each\n")
    echo("| command | median s | min s | max s |")
    echo("|---|---|---|---|")
    for label, argv in COMMANDS.items():
        times = wall_times(argv, repeats)
        results["commands"][label] = {"median_s": statistics.median(times), "min_s": min(times), "max_s": max(times)}
        echo(f"| {label} | {statistics.median(times):.3f} | {min(times):.3f} | {max(times):.3f} |")
    echo(f"\nheavy modules imported by the full parser: {', '.join(results['heavy_imports']) or 'none'}")
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="benchmarks/cli_help.py", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeats", type=int, default=7, help="fresh processes per command (default 7)")
    run(parser.parse_args(argv).repeats)
    return 0


if __name__ == "__main__":
    sys.exit(main())
