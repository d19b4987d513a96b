"""Which tests share a pytest-xdist worker (`make test` runs two, `--dist loadgroup`).

A fixture wider than a function is built once per test process, so under xdist once per worker
that needs it. Tests that share an expensive one are therefore sent to one worker, decided by
the fixtures each test uses, never by file names (tests added anywhere are grouped the same way):

- a module-scoped fixture keeps its module's tests together (each such fixture builds models,
  runs sweeps or subprocesses; the module is the fixture's own scope);
- a session fixture in ONE_WORKER keeps every test that uses it together, on the worker that
  builds it: the real SLURM (machine-wide: /etc/slurm, its daemons and a lock held for the whole
  session, so two workers asking for it would wait on each other) and the tiny sweep that runs
  through it; in that group the tests that run beside the sweep (they ask for tiny_sweep_started:
  SLURM tests that mostly wait) come before those that wait for it (tiny_sweep). Cheap session
  fixtures (a dry run, the 2-layer demo model) are built by each
  worker that uses them instead, which spreads their tests over both workers.

Tests that share two groups merge them. Groups with a slow test are handed out first (the
scheduler starts a group where it first appears), so the long ones start while the quick tests
fill the other worker.

The groups reach xdist's scheduler in a file, not as `xdist_group` marks: xdist 3.8's loadgroup
appends the group to each test's node id, which pytest 9.2's structured node ids ignore, so the
marks silently stop grouping (pytest-xdist issue 1386). Each worker writes {node id: group} to the
file the controller names in GROUPS_FILE (both write the same, as they collect the same tests);
`Scheduling` hands out a group as one unit, and other tests one by one.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from xdist.scheduler import LoadScopeScheduling

GROUPS_FILE = "XLT_TEST_WORKER_GROUPS"  # set by the controller (conftest's pytest_configure) for its workers

# session fixture -> the worker group of the tests that use it; tiny_sweep asks for slurm_cluster
# itself (request.getfixturevalue) when the real-SLURM tests are on, so the two share a group
ONE_WORKER = {
    "slurm_cluster": "slurm-and-tiny-sweep",
    "tiny_sweep_started": "slurm-and-tiny-sweep",
    "tiny_sweep": "slurm-and-tiny-sweep",
}
WAITS = "tiny_sweep"  # a test that waits for the sweep runs after its group's tests that run beside it
SCOPES_OF_ONE_MODULE = ("module", "class")


def _keys(item: pytest.Item) -> set[str]:
    """The groups this test needs to share a worker with, one for each wide fixture it uses."""
    keys = set()
    for name in item.fixturenames:
        if name in ONE_WORKER:
            keys.add(ONE_WORKER[name])
            continue
        defs = item._fixtureinfo.name2fixturedefs.get(name)
        if defs and defs[-1].scope in SCOPES_OF_ONE_MODULE:
            keys.add(item.nodeid.split("::")[0])
    return keys


def assign(items: list[pytest.Item], groups_file: str | None) -> None:
    """In an xdist worker (`groups_file` given): write {node id: group} of the tests that share a
    wide fixture to `groups_file`, and put the longest work first: the SLURM and tiny-sweep group,
    then the groups and single tests with a slow test, then the rest, each part in collection order
    (the scheduler hands out a group where its first test is). Every worker collects, so the order
    is the same on each."""
    if not groups_file:
        return
    parent: dict[str, str] = {}

    def root(key: str) -> str:
        while parent.setdefault(key, key) != key:
            key = parent[key]
        return key

    item_keys = [sorted(_keys(item)) for item in items]
    for keys in item_keys:
        for key in keys[1:]:
            parent[root(key)] = root(keys[0])
    groups = [root(keys[0]) if keys else None for keys in item_keys]
    written = Path(f"{groups_file}.{os.getpid()}")
    written.write_text(json.dumps({item.nodeid: group for item, group in zip(items, groups) if group}))
    written.replace(groups_file)  # whole, whichever worker writes last
    # 0: the SLURM and tiny-sweep group (minutes); 1: other groups or tests with a slow one; 2: the rest
    units = [group or item.nodeid for item, group in zip(items, groups)]
    rank = {unit: 2 for unit in units}
    for item, unit, keys in zip(items, units, item_keys):
        if set(keys) & set(ONE_WORKER.values()):
            rank[unit] = 0
        elif item.get_closest_marker("slow") or item.get_closest_marker("slurm"):
            rank[unit] = min(rank[unit], 1)
    order = sorted(range(len(items)), key=lambda i: (rank[units[i]], WAITS in items[i].fixturenames))
    items[:] = [items[i] for i in order]


class Scheduling(LoadScopeScheduling):
    """xdist's scope scheduling with the scopes of `assign`: a group of tests is one unit of work,
    any other test a unit of its own; units are handed out in the workers' collection order."""

    def __init__(self, config: pytest.Config, log=None):
        super().__init__(config, log)
        config.option.loadscopereorder = False  # keep assign's order: the longest work first
        self._groups: dict[str, str] | None = None

    def _split_scope(self, nodeid: str) -> str:
        if self._groups is None:  # first called once every worker has collected (and written the file)
            self._groups = json.loads(Path(os.environ[GROUPS_FILE]).read_text())
        return self._groups.get(nodeid, nodeid)
