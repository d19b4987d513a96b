"""`xlt <verb> ...`: the command line that every Snakemake rule calls.

Verbs live with what they run, in the layer of what they run: `xlt.data.commands` (the demo
model, data, prefetch), `xlt.report.commands` (tables, figures, curves), `xlt.core.commands`
(the config, the sweep), `xlt.evaluate.commands` (the shared embedding evaluator), each family's
`commands.py`, `xlt.report.positive_control.commands`, `xlt.cost.commands`,
`xlt.report.paper_commands` and `xlt.analysis.commands`, which map verb names to `Verb`s in `VERBS`
and name their heading of `xlt --help` in `GROUP` (`xlt.core.verbs`); `job-server` is declared
here, since it runs this module's `main` in its forks (xlt.jobserver). A `Verb` names the
function that runs it by dotted path: those modules declare flags only and import nothing heavy,
so collecting them is cheap, and a job imports its own verb's module only. Every verb runs on
its own, outside Snakemake, and prints the exact command line first so a single job can be
rerun by hand from its log.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import os
import shlex
import sys
import time

from xlt import jobserver
from xlt.core import console, metrics, registry
from xlt.core.errors import XltError
from xlt.core.job_client import VARIABLE, run_remote
from xlt.core.verbs import WORKFLOW, Verb, VerbGroup
from xlt.core.version import version_string

SHARED_BEFORE = ("xlt.data.commands", "xlt.report.commands", "xlt.core.commands", "xlt.evaluate.commands")
SHARED_AFTER = (
    "xlt.report.positive_control.commands",
    "xlt.cost.commands",
    "xlt.report.paper_commands",
    "xlt.analysis.commands",
    "xlt.rehearse.commands",
)


def verb_modules() -> tuple[str, ...]:
    """Every layer's commands module, each registered family's among them (xlt.core.registry)."""
    families = (f"{registry.PACKAGE}.{family}.commands" for family in registry.usable()[0])
    return (*SHARED_BEFORE, *families, *SHARED_AFTER)


def _declared() -> list[tuple[str, VerbGroup, dict[str, Verb]]]:
    """(module, heading, verbs) of every commands module, in verb_modules' order: a family's from
    its contract (xlt.core.family: GROUP or its default heading), the shared ones their own GROUP.
    A family that does not meet its contract is left out (`xlt --help` says why, main)."""
    families = {f"{registry.PACKAGE}.{name}.commands": registry.family(name) for name in registry.usable()[0]}
    out = []
    for module_name in verb_modules():
        if module_name in families:
            out.append((module_name, families[module_name].group, dict(families[module_name].verbs)))
        else:
            module = importlib.import_module(module_name)
            out.append((module_name, module.GROUP, module.VERBS))
    return out


def verbs() -> dict[str, Verb]:
    out = dict(VERBS)
    for module_name, _, declared in _declared():
        for name, verb in declared.items():
            if name in out:
                raise XltError(f"verb {name!r} is defined twice ({module_name}); rename one")
            out[name] = verb
    return out


def verb_groups() -> dict[VerbGroup, list[str]]:
    """The headings of `xlt --help` in order, each with its verbs (a module's GROUP holds all of
    its VERBS)."""
    groups: dict[VerbGroup, list[str]] = {WORKFLOW: list(VERBS)}
    for _, group, declared in _declared():
        groups.setdefault(group, []).extend(declared)
    return dict(sorted(groups.items(), key=lambda item: item[0].rank))  # stable: families keep their order


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The full parser, or with `only` just that verb's: a job then runs its own verb's
    argument set-up and not every family's."""
    parser = argparse.ArgumentParser(
        prog="xlt", description=__doc__.splitlines()[0], epilog="`xlt VERB --help` lists a verb's flags."
    )
    parser.add_argument(
        "--version",
        action="version",
        version=version_string(),
        help="print the xlt version (and git commit of a checkout) and exit",
    )
    sub = parser.add_subparsers(
        dest="verb", required=True, metavar="VERB", help="one of the verbs below, listed by what they are for"
    )
    known, groups = verbs(), verb_groups()
    heading_of = {name: group.title for group, names in groups.items() for name in names}
    for name, verb in known.items():
        if only is not None and name != only:
            continue
        # no help=: the verb is listed under its heading below instead
        p = sub.add_parser(name, description=f"{verb.help} [{heading_of[name]}]")
        verb.add_arguments(p)
        p.set_defaults(_run=verb.run)
    if only is None:
        for group, names in groups.items():
            heading = parser.add_argument_group(group.title, group.description)
            # help lines only: in the heading's list, not among the parser's arguments
            heading._group_actions.extend(
                argparse.Action([], dest=name, metavar=name, help=known[name].help) for name in names
            )
    return parser


def main(argv: list[str] | None = None) -> int:
    if argv is None and os.environ.get(VARIABLE):  # `xlt job-server` runs this call (xlt.jobserver)
        status = run_remote(sys.argv[1:])
        if status is not None:
            return status
    console.configure()  # before any library prints: plain lines when the output is a log file
    metrics.JOB_STARTED = time.time()  # a job's wall_s is the whole job's, not the metrics file's lifetime
    argv = list(sys.argv[1:] if argv is None else argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s", stream=sys.stderr)
    console.print_library_records_once()
    known = verbs()
    if not argv or argv[0] not in known:  # --help, or a broken family's verb: say which family is left out, and why
        for problem in registry.usable()[1]:
            print(f"xlt: {problem}", file=sys.stderr)
    args = build_parser(argv[0] if argv and argv[0] in known else None).parse_args(argv)  # exits on --help/--version
    metrics.JOB_ARGS, metrics.JOB_ARGV = args, argv  # for the run manifest (xlt.core.manifest)
    print("rerun: xlt " + shlex.join(argv), file=sys.stderr, flush=True)
    try:
        status = args._run(args)  # a verb that finds what it checks failing returns its exit status
    except (XltError, FileNotFoundError) as err:
        print(f"xlt {args.verb}: error: {err}", file=sys.stderr)
        return 2
    if "torch" in sys.modules:  # a job that ran a model: on how many CPU threads (rule threads: -> OMP_NUM_THREADS)
        print(f"torch threads: {sys.modules['torch'].get_num_threads()}", file=sys.stderr)
    return status if isinstance(status, int) and not isinstance(status, bool) else 0


def job_server(args: argparse.Namespace) -> int:
    """`xlt job-server`: its forks run this module's `main`."""
    if bool(args.command) == (args.beside is not None):
        raise XltError("give a command (after --) or --beside PID, not both")
    return jobserver.serve(args.command, main, args.hf_cache, args.stats, args.beside)


def _job_server_arguments(p):
    p.add_argument(
        "--hf-cache",
        default=None,
        help="the Hugging Face cache the jobs read (the workflow's resources/hf, e.g. rehearsal/resources/hf)",
    )
    p.add_argument("--stats", default=None, help="TSV file: each job's verb, run id, CPU and wall seconds")
    p.add_argument(
        "--beside",
        type=int,
        default=None,
        metavar="PID",
        help="no command: serve the `xlt` calls of process PID until it ends (the Snakefile's local runs); "
        "prints the socket's path for XLT_JOB_SERVER",
    )
    p.add_argument(
        "command",
        nargs="*",
        help="the command whose `xlt` calls the server runs (after --), e.g. -- snakemake --cores 2",
    )


VERBS = {  # the cli's own, under the workflow heading
    "job-server": Verb(
        "xlt.cli:job_server",
        "Run a command (snakemake) whose `xlt` jobs fork from one process that has imported "
        "torch and transformers once (the rehearsal's hundreds of small jobs)",
        _job_server_arguments,
    )
}


if __name__ == "__main__":
    sys.exit(main())
