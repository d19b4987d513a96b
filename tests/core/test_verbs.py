"""What the verbs' parsers share (xlt.core.verbs): the run flags, declared once with one help
text each, and the KEY=VALUE argument type."""

import argparse
import ast
from pathlib import Path

import pytest

from xlt.core.verbs import (
    RUN_FLAGS,
    add_config_argument,
    add_metrics_out_argument,
    add_model_argument,
    add_run_arguments,
    key_value,
    key_values,
)

SRC = Path(__file__).resolve().parents[2] / "src" / "xlt"


def test_key_value_parses_each_item_to_its_pair():
    parser = argparse.ArgumentParser()
    parser.add_argument("--table", action="append", default=[], type=key_value("FAMILY=CSV", "dual=dual.csv"))
    args = parser.parse_args(["--table", "dual=results/dual.csv", "--table", "monox=a=b.csv"])
    assert args.table == [("dual", "results/dual.csv"), ("monox", "a=b.csv")]  # the first = splits


def test_key_values_is_a_repeatable_option_of_pairs_empty_when_not_given():
    parser = argparse.ArgumentParser()
    parser.add_argument("--table", **key_values("FAMILY=CSV", "dual=dual.csv"), help="a family's table")
    parser.add_argument("--split", **key_values("FAMILY=SPLIT", "dual=test"), help="a family's split")
    args = parser.parse_args(["--table", "dual=a.csv", "--table", "monox=b.csv"])
    assert (args.table, args.split) == ([("dual", "a.csv"), ("monox", "b.csv")], [])
    assert "--table FAMILY=CSV" in parser.format_help()


@pytest.mark.parametrize("item", ["dual", "=dual.csv", "dual="])
def test_key_value_without_both_sides_is_a_usage_error_naming_the_shape(item, capsys):
    parser = argparse.ArgumentParser(prog="xlt positive-control")
    parser.add_argument("--table", type=key_value("FAMILY=CSV", "dual=results/tables/dual.csv"))
    with pytest.raises(SystemExit) as exit_info:
        parser.parse_args(["--table", item])
    assert exit_info.value.code == 2
    assert f"argument --table: {item!r}: give FAMILY=CSV, e.g. dual=results/tables/dual.csv" in capsys.readouterr().err


def test_config_argument_one_wording_ended_by_what_the_verb_does_with_it():
    parser = argparse.ArgumentParser()
    add_config_argument(parser, "to plan")
    assert parser.parse_args(["--config", "c.yaml"]).config == "c.yaml"
    with pytest.raises(SystemExit):
        parser.parse_args([])  # required unless told otherwise
    optional = argparse.ArgumentParser()
    add_config_argument(optional, required=False)
    assert optional.parse_args([]).config is None
    helps = [action.help for each in (parser, optional) for action in each._actions if action.dest == "config"]
    assert helps == ["a workflow config (YAML) to plan", "a workflow config (YAML)"]


def test_model_and_metrics_out_arguments_one_wording_each():
    parser = argparse.ArgumentParser()
    add_model_argument(parser, "of the teacher")
    add_metrics_out_argument(parser, type=Path)
    args = parser.parse_args(["--model", "mbert", "--out", "m.json"])
    assert (args.model, args.out) == ("mbert", Path("m.json"))
    helps = {action.dest: action.help for action in parser._actions}
    assert (helps["model"], helps["out"]) == ("hub id or local directory of the teacher", RUN_FLAGS["--out-metrics"])


def test_run_arguments_defaults_and_help():
    parser = argparse.ArgumentParser()
    add_run_arguments(parser, "--device", "--run-id", "--axes", run_id_default="the --out directory's name")
    args = parser.parse_args([])
    assert (args.device, args.run_id, args.axes) == ("auto", None, "{}")
    helps = {action.option_strings[0]: action.help for action in parser._actions if action.option_strings[0] != "-h"}
    assert helps == {
        "--device": RUN_FLAGS["--device"],
        "--run-id": f"{RUN_FLAGS['--run-id']} (default: the --out directory's name)",
        "--axes": f"{RUN_FLAGS['--axes']} (default: none)",
    }


def test_run_id_without_a_default_is_required_and_derived_axes_default_to_none():
    parser = argparse.ArgumentParser()
    add_run_arguments(parser, "--run-id", "--axes", "--out-metrics", axes_default="the job's arguments")
    with pytest.raises(SystemExit):
        parser.parse_args(["--out-metrics", "m.json"])
    args = parser.parse_args(["--run-id", "r", "--out-metrics", "m.json"])
    assert (args.run_id, args.axes, args.out_metrics) == ("r", None, "m.json")


def test_an_unknown_run_flag_is_refused():
    with pytest.raises(ValueError, match="--run-name"):
        add_run_arguments(argparse.ArgumentParser(), "--run-name")


def test_only_add_run_arguments_declares_the_run_flags():
    """No command module declares --run-id, --axes, --out-metrics or --device itself."""
    found = []
    for path in SRC.rglob("*.py"):
        if path == SRC / "core" / "verbs.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Call)
                and getattr(node.func, "attr", None) == "add_argument"
                and any(isinstance(arg, ast.Constant) and arg.value in RUN_FLAGS for arg in node.args)
            ):
                found.append(f"{path.relative_to(SRC)}:{node.lineno}")
    assert not found, "declare these with xlt.core.verbs.add_run_arguments: " + ", ".join(found)


def test_every_verb_gives_each_run_flag_the_one_help_text():
    from xlt.cli import build_parser

    verbs = build_parser()._subparsers._group_actions[0].choices
    seen, other = set(), []
    for name, parser in verbs.items():
        for action in parser._actions:
            for flag in set(action.option_strings) & set(RUN_FLAGS):
                seen.add(flag)
                if not action.help.startswith(RUN_FLAGS[flag]):
                    other.append(f"xlt {name} {flag}: {action.help!r}")
    assert seen == set(RUN_FLAGS) and not other, other
