"""models.<name>.prompt reaches every job that embeds text with that model or one trained from it."""

import copy

from xlt.core import settings


def _jobs_with_prompt(config: dict, family: str) -> dict[str, list[list[str]]]:
    return {
        rule: [[str(a) for a in job.args] for job in jobs.values()]
        for rule, jobs in settings.plan_module(family).jobs(config).items()
    }


def test_prompt_is_passed_to_training_and_evaluation_alike():
    """Training and its dev selection see the same text as evaluation (it was evaluation only):
    train-dual, its prefix store and train-sbert get the prompt too."""
    config = copy.deepcopy(settings.load("config.yaml"))
    for spec in config["models"].values():
        spec["prompt"] = "query: "
    prompted = {
        "sbert": {"train_sbert", "eval_sbert"},
        "dual": {"train_dual", "prefix_states_dual", "tatoeba_dual", "mine"},
        "alignment": {"align_layers"},
    }
    for family, rules in prompted.items():
        if settings.family(config, family) is None:
            continue
        for rule, arg_lists in _jobs_with_prompt(config, family).items():
            for args in arg_lists:
                has = "--prompt" in args and args[args.index("--prompt") + 1] == "query: "
                assert has == (rule in rules), (family, rule, args)
    assert any(_jobs_with_prompt(config, family) for family in prompted)


def test_no_prompt_no_flag():
    config = settings.load("config.yaml")
    for family in ("sbert", "dual", "alignment"):
        if settings.family(config, family) is None:
            continue
        for arg_lists in _jobs_with_prompt(config, family).values():
            assert all("--prompt" not in args for args in arg_lists)
