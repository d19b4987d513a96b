"""The package's layers point one way: a module imports only from its own layer or lower ones.

Layers, lowest first: core (0) <- data (1) <- evaluate, losses (2) <- analysis, report, cost (3)
<- families, rehearse (4) <- cli.py, jobserver.py (5). `xlt/__init__.py` holds only the version string and imports
nothing, so it sits at the bottom (0): anything may import `xlt`. A subpackage not listed here
fails the test until someone gives it a layer. Imports are collected at module level and inside
functions alike (a lazy import is still a dependency), relative imports resolved.
"""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src"
PACKAGE = SRC / "xlt"
MAX_LINES = 400

LAYERS = {
    "xlt": 0,
    "xlt.core": 0,
    "xlt.data": 1,
    "xlt.evaluate": 2,
    "xlt.losses": 2,
    "xlt.analysis": 3,
    "xlt.report": 3,
    "xlt.cost": 3,
    "xlt.families": 4,
    "xlt.rehearse": 4,
    "xlt.cli": 5,
    "xlt.jobserver": 5,
}

# (importer, imported package): upward imports that are unavoidable, at most three, each with its
# reason. An entry covers `imported` and every module under it. (Verbs collected by module name,
# as xlt.cli and settings.plan_module do with importlib, are no import statement and not checked.)
ALLOWED: set[tuple[str, str]] = set()
# (The cost ledger and the positive control used to import the families' plans; each family
# now declares its ledger rules and checks itself, and they loop over xlt.core.registry.)


def allowed(importer: str, imported: str) -> bool:
    return any(importer == a and (imported == b or imported.startswith(b + ".")) for a, b in ALLOWED)


def module_name(path: Path) -> str:
    parts = path.relative_to(SRC).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def layer(module: str) -> int:
    """The layer of `module`: its longest prefix in LAYERS."""
    parts = module.split(".")
    for n in range(len(parts), 0, -1):
        prefix = ".".join(parts[:n])
        if prefix in LAYERS:
            return LAYERS[prefix]
    raise KeyError(f"{module} has no layer: add its package to LAYERS in {__file__}")


def imports(path: Path) -> set[str]:
    """Every xlt module `path` imports, anywhere in the file."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
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
            for alias in node.names:
                if (SRC / Path(*f"{target}.{alias.name}".split("."))).with_suffix(".py").exists() or (
                    SRC / Path(*f"{target}.{alias.name}".split("."))
                ).is_dir():
                    out.add(f"{target}.{alias.name}")
    return {m for m in out if m == "xlt" or m.startswith("xlt.")}


def modules() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


def test_every_module_has_a_layer():
    for path in modules():
        layer(module_name(path))


def test_no_upward_imports():
    upward = []
    for path in modules():
        importer = module_name(path)
        for imported in sorted(imports(path)):
            if layer(imported) > layer(importer) and not allowed(importer, imported):
                upward.append(f"{importer} (layer {layer(importer)}) imports {imported} (layer {layer(imported)})")
    assert not upward, "upward imports:\n" + "\n".join(upward)


def test_allow_list_is_short_and_used():
    assert len(ALLOWED) <= 3
    for importer, imported in ALLOWED:
        path = SRC / Path(*importer.split("."))
        path = path / "__init__.py" if path.is_dir() else path.with_suffix(".py")
        used = [m for m in imports(path) if m == imported or m.startswith(imported + ".")]
        assert used, f"allow-list entry {importer} -> {imported} is no longer needed"


def test_no_cycles_between_core_modules():
    """Within the bottom layer two modules never import each other (heads <-> models was one)."""
    edges = {module_name(p): imports(p) for p in modules()}
    pairs = sorted(
        (a, b)
        for a, deps in edges.items()
        for b in deps
        if a < b and a in edges.get(b, ()) and layer(a) == layer(b) == 0
    )
    assert not pairs, f"modules that import each other: {pairs}"


def test_no_module_is_over_400_lines():
    long = [
        f"{path.relative_to(SRC)}: {n}" for path in modules() if (n := len(path.read_text().splitlines())) > MAX_LINES
    ]
    assert not long, f"modules over {MAX_LINES} lines:\n" + "\n".join(long)
