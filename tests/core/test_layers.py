"""The package's imports point one way: down a strict order of packages, and no module imports
itself back through others.

LAYERS below is that order, lowest first (docs/architecture.md's layer line says the same). A
module imports only from its own package or one listed before it; packages on one line of
LAYERS (evaluate and losses) are independent and import neither each other.
`xlt/__init__.py` holds only the version string and imports nothing, so anything may import
`xlt`. A subpackage not listed fails the test until someone gives it a place.

An import is any of: an import statement at module level or inside a function (a lazy import is
still a dependency), relative imports resolved; a string literal naming an xlt module
(`importlib.import_module("xlt.x.y")`, a verb's dotted path "xlt.x.y:main", a table of module
names, a logger's name, the module of a process started with `-m`); an f-string that
names a module of every family, `f"{registry.PACKAGE}.{family}.commands"`
(an import of that module of each registered family). `xlt.core.registry` is the one exception:
it is the loader that finds families by folder and checks each against the contract the bottom
layer declares (xlt.core.family); the shared layers that loop over the families call that
contract and import no family.

On that graph of modules the test fails on any cycle, inside a package or across packages.
"""

from __future__ import annotations

import ast
import re
from functools import cache
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src"
PACKAGE = SRC / "xlt"
MAX_LINES = 400

# Lowest first; a package imports only its own modules and those of the lines before its own.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("xlt", "xlt.core"),
    ("xlt.data",),
    ("xlt.evaluate", "xlt.losses"),
    ("xlt.analysis",),  # statistics over metrics files: paired tests, bootstrap intervals
    ("xlt.report",),  # tables and figures; aggregation adds analysis's intervals
    ("xlt.cost",),  # the plan's prices and the ledger, drawn with report's figure helpers
    ("xlt.frozen_prefix",),  # the frozen-prefix cache and store: only the families that cache one import it
    ("xlt.families",),
    ("xlt.rehearse",),
    ("xlt.jobserver",),  # forks each job from one process; the job runs what it is given (xlt.cli.main)
    ("xlt.cli",),  # `xlt VERB`: every layer's verbs, and `xlt job-server`
)

# The plugin loader: its f-string imports of `xlt.families.<name>.*` are the family contract.
PLUGIN_LOADER = "xlt.core.registry"

# Module cycles known and owned by another branch, each as its sorted members. The lead empties
# this list when that branch is merged; a listed cycle that no longer exists fails the test too.
DOTTED = re.compile(r"xlt(?:\.\w+)+(?::\w+)?")
FAMILY_FSTRING = re.compile(r"xlt\.families\.\*\.(\w+)")


def module_name(path: Path) -> str:
    parts = path.relative_to(SRC).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def is_module(name: str) -> bool:
    path = SRC / Path(*name.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def modules() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


@cache
def family_modules(tail: str) -> frozenset[str]:
    """`xlt.families.<name>.<tail>` of every family folder that has it."""
    folders = sorted(p for p in (PACKAGE / "families").iterdir() if (p / "plan.py").is_file())
    return frozenset(f"xlt.families.{p.name}.{tail}" for p in folders if is_module(f"xlt.families.{p.name}.{tail}"))


def fstring_modules(node: ast.JoinedStr) -> frozenset[str]:
    """The family modules an f-string names: `{...PACKAGE}` reads xlt.families, any other
    placeholder any family."""
    text = "".join(
        part.value
        if isinstance(part, ast.Constant)
        else ("xlt.families" if ast.unparse(part.value).split(".")[-1] == "PACKAGE" else "*")
        for part in node.values
    )
    match = FAMILY_FSTRING.fullmatch(text)
    return family_modules(match.group(1)) if match else frozenset()


def imports(path: Path) -> set[str]:
    """Every xlt module `path` imports, anywhere in the file, by statement, by name or by f-string."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out = set()
    tree = ast.parse(path.read_text(), filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module
            # `from xlt.x import y`: y may be a submodule (counted) or a name (its module counts)
            out.add(target)
            out.update(f"{target}.{alias.name}" for alias in node.names if is_module(f"{target}.{alias.name}"))
        elif name == PLUGIN_LOADER:
            continue
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and DOTTED.fullmatch(node.value):
            if is_module(target := node.value.partition(":")[0]):
                out.add(target)
        elif isinstance(node, ast.JoinedStr):
            out.update(fstring_modules(node))
    return {m for m in out if (m == "xlt" or m.startswith("xlt.")) and m != name}


@cache
def graph() -> dict[str, frozenset[str]]:
    return {module_name(path): frozenset(imports(path)) for path in modules()}


def layer(module: str) -> tuple[int, str]:
    """(rank in LAYERS, package) of `module`: its longest prefix listed there."""
    parts = module.split(".")
    for n in range(len(parts), 0, -1):
        prefix = ".".join(parts[:n])
        for rank, packages in enumerate(LAYERS):
            if prefix in packages:
                return rank, prefix
    raise KeyError(f"{module} has no layer: add its package to LAYERS in {__file__}")


def upward_imports(edges: dict[str, frozenset[str]]) -> list[str]:
    out = []
    for importer, imported in sorted((a, b) for a, deps in edges.items() for b in deps):
        (rank_a, package_a), (rank_b, package_b) = layer(importer), layer(imported)
        if rank_b > rank_a or (rank_b == rank_a and package_a != package_b and "xlt" not in (package_a, package_b)):
            out.append(f"{importer} ({package_a}) imports {imported} ({package_b})")
    return out


def cycles(edges: dict[str, frozenset[str]]) -> list[tuple[str, ...]]:
    """The strongly connected components of more than one module (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges.get(root, ()))))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                members = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    members.append(member)
                    if member == node:
                        break
                if len(members) > 1:
                    found.append(tuple(sorted(members)))
    return sorted(found)


def one_path(edges: dict[str, frozenset[str]], members: tuple[str, ...]) -> str:
    """A closed walk through a cycle's first member, for the failure message."""
    start, inside = members[0], set(members)
    previous = {start: None}
    queue = [start]
    while queue:
        node = queue.pop(0)
        for child in sorted(edges.get(node, ())):
            if child == start:
                walk = [node]
                while previous[walk[-1]] is not None:
                    walk.append(previous[walk[-1]])
                return " -> ".join([*reversed(walk), start])
            if child in inside and child not in previous:
                previous[child] = node
                queue.append(child)
    return " -> ".join(members)


def private_imports(path: Path) -> list[str]:
    """`from xlt.x import _name` where _name is no module: another module's private name."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.ImportFrom) and not node.level and (node.module or "").startswith("xlt"):
            for alias in node.names:
                if alias.name.startswith("_") and not alias.name.startswith("__"):
                    if not is_module(f"{node.module}.{alias.name}"):
                        out.append(f"{module_name(path)}:{node.lineno} imports {node.module}.{alias.name}")
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and DOTTED.fullmatch(node.value):
            module, _, attribute = node.value.partition(":")
            if attribute.startswith("_"):
                out.append(f"{module_name(path)}:{node.lineno} names {module}:{attribute}")
    return out


def test_every_module_has_a_layer():
    for path in modules():
        layer(module_name(path))


def test_no_import_goes_up_or_sideways():
    upward = upward_imports(graph())
    assert not upward, "imports against the order of LAYERS:\n" + "\n".join(upward)


def test_no_import_cycles():
    found = cycles(graph())
    assert not found, "import cycles:\n" + "\n".join(one_path(graph(), members) for members in found)


def test_no_private_names_imported_across_modules():
    found = [line for path in modules() for line in private_imports(path)]
    assert not found, "private names used outside their module (make them public or move them):\n" + "\n".join(found)


def test_the_checks_see_each_kind_of_import():
    """The graph holds statement, literal, dotted-path and registry f-string imports, so a cycle
    made of any of them is found."""
    edges = graph()
    assert "xlt.core.verbs" in edges["xlt.cli"]  # a statement
    assert "xlt.families.freeze_depth.commands" in edges["xlt.cli"]  # f"{registry.PACKAGE}.{family}.commands"
    tree = ast.parse('import importlib\nimportlib.import_module("xlt.core.io")\nVERB = "xlt.core.io:read_json"\n')
    named = sorted(n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and DOTTED.fullmatch(str(n.value)))
    assert named == ["xlt.core.io", "xlt.core.io:read_json"]
    made_up = {"a": frozenset({"b"}), "b": frozenset({"c"}), "c": frozenset({"a"}), "d": frozenset({"a"})}
    assert cycles(made_up) == [("a", "b", "c")]
    assert one_path(made_up, ("a", "b", "c")) == "a -> b -> c -> a"


def test_no_module_is_over_400_lines():
    long = [
        f"{path.relative_to(SRC)}: {n}" for path in modules() if (n := len(path.read_text().splitlines())) > MAX_LINES
    ]
    assert not long, f"modules over {MAX_LINES} lines:\n" + "\n".join(long)
