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
