"""The `xlt` command line: verbs are collected cheaply, and a light job stays light."""
import subprocess
import sys


def test_xlt_verb_builds_only_its_own_parser():
    """A job builds its own verb's parser only; the full parser has every registered verb."""
    from xlt.cli import build_parser, verbs

    assert build_parser("aggregate")._subparsers._group_actions[0].choices.keys() == {"aggregate"}
    assert build_parser()._subparsers._group_actions[0].choices.keys() == verbs().keys()


def test_a_light_xlt_job_never_imports_torch():
    code = ("import sys; from xlt.cli import build_parser; build_parser('aggregate').parse_args(['aggregate', 'a.json', "
            "'--out', 'b.csv']); print('torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_every_verb_module_keeps_heavy_imports_inside_functions():
    code = ("import sys; from xlt.cli import verbs; verbs(); "
            "print(sorted(m for m in ('torch', 'transformers', 'pandas', 'matplotlib') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


HEAVY = ("torch", "transformers", "pandas", "matplotlib", "sklearn")


def test_building_every_verbs_parser_imports_nothing_heavy():
    """`xlt --help` builds the full parser: it must not import torch & co. (4.4 s before)."""
    code = ("import sys; from xlt.cli import build_parser; build_parser(); "
            f"print(sorted(m for m in {HEAVY!r} if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_every_flag_of_every_verb_has_help_text():
    import argparse

    from xlt.cli import build_parser

    parser = build_parser()
    verbs = parser._subparsers._group_actions[0].choices
    missing = [f"{name} {action.option_strings or action.dest}"
               for name, sub in verbs.items() for action in sub._actions
               if not isinstance(action, argparse._HelpAction) and not action.help]
    missing += [str(action.option_strings) for action in parser._actions
                if not isinstance(action, (argparse._HelpAction, argparse._SubParsersAction)) and not action.help]
    assert not missing, "flags without help text: " + ", ".join(missing)


def test_xlt_version_prints_the_version():
    from xlt import __version__
    from xlt.core.version import version_string

    out = subprocess.run([sys.executable, "-m", "xlt.cli", "--version"], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == version_string()
    assert out.stdout.startswith(f"xlt {__version__}")


def test_xlt_plot_names_the_kinds_for_an_unknown_kind(tmp_path):
    table = tmp_path / "t.csv"
    table.write_text("metric,value\n")
    out = subprocess.run([sys.executable, "-m", "xlt.cli", "plot", "no_such_kind", "--table", str(table),
                          "--out", str(tmp_path / "p.png")], capture_output=True, text=True)
    assert out.returncode == 2
    assert "unknown plot kind 'no_such_kind'" in out.stderr and "accuracy-vs-depth" in out.stderr
