"""A planned job is data (xlt.core.job_spec): its flags are rendered from its spec, and read back by
its verb's own parser they give the spec's values, for every job of the shipped configs."""

from __future__ import annotations

import argparse
import re
from dataclasses import fields
from pathlib import Path

import pytest

from xlt.core import settings
from xlt.core.errors import XltError
from xlt.core.job_spec import ON, JobSpec
from xlt.core.plan import shared_jobs
from xlt.core.train_args import TrainArgs, train_args_from
from xlt.cost.estimate import EVAL_BATCH

REPO = Path(__file__).resolve().parents[2]
CONFIGS = ("config.yaml", "config/paper.yaml")


def test_a_spec_renders_scalars_lists_repeats_and_switches_in_its_order():
    spec = JobSpec(
        "evaluate",
        [("model", "m"), ("data", ["a.jsonl", "b.jsonl"]), ("track_test", "de=x"), ("track_test", "fr=y")]
        + [("cache_frozen_prefix", ON), ("max_length", 64)],
    )
    assert spec.args == [
        "--model",
        "m",
        "--data",
        "a.jsonl",
        "b.jsonl",
        "--track-test",
        "de=x",
        "--track-test",
        "fr=y",
        "--cache-frozen-prefix",
        "--max-length",
        64,
    ]
    assert spec.all("track_test") == ["de=x", "fr=y"] and spec.all("data") == ["a.jsonl", "b.jsonl"]
    assert spec.get("max_length") == 64 and spec.get("seed", None) is None and spec.has("cache_frozen_prefix")
    assert list(spec.values()) == ["m", "a.jsonl", "b.jsonl", "de=x", "fr=y", ON, 64]
    with pytest.raises(XltError, match="sets no --seed"):
        spec.get("seed")


@pytest.mark.parametrize("value", [False, None])
def test_a_spec_refuses_an_unset_value_instead_of_rendering_it(value):
    with pytest.raises(ValueError, match="leave an unset switch out"):
        JobSpec("finetune", [("compile", value)])
    with pytest.raises(ValueError, match="no argparse dest"):
        JobSpec("finetune", [("--compile", "true")])


def test_training_settings_are_read_as_the_training_verbs_read_them():
    """No default repeated in the plan: a setting a job leaves out is TrainArgs' (the verbs' own
    default), a setting is converted as its flag is (the last of two wins), and a value the verb
    would refuse is refused before anything is planned."""
    assert JobSpec("finetune", [("model", "m"), ("freeze_depth", -1)]).train_args() == TrainArgs()
    given = JobSpec("finetune", [("batch_size", "8"), ("batch_size", 16), ("compile", "True"), ("epochs", 2)])
    assert given.train_args() == TrainArgs(batch_size=16, compile=True, epochs=2.0)
    with pytest.raises(XltError, match="max_steps: 'many' is no int"):
        JobSpec("finetune", [("max_steps", "many")]).train_args()
    with pytest.raises(XltError, match="choose one of linear, constant, cosine"):
        JobSpec("finetune", [("schedule", "steep")]).train_args()


def _planned(config: dict):
    """(family, rule, job) for every job the workflow runs from `config` (the rules' job_args)."""
    for rule, jobs in shared_jobs(config).items():
        for job in jobs.values():
            yield "shared", rule, job
    from xlt.report import sections

    for family in (*settings.FAMILIES, *settings.CHECKS):
        if settings.family(config, family) is None:
            continue
        for rule, jobs in sections.plan_module(family).jobs(config).items():
            for job in jobs.values():
                yield family, rule, job


def _rule_verbs() -> dict[tuple[str, str], str]:
    """(family, rule) -> the verb its shell line runs `{params.args}` with, from every rules file."""
    out = {}
    files = [*REPO.glob("workflow/rules/*.smk"), *REPO.glob("src/xlt/families/*/rules.smk")]
    for path in files:
        for block in re.split(r"\n(?=(?:local)?rule )", path.read_text()):
            rule = re.match(r"(?:local)?rule (\w+):", block)
            family = re.search(r'job_args\("(\w+)", ', block)
            verb = re.search(r"xlt ([\w-]+) \{params\.args\}", block)
            if rule and family and verb:
                out[family.group(1), rule.group(1)] = verb.group(1)
    return out


class _Parser(argparse.ArgumentParser):
    """A verb's parser that raises what it refuses (the test names the job)."""

    def error(self, message):
        raise ValueError(message)


def _parser(verb: str) -> argparse.ArgumentParser:
    from xlt.cli import verbs

    parser = _Parser(prog=f"xlt {verb}", exit_on_error=False, allow_abbrev=False)
    verbs()[verb].add_arguments(parser)
    return parser


def _expected(action: argparse.Action, values: list):
    """What `action` stores for the spec's `values` of its dest, each converted as its flag's text is."""

    def one(value):
        if value is ON:
            return True
        return action.type(str(value)) if action.type else str(value)

    if isinstance(action, argparse._AppendAction):
        return [*(action.default or []), *map(one, values)]
    last = values[-1]  # argparse keeps the last of a flag given twice
    if action.nargs in ("+", "*") or (isinstance(action.nargs, int) and action.nargs > 0):
        return [one(v) for v in (last if isinstance(last, (list, tuple)) else [last])]
    return one(last)


@pytest.mark.parametrize("config_file", CONFIGS)
def test_every_planned_jobs_flags_parse_back_to_its_spec(config_file):
    """A renamed flag, a flag its verb reads otherwise, a verb the rule does not run, or a training
    default the plan and the verb disagree on fails here instead of silently changing the plan."""
    config = settings.load(str(REPO / config_file))
    rule_verbs, parsers = _rule_verbs(), {}
    checked = 0
    for family, rule, job in _planned(config):
        spec = job.spec
        assert rule_verbs[family, rule] == spec.verb, f"{family}/{rule}: its rule runs `xlt {rule_verbs[family, rule]}`"
        parser = parsers.setdefault(spec.verb, _parser(spec.verb))
        try:
            parsed = parser.parse_args([str(a) for a in spec.args])
        except (argparse.ArgumentError, ValueError) as err:
            pytest.fail(f"{family}/{rule}/{job.run_id}: `xlt {spec.verb}` refuses {spec.args}: {err}")
        actions = {action.dest: action for action in parser._actions}
        dests = [dest for dest, _ in spec.settings]
        for dest in dict.fromkeys(dests):
            assert dest in actions, f"{family}/{rule}: `xlt {spec.verb}` has no setting {dest}"
            values = [value for d, value in spec.settings if d == dest]
            if len(values) > 1:  # given twice only where the verb collects every value
                assert isinstance(actions[dest], argparse._AppendAction), f"{family}/{rule}: {dest} given twice"
            assert getattr(parsed, dest) == _expected(actions[dest], values), f"{family}/{rule}/{job.run_id}: {dest}"
        if all(f.name in actions for f in fields(TrainArgs)):  # a training verb: the plan's TrainArgs are its
            assert spec.train_args() == train_args_from(parsed), f"{family}/{rule}/{job.run_id}"
        # the plan reads a job's --max-length at TrainArgs' default where the job sets none: the verb must
        # run with it too (a training verb's every TrainArgs setting is checked above)
        if "max_length" in actions:
            assert parsed.max_length == spec.train_args().max_length, f"`xlt {spec.verb}` --max-length default"
        # an evaluating job without --batch-size is planned (time and memory) at EVAL_BATCH
        if "batch_size" in actions and not spec.has("batch_size") and not spec.has("eval_batch_size"):
            if not all(f.name in actions for f in fields(TrainArgs)):
                assert parsed.batch_size == EVAL_BATCH, f"`xlt {spec.verb}` --batch-size default"
        if "freeze_depth" in actions and not spec.has("freeze_depth"):  # the plan: no setting freezes nothing
            assert actions["freeze_depth"].default in (-1, None), f"`xlt {spec.verb}` freezes by default"
        checked += 1
    assert checked > (100 if "paper" in config_file else 20)
