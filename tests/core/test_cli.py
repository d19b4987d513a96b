"""The `xlt` command line: verbs are collected cheaply, a light job stays light, `xlt --help`
lists them by what they are for, and every command the workflow runs parses."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from helpers.rule_files import rule_files


def test_xlt_verb_builds_only_its_own_parser():
    """A job builds its own verb's parser only; the full parser has every registered verb."""
    from xlt.cli import build_parser, verbs

    assert build_parser("aggregate")._subparsers._group_actions[0].choices.keys() == {"aggregate"}
    assert build_parser()._subparsers._group_actions[0].choices.keys() == verbs().keys()


def test_a_light_xlt_job_never_imports_torch():
    code = (
        "import sys; from xlt.cli import build_parser; build_parser('aggregate').parse_args(['aggregate', 'a.json', "
        "'--out', 'b.csv']); print('torch' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_collecting_the_verbs_imports_nothing_heavy():
    code = (
        "import sys; from xlt.cli import verbs; verbs(); "
        "print(sorted(m for m in ('torch', 'transformers', 'pandas', 'matplotlib') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


HEAVY = ("torch", "transformers", "pandas", "matplotlib", "sklearn")


def test_building_every_verbs_parser_imports_nothing_heavy():
    """`xlt --help` builds the full parser: it must not import torch & co. (4.4 s before)."""
    code = (
        "import sys; from xlt.cli import build_parser; build_parser(); "
        f"print(sorted(m for m in {HEAVY!r} if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_the_full_parser_imports_no_verbs_module():
    """`xlt --help` imports the modules that declare verbs, none of those that run them (a verb
    declared and run in one module, as `job-server` in xlt.cli, aside)."""
    code = (
        "import sys, json; from xlt.cli import build_parser, verbs; build_parser(); "
        "print(json.dumps({name: verb.target for name, verb in verbs().items()})); "
        "print(json.dumps(sorted(m for m in sys.modules if m.startswith('xlt'))))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    targets, imported = (json.loads(line) for line in out.stdout.splitlines())
    declared_in = {target.partition(":")[0] for target in targets.values()} - {"xlt.cli"}
    running = sorted(declared_in & set(imported))
    assert not running, f"`xlt --help` imported verbs' modules: {running}"


def test_every_verb_names_a_function_that_exists():
    import inspect

    from xlt.cli import verbs

    for name, verb in verbs().items():
        function = verb.function()
        assert callable(function) and list(inspect.signature(function).parameters) == ["args"], name


def test_a_verb_names_its_function_by_dotted_path():
    from xlt.core.verbs import Verb

    with pytest.raises(ValueError, match="give the function as 'xlt.package.module:function'"):
        Verb("xlt.core.io.read_json", "help", lambda p: None)


def test_every_flag_of_every_verb_has_help_text():
    import argparse

    from xlt.cli import build_parser

    parser = build_parser()
    verbs = parser._subparsers._group_actions[0].choices
    missing = [
        f"{name} {action.option_strings or action.dest}"
        for name, sub in verbs.items()
        for action in sub._actions
        if not isinstance(action, argparse._HelpAction) and not action.help
    ]
    missing += [
        str(action.option_strings)
        for action in parser._actions
        if not isinstance(action, (argparse._HelpAction, argparse._SubParsersAction)) and not action.help
    ]
    assert not missing, "flags without help text: " + ", ".join(missing)


def test_xlt_version_prints_the_version():
    from xlt import __version__
    from xlt.core.version import version_string

    out = subprocess.run([sys.executable, "-m", "xlt.cli", "--version"], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == version_string()
    assert out.stdout.startswith(f"xlt {__version__}")


@pytest.mark.slow
def test_xlt_plot_names_the_kinds_for_an_unknown_kind(tmp_path):
    table = tmp_path / "t.csv"
    table.write_text("metric,value\n")
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "xlt.cli",
            "plot",
            "no_such_kind",
            "--table",
            str(table),
            "--out",
            str(tmp_path / "p.png"),
        ],
        capture_output=True,
        text=True,
    )
    assert out.returncode == 2
    assert "unknown plot kind 'no_such_kind'" in out.stderr and "accuracy-vs-depth" in out.stderr


def help_sections(text: str) -> dict[str, list[str]]:
    """`xlt --help`'s headings, each with the names its entries start with (an entry: two spaces,
    a name, then two spaces or the line's end; a heading's description has single spaces)."""
    sections, heading = {}, None
    for line in text.splitlines():
        if line and not line.startswith(" ") and line.endswith(":"):
            heading = line[:-1]
            sections[heading] = []
        elif heading and (entry := re.match(r"  ([a-z][a-z0-9-]*)(  |$)", line)):
            sections[heading].append(entry.group(1))
    return sections


def test_help_lists_every_verb_once_under_its_heading():
    from xlt.cli import verb_groups, verbs

    out = subprocess.run(
        [sys.executable, "-m", "xlt.cli", "--help"],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "COLUMNS": "100"},
    )
    sections = help_sections(out.stdout)
    titles = [group.title for group in verb_groups()]
    assert [title for title in sections if title in titles] == titles  # every heading, in rank order
    listed = [name for title in titles for name in sections[title]]
    assert sorted(listed) == sorted(verbs())  # every verb under a heading, none twice
    assert not set(verbs()) & {name for title, names in sections.items() if title not in titles for name in names}
    # the generic-sounding verbs say whose they are
    assert {"finetune", "evaluate", "prefix-states"} <= set(sections["freeze_depth family"])
    assert "dual-prefix-states" in sections["dual family"] and "plan" in sections["cost"]


def test_headings_come_in_rank_order_and_every_verb_module_names_one():
    import importlib

    from xlt.cli import verb_groups, verb_modules
    from xlt.core.verbs import VerbGroup

    assert all(isinstance(importlib.import_module(m).GROUP, VerbGroup) for m in verb_modules())
    ranks = [group.rank for group in verb_groups()]
    assert ranks == sorted(ranks) and len({g.title for g in verb_groups()}) == len(ranks)


def test_a_verbs_own_help_names_its_heading():
    out = subprocess.run(
        [sys.executable, "-m", "xlt.cli", "evaluate", "--help"],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "COLUMNS": "200"},
    )
    assert "[freeze_depth family]" in out.stdout


def rule_verbs() -> set[str]:
    """Every verb a rule's shell command calls."""
    return set(re.findall(r'"xlt ([a-z][a-z0-9-]*)', "".join(p.read_text() for p in rule_files())))


def test_every_verb_a_rule_calls_exists():
    from xlt.cli import verbs

    assert rule_verbs() and rule_verbs() <= set(verbs()), rule_verbs() - set(verbs())


SHELL = {">", ">>", "2>&1", "|", "&&", ";"}  # where a rule's command line ends and its redirection starts


def with_prefix_stores(work: Path) -> str:
    """The demo config with both shared frozen-prefix stores on: the prefix-states rules' commands."""
    config = yaml.safe_load((work / "config.yaml").read_text())
    config["freeze_depth"].update(
        depths=[-1, 0, 7], cache_frozen_prefix=True, allow_mixed_caching=True, prefix_states={"shared": True}
    )
    config["dual"].update(
        freeze_depths=[-1, 6], cache_frozen_prefix=True, allow_mixed_caching=True, prefix_states={"shared": True}
    )
    (work / "stores.yaml").write_text(yaml.safe_dump(config))
    return "stores.yaml"


@pytest.mark.slow
def test_every_xlt_command_a_dry_run_plans_parses(tmp_path, dry_runs):
    """Each `xlt ...` command line of a dry run (the demo, the paper config, both prefix stores on)
    parses with its verb's parser: the rules' templates and the plans' arguments fit the CLI."""
    import contextlib
    import io
    import shlex

    from helpers.workflow_runs import snakemake, workflow_copy

    from xlt.cli import build_parser

    work = workflow_copy(tmp_path)
    called, failed = set(), []
    stores = snakemake(work, "-n", "-p", "--cores", "1", "--configfile", with_prefix_stores(work))
    outputs = {
        "config.yaml": dry_runs.output("config.yaml"),
        "config/paper.yaml": dry_runs.output("config/paper.yaml"),
        "stores.yaml": stores.stdout + stores.stderr,
    }  # the demo's and the paper's dry runs: the session's
    for configfile, output in outputs.items():
        for line in output.splitlines():
            if not line.startswith("Shell command: xlt "):
                continue
            argv = shlex.split(line.removeprefix("Shell command: xlt "))
            argv = argv[: next((i for i, arg in enumerate(argv) if arg in SHELL), len(argv))]  # without `> log`
            called.add(argv[0])
            stderr = io.StringIO()
            try:
                with contextlib.redirect_stderr(stderr):
                    build_parser(argv[0]).parse_args(argv)
            except SystemExit:
                failed.append(f"{configfile}: xlt {shlex.join(argv)}\n  {stderr.getvalue().strip()}")
    assert not failed, "\n".join(failed[:10])
    assert called == rule_verbs()  # the three configs reach every rule's verb
