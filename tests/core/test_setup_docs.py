"""The README's set-up and test commands, the Makefile, .ci/run and the cluster profile agree; the
README and docs/ name only commands, targets, sections and files that exist."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

from helpers.family_folders import documented_family

REPO = Path(__file__).resolve().parents[2]
README = (REPO / "README.md").read_text()
DOCS = {path: path.read_text() for path in sorted((REPO / "docs").glob("*.md"))}
README_MAX_WORDS = 1500


def _make_dry_run(target: str) -> list[str]:
    # under `make test` the outer make's MAKEFLAGS/MAKELEVEL reach this make, which then prints
    # "make[1]: Entering directory" lines; the recipe is what a user's top-level make would run
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MAKELEVEL", "MFLAGS", "MAKEOVERRIDES")}
    out = subprocess.run(
        ["make", "-n", "-B", "--no-print-directory", target],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return out.stdout.splitlines()


def test_make_demo_and_make_test_set_up_then_run_the_readme_commands():
    assert "make demo" in README and "make test" in README
    setup = [
        "python3 -m venv .venv",
        ".venv/bin/pip install torch==2.13.0",
        '.venv/bin/pip install -e ".[workflow,test,monitor]"',
        "touch .venv/bin/snakemake",
    ]
    assert _make_dry_run("test") == setup + [". .venv/bin/activate && python -m pytest -q -n 2"]
    assert _make_dry_run("demo") == setup + [". .venv/bin/activate && snakemake --cores 2"]
    # the edit loop's subset: the README's own words for it
    assert _make_dry_run("test-fast") == setup + ['. .venv/bin/activate && python -m pytest -q -n 2 -m "not slow"']
    assert "make test-fast" in README
    # CI's numerics step: the numerics tests under the kernels of CPUs without AVX-512 and the portable ones
    numerics = "python -m pytest -q -n 2 -m numerics || exit 1; done"
    assert _make_dry_run("test-numerics") == setup + [
        f". .venv/bin/activate && for cpu in default avx2; do ATEN_CPU_CAPABILITY=$cpu {numerics}"
    ]
    assert "make test-numerics" in README
    # the manual steps below the two commands are the same ones
    for line in ("python3 -m venv .venv", "pip install torch==2.13.0", 'pip install -e ".[workflow,test,monitor]"'):
        assert line in README


def test_ci_runs_the_readme_commands_literally_and_asks_for_slurm():
    test_section = README.split("## Test", 1)[1]
    command = re.search(r"```bash\n(.+)\n```", test_section).group(1)
    ci = (REPO / ".ci" / "run").read_text().splitlines()
    # `make test` runs the README's test command (checked above), so CI runs what a user runs
    assert command == "python -m pytest -q -n 2"
    assert "make test" in ci and "if ! make demo; then" in ci
    assert ci.index("export XLT_TEST_SLURM=1") < ci.index("make test")
    assert ci.index("ruff check .") < ci.index("make test-numerics") < ci.index("make test")
    # nothing else runs pytest or the demo behind the two commands' backs
    assert not [line for line in ci if "pytest" in line and not line.lstrip().startswith("#")]
    assert not [line for line in ci if line.strip().startswith("snakemake --cores")]


def _headings(text: str) -> set[str]:
    fenced = re.sub(r"```.*?```", "", text, flags=re.DOTALL)  # a `# comment` in a code block is no heading
    return {line.lstrip("#").strip() for line in fenced.splitlines() if line.startswith("#")}


def test_readme_section_references_exist():
    """`README, "Section"` and `docs/page.md, "Section"` in comments, configs and docs name a
    heading of that page."""
    texts = [
        README,
        *DOCS.values(),
        (REPO / "config.yaml").read_text(),
        (REPO / "Makefile").read_text(),
        (REPO / ".ci" / "run").read_text(),
        (REPO / "Snakefile").read_text(),
        *(path.read_text() for path in (REPO / "config").glob("*.yaml")),
        (REPO / "profiles" / "cluster" / "config.yaml").read_text(),
        *(path.read_text() for path in (REPO / "workflow").rglob("*.smk")),
        *(path.read_text() for path in (REPO / "src").rglob("*.smk")),
        *(path.read_text() for path in (REPO / "src").rglob("*.py")),
    ]
    cited = {(page, name) for text in texts for page, name in re.findall(r'(README|docs/[\w-]+\.md), "([^"]+)"', text)}
    missing = []
    for page, name in sorted(cited):
        path = REPO / ("README.md" if page == "README" else page)
        if not path.exists() or name not in _headings(path.read_text()):
            missing.append(f"{page}, {name!r}")
    assert not missing, f"sections cited but missing: {missing}"
    assert ("docs/cluster.md", "Resources") in cited  # config/paper.yaml's, so the pattern is live


def test_profile_comment_and_readme_agree_on_how_profile_cluster_is_found():
    """The profile's comment and docs/cluster.md (where the README's cluster notes live) say the same."""
    profile = (REPO / "profiles" / "cluster" / "config.yaml").read_text()
    cluster_doc = DOCS[REPO / "docs" / "cluster.md"]
    assert "NOT found" not in profile
    assert (REPO / "cluster").resolve() == (REPO / "profiles" / "cluster").resolve()
    assert "snakemake --profile cluster" in README
    for text in (profile, cluster_doc):
        assert "snakemake --profile cluster" in text.replace("  ", " ") or "`--profile cluster`" in text
        assert "exists as a path in the working" in text.replace("\n#", "").replace("\n ", " ").replace("  ", " ")


def _code(text: str) -> list[str]:
    """The code of a Markdown text: its fenced blocks and its inline code spans."""
    blocks = re.findall(r"```[^\n]*\n(.*?)```", text, flags=re.DOTALL)
    rest = re.sub(r"```.*?```", "", text, flags=re.DOTALL)
    return blocks + re.findall(r"`([^`\n]+)`", rest)


def _named(pattern: str) -> dict[str, set[str]]:
    """name -> the Markdown pages (README.md, docs/*.md) whose code names it."""
    found: dict[str, set[str]] = {}
    for path, text in [(REPO / "README.md", README), *DOCS.items()]:
        for code in _code(text):
            for name in re.findall(pattern, code):
                found.setdefault(name, set()).add(str(path.relative_to(REPO)))
    return found


def test_every_xlt_verb_and_make_target_the_docs_name_exists():
    from xlt.cli import verbs

    named_verbs = _named(r"(?<![\w./-])xlt ([a-z][a-z-]*)")
    named_targets = _named(r"(?<![\w./-])make ([a-z][\w-]*)")
    # the pages do name commands: a pattern that finds nothing would check nothing
    assert {"prefetch", "plan", "rehearse", "calibrate", "paper-delta", "config"} <= set(named_verbs)
    assert {"demo", "test", "rehearse", "install"} <= set(named_targets)
    # the walk-through family's verbs exist where the doc writes its files (tests/core/test_family.py runs them)
    documented = set(re.findall(r'"([a-z][a-z-]*)": Verb\(', documented_family()["newfam/commands.py"]))
    assert documented, "the walk-through family's commands.py declares no verb"
    unknown = {verb: pages for verb, pages in named_verbs.items() if verb not in {*verbs(), *documented}}
    assert not unknown, f"xlt verbs named in the docs that do not exist: {unknown}"
    makefile = (REPO / "Makefile").read_text()
    targets = set(re.findall(r"^([\w-]+):", makefile, flags=re.MULTILINE))
    missing = {target: pages for target, pages in named_targets.items() if target not in targets}
    assert not missing, f"make targets named in the docs but not in the Makefile: {missing}"


def _links(text: str) -> list[str]:
    """Relative link and image targets of a Markdown text (no URLs, no in-page anchors)."""
    text = re.sub(r"```.*?```", "", text, flags=re.DOTALL)
    targets = [t.split("#", 1)[0] for t in re.findall(r"\]\(([^)\s]+)\)", text)]
    return [t for t in targets if t and not re.match(r"[a-z]+:", t)]


def test_readme_links_every_docs_page_once_and_every_link_resolves():
    links = _links(README)
    broken = [link for link in links if not (REPO / link).exists()]
    assert not broken, f"README links to missing files: {broken}"
    docs_links = [link for link in links if link.startswith("docs/") and link.endswith(".md")]
    pages = [str(path.relative_to(REPO)) for path in DOCS]
    assert sorted(docs_links) == sorted(pages), "every docs/*.md page is linked exactly once from the README"


def test_every_relative_link_in_docs_resolves():
    broken = {
        str(path.relative_to(REPO)): link
        for path, text in DOCS.items()
        for link in _links(text)
        if not (path.parent / link).exists()
    }
    assert not broken, f"docs pages link to missing files: {broken}"


def test_readme_is_short_and_shows_a_figure():
    words = len(README.split())
    assert words <= README_MAX_WORDS, (
        f"README.md has {words} words (at most {README_MAX_WORDS}: reference goes in docs/)"
    )
    images = re.findall(r"!\[[^\]]*\]\(([^)\s]+)\)", README)
    assert images, "README.md embeds no image"
    for image in images:
        path = REPO / image
        assert path.is_file(), f"README image {image} is missing"
        assert path.stat().st_size < 200_000, f"README image {image} is over 200 KB"
