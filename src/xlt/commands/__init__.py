"""Transitional: verbs not yet moved into their family's commands.py."""
import importlib
import pkgutil

from xlt.cli import Verb

VERBS = {}
for _m in pkgutil.iter_modules(__path__):
    _mod = importlib.import_module(f"{__name__}.{_m.name}")
    VERBS[_m.name.replace("_", "-")] = Verb(_mod.HELP, _mod.add_arguments, _mod.run)
