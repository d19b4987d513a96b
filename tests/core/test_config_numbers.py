"""config_numbers.check_warmup: a warm-up in steps must end before a run counted in steps does,
wherever the two keys are set along the chain of `training` mappings the families merge."""

from __future__ import annotations

import pytest

from xlt.core.config_numbers import check_warmup
from xlt.core.errors import XltError


def test_a_nested_warm_up_is_checked_against_the_run_length_it_inherits():
    config = {"training": {"max_steps": 0}, "dual": {"training": {"max_steps": 500}, "distill": {"training": {}}}}
    config["dual"]["distill"]["training"]["warmup_steps"] = 499
    check_warmup(config)  # ends one step before the run does
    config["dual"]["distill"]["training"]["warmup_steps"] = 10000
    with pytest.raises(XltError) as err:
        check_warmup(config)
    assert str(err.value) == (
        "config error at dual.distill.training.warmup_steps: 10000 warm-up steps, the run is 500 steps "
        "(dual.training.max_steps); set dual.distill.training.warmup_steps within [0, 499] (0: warmup_ratio applies)"
    )


def test_a_task_in_a_list_is_named_by_its_index_and_an_epoch_counted_run_is_left_to_training():
    config = {
        "training": {"warmup_steps": 50},
        "monox": {"tasks": [{"training": {"max_steps": 2000}}, {"training": {"max_steps": 20}}]},
    }
    with pytest.raises(
        XltError, match=r"^config error at training.warmup_steps: 50 .* \(monox.tasks.1.training.max_steps\)"
    ):
        check_warmup(config)
    check_warmup({"training": {"warmup_steps": 10000, "max_steps": 0, "epochs": 0.01}})  # length known at training
