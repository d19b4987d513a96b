"""The tests mirror the package: a test file sits under tests/<path>/ where src/xlt/<path> is the
package of the module it tests, so a module's tests are found where the module is."""

from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
PACKAGE = TESTS.parent / "src" / "xlt"
# test folders with no package of their own: they test what spans the package or lies outside it
CROSS_CUTTING = {
    "bad_inputs": "bad configs, data and models fed to every verb (their fixtures in its subfolders)",
    "benchmarks": "the scripts in benchmarks/, outside the package",
    "slurm": "the workflow through a real SLURM and the cluster profile (profiles/cluster)",
    "workflow": "the Snakefile and workflow/rules, end to end",
}


def test_no_test_file_sits_at_the_top_of_tests():
    top = sorted(path.name for path in TESTS.glob("test_*.py"))
    assert not top, f"move these under tests/<package>/, mirroring src/xlt/<package>/: {top}"


def test_every_test_folder_mirrors_a_package_or_is_listed_as_cross_cutting():
    folders = {path.parent.relative_to(TESTS) for path in TESTS.rglob("test_*.py")} - {Path(".")}
    orphans = sorted(
        str(folder)
        for folder in folders
        if folder.parts[0] not in CROSS_CUTTING and not (PACKAGE / folder / "__init__.py").is_file()
    )
    assert not orphans, f"test folders without a package src/xlt/<folder>: {orphans}"


def test_every_cross_cutting_folder_exists_and_has_no_package():
    for name in CROSS_CUTTING:
        assert any((TESTS / name).rglob("test_*.py")), f"tests/{name} holds no tests: drop it from CROSS_CUTTING"
        assert not (PACKAGE / name).is_dir(), f"src/xlt/{name} exists: tests/{name} mirrors it, not cross-cutting"


def test_shared_helpers_hold_no_tests():
    assert not list((TESTS / "helpers").glob("test_*.py"))
