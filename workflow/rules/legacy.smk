# TRANSITIONAL (removed once every family reads its plan): names the unported rule files use.
import json

from xlt.core.plan import data_file, data_info as data_input
from xlt.core.train_args import train_flags
from xlt.families.freeze_depth import plan as _fd_plan


class _LegacyConfig:
    def __getattr__(self, name):

        for family in settings.FAMILIES:
            plan = settings.plan_module(family)
            if hasattr(plan, name):
                return getattr(plan, name)
        if name == "freeze_depth_runs":
            return _fd_plan.runs
        if name == "training_settings":
            return settings.training
        raise AttributeError(name)


xlt_config = _LegacyConfig()


def model_ref(name):
    from xlt.core.plan import model_ref as _ref

    return _ref(config, name)


def model_input(name):
    from xlt.core.plan import model_input as _input

    return _input(config, name)


def flags(family):
    return train_flags(settings.training(config, family))


FAMILY_TARGETS = []


def by_run_id(rows):
    return {row["run_id"]: row for row in rows}
